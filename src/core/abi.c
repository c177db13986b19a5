/* Config structs of any version: see core/abi.h. */
#include "core/abi.h"

#include <string.h>

#include "core/error_detail.h"
#include "core/log.h"
#include "weft/version.h"

weft_status weft__config_read(void *dst, size_t own, const void *src, size_t size, const char *type) {
    const unsigned char *s = src;
    for (size_t i = own; i < size; i++) {
        if (!s[i]) continue;
        weft__log(WEFT_LOG_ERROR,
                  "%s: byte %zu of the caller's %zu is set, but this library (weft %s) knows only "
                  "%zu bytes of it: a field of a newer weft is used (docs/abi.md)",
                  type, i, size, weft_version(), own);
        weft__set_error_message("%s: a field at offset %zu is beyond the %zu bytes weft %s knows",
                                type, i, own, weft_version());
        return WEFT_EINVAL;
    }
    size_t n = size < own ? size : own;
    memcpy(dst, src, n);
    memset((unsigned char *)dst + n, 0, own - n);
    return WEFT_OK;
}
