/* The _sized entry points of weft/observe.h (docs/abi.md): each reads the
 * caller's config struct at the caller's size (core/abi.h) and makes the call
 * of its name.  The exported names without _sized are the implementations and
 * read this library's layout, which is the 1.0 layout while the asserts hold. */
#include "core/abi.h"
#include "weft/observe.h"

_Static_assert(WEFT__ENDS_AT(weft_folded_options, per_worker),
               "weft_folded_options grew past its 1.0 layout: its old entry points must now read "
               "WEFT__SIZE_TO(weft_folded_options, per_worker) bytes (docs/abi.md, \"Growing a "
               "config struct\")");
_Static_assert(WEFT__ENDS_AT(weft_stats_config, interval_ms),
               "weft_stats_config grew past its 1.0 layout: its old entry points must now read "
               "WEFT__SIZE_TO(weft_stats_config, interval_ms) bytes (docs/abi.md, \"Growing a "
               "config struct\")");

weft_status weft_profiler_write_folded_sized(const weft_executor *ex,
                                             const weft_folded_options *opt, size_t opt_size,
                                             FILE *out) {
    WEFT__CONFIG_IN(weft_folded_options, opt, opt_size);
    return weft_profiler_write_folded(ex, opt, out);
}

weft_status weft_profiler_write_flame_svg_sized(const weft_executor *ex,
                                                const weft_folded_options *opt, size_t opt_size,
                                                FILE *out) {
    WEFT__CONFIG_IN(weft_folded_options, opt, opt_size);
    return weft_profiler_write_flame_svg(ex, opt, out);
}

weft_status weft_stats_start_sized(weft_executor *ex, const weft_stats_config *config,
                                   size_t config_size) {
    WEFT__CONFIG_IN(weft_stats_config, config, config_size);
    return weft_stats_start(ex, config);
}
