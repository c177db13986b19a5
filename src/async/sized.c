/* The _sized entry points of weft/async.h (docs/abi.md): each reads the
 * caller's config struct at the caller's size (core/abi.h) and makes the call
 * of its name.  The exported names without _sized are the implementations and
 * read this library's layout, which is the 1.0 layout while the asserts hold. */
#include "core/abi.h"
#include "weft/async.h"

_Static_assert(
    WEFT__ENDS_AT(weft_async_options, ndeps),
    "weft_async_options grew past its 1.0 layout: its old entry points must now read "
    "WEFT__SIZE_TO(weft_async_options, ndeps) bytes (docs/abi.md, \"Growing a config struct\")");

weft_status weft_async_with_sized(weft_executor *ex, weft_task_fn fn, void *arg,
                                  const weft_async_options *opt, size_t opt_size,
                                  weft_future **out) {
    WEFT__CONFIG_IN(weft_async_options, opt, opt_size);
    return weft_async_with(ex, fn, arg, opt, out);
}
