/* The _sized entry points of weft/gpu.h (docs/abi.md): each reads the
 * caller's config struct at the caller's size (core/abi.h) and makes the call
 * of its name.  The exported names without _sized are the implementations and
 * read this library's layout, which is the 1.0 layout while the asserts hold. */
#include "core/abi.h"
#include "weft/gpu.h"

_Static_assert(
    WEFT__ENDS_AT(weft_gpu_config, emulator_memory),
    "weft_gpu_config grew past its 1.0 layout: its old entry points must now read "
    "WEFT__SIZE_TO(weft_gpu_config, emulator_memory) bytes (docs/abi.md, \"Growing a config struct\")");

weft_gpu_device *weft_gpu_open_sized(const weft_gpu_config *config, size_t config_size,
                                     weft_status *err) {
    weft_gpu_config c;
    if (config) {
        weft_status st = weft__config_read(&c, sizeof c, config, config_size, "weft_gpu_config");
        if (st) {
            if (err) *err = st;
            return NULL;
        }
        config = &c;
    }
    return weft_gpu_open(config, err);
}
