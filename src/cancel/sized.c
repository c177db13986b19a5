/* The _sized entry points of weft/cancel.h (docs/abi.md): each reads the
 * caller's config struct at the caller's size (core/abi.h) and makes the call
 * of its name.  The exported names without _sized are the implementations and
 * read this library's layout, which is the 1.0 layout while the asserts hold. */
#include "core/abi.h"
#include "weft/cancel.h"

_Static_assert(
    WEFT__ENDS_AT(weft_preempt_config, chain),
    "weft_preempt_config grew past its 1.0 layout: its old entry points must now read "
    "WEFT__SIZE_TO(weft_preempt_config, chain) bytes (docs/abi.md, \"Growing a config struct\")");

weft_status weft_preempt_install_sized(const weft_preempt_config *config, size_t config_size) {
    WEFT__CONFIG_IN(weft_preempt_config, config, config_size);
    return weft_preempt_install(config);
}
