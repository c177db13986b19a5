/* The _sized entry points of weft/async.h (docs/abi.md): each reads the
 * caller's config struct at the caller's size (core/abi.h) and makes the call
 * of its name.  The exported names without _sized are the implementations and
 * read this library's layout, which is the 1.0 layout while the asserts hold. */
#include "async/async.h"
#include "core/abi.h"
#include "weft/async.h"

_Static_assert(
    WEFT__ENDS_AT(weft_async_options, numa_node),
    "weft_async_options grew: check that the exported weft_async_with still reads the 1.0 "
    "layout and move this assert to the new last field (docs/abi.md, \"Growing a config struct\")");

weft_status weft_async_with_sized(weft_executor *ex, weft_task_fn fn, void *arg,
                                  const weft_async_options *opt, size_t opt_size,
                                  weft_future **out) {
    /* NULL on every refusal, a bad options tail included (as weft_async). */
    if (out) *out = NULL;
    WEFT__CONFIG_IN(weft_async_options, opt, opt_size);
    return weft__async_with(ex, fn, arg, opt, out);
}

/* The exported name of 1.0's binaries: the 1.0 layout (up to ndeps). */
weft_status weft_async_with(weft_executor *ex, weft_task_fn fn, void *arg, const weft_async_options *opt,
                            weft_future **out) {
    return weft_async_with_sized(ex, fn, arg, opt, WEFT__SIZE_TO(weft_async_options, ndeps), out);
}
