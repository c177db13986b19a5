/* Cutting text at a UTF-8 character boundary.  Internal.
 *
 * Names and reasons are copied into fixed buffers (error messages, a
 * cancellation's reason, weft_run_info.failed_task, a log entry's task): a
 * cut at a byte count can fall inside a multi-byte character, and the copy
 * is then invalid UTF-8 for the program that prints, logs or JSON-encodes it.
 * These drop the character the cut split. */
#ifndef WEFT_CORE_UTF8_H
#define WEFT_CORE_UTF8_H

#include <stddef.h>
#include <string.h>

/* How many of the n bytes s[0..n) to keep so that no character is split at
 * n: n, or less by the first bytes of the last character when its lead byte
 * says it runs past n.  Reads s[0..n) only (the text need not end there). */
static inline size_t weft__utf8_whole(const char *s, size_t n) {
    size_t i = n; /* back over up to 3 continuation bytes to the last lead byte */
    while (i > 0 && n - i < 3 && ((unsigned char)s[i - 1] & 0xC0) == 0x80) i--;
    if (i == 0) return n;
    unsigned char lead = (unsigned char)s[i - 1];
    size_t len = (lead & 0xE0) == 0xC0 ? 2 : (lead & 0xF0) == 0xE0 ? 3 : (lead & 0xF8) == 0xF0 ? 4 : 1;
    return len > 1 && i - 1 + len > n ? i - 1 : n;
}

/* Copies src (NULL: "") into dst[cap], cap >= 1: at most cap - 1 bytes,
 * reading none past them, cut at a character boundary; NUL-terminated. */
static inline void weft__utf8_copy(char *dst, size_t cap, const char *src) {
    size_t n = src ? strnlen(src, cap - 1) : 0;
    if (n == cap - 1) n = weft__utf8_whole(src, n);
    if (n) memcpy(dst, src, n);
    dst[n] = 0;
}

#endif
