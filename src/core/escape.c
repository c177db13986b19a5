/* Escaping user-given names for text formats (escape.h). */
#include "core/escape.h"

#include <stdbool.h>

/* The length of the valid UTF-8 sequence at p (1..4), or 0 if the bytes there
 * are not one (overlong forms, surrogates and code points past U+10FFFF
 * included, as RFC 3629 says). */
static unsigned utf8_len(const unsigned char *p) {
    unsigned char c = p[0];
    if (c < 0x80) return 1;
    unsigned n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
    if (n == 0 || c > 0xf4) return 0;
    for (unsigned i = 1; i < n; i++)
        if ((p[i] & 0xc0) != 0x80) return 0; /* also stops at the terminating 0 */
    if (c == 0xe0 && p[1] < 0xa0) return 0; /* overlong */
    if (c == 0xed && p[1] >= 0xa0) return 0; /* surrogate */
    if (c == 0xf0 && p[1] < 0x90) return 0; /* overlong */
    if (c == 0xf4 && p[1] >= 0x90) return 0; /* past U+10FFFF */
    return n;
}

/* U+FFFE or U+FFFF (EF BF BE, EF BF BF): valid UTF-8, but no XML character. */
static bool xml_nonchar(const unsigned char *p, unsigned n) {
    return n == 3 && p[0] == 0xef && p[1] == 0xbf && p[2] >= 0xbe;
}

static void put_utf8(FILE *out, const char *s, void (*ascii)(FILE *, unsigned char), bool xml) {
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        unsigned n = utf8_len(p);
        if (n == 1) ascii(out, *p);
        else if (n && !(xml && xml_nonchar(p, n))) fwrite(p, 1, n, out);
        else fputs(WEFT__REPLACEMENT, out);
        p += n ? n : 1;
    }
}

void weft__put_utf8(FILE *out, const char *s, void (*ascii)(FILE *, unsigned char)) { put_utf8(out, s, ascii, false); }

void weft__put_utf8_xml(FILE *out, const char *s, void (*ascii)(FILE *, unsigned char)) { put_utf8(out, s, ascii, true); }

static void dot_ascii(FILE *out, unsigned char c) {
    if (c == '"' || c == '\\') fprintf(out, "\\%c", c);
    else if (c == '\n') fputs("\\n", out);
    else if (c < 0x20 || c == 0x7f) fputs(WEFT__REPLACEMENT, out);
    else fputc(c, out);
}

void weft__put_dot_escaped(FILE *out, const char *s) { weft__put_utf8(out, s, dot_ascii); }
