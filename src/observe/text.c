/* Escaping task names for the JSON, HTML and DOT writers.  A name is any C
 * string: bytes that are not valid UTF-8 (and control characters where the
 * format has no escape for them) come out as U+FFFD, so that every file the
 * profiler writes is valid in its format whatever the names hold. */
#include "observe/obs.h"

#include <string.h>

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

#define REPLACEMENT "\xef\xbf\xbd" /* U+FFFD in UTF-8 */

/* Writes s through `ascii` for each ASCII byte; each other valid sequence is
 * copied, each invalid byte becomes U+FFFD. */
static void put_utf8(FILE *out, const char *s, void (*ascii)(FILE *, unsigned char)) {
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        unsigned n = utf8_len(p);
        if (n == 1) ascii(out, *p);
        else if (n) fwrite(p, 1, n, out);
        else fputs(REPLACEMENT, out);
        p += n ? n : 1;
    }
}

static void json_ascii(FILE *out, unsigned char c) {
    if (c == '"' || c == '\\') fprintf(out, "\\%c", c);
    else if (c < 0x20) fprintf(out, "\\u%04x", c);
    else fputc(c, out);
}

void weft__put_json_str(FILE *out, const char *s) {
    fputc('"', out);
    put_utf8(out, s, json_ascii);
    fputc('"', out);
}

static void html_ascii(FILE *out, unsigned char c) {
    switch (c) {
    case '<': fputs("&lt;", out); break;
    case '>': fputs("&gt;", out); break;
    case '&': fputs("&amp;", out); break;
    case '"': fputs("&quot;", out); break;
    case '\'': fputs("&#39;", out); break;
    default:
        /* HTML allows no control characters but whitespace. */
        if ((c < 0x20 && c != '\t' && c != '\n') || c == 0x7f) fputs(REPLACEMENT, out);
        else fputc(c, out);
    }
}

void weft__put_html(FILE *out, const char *s) { put_utf8(out, s, html_ascii); }

static void dot_ascii(FILE *out, unsigned char c) {
    if (c == '"' || c == '\\') fprintf(out, "\\%c", c);
    else if (c == '\n') fputs("\\n", out);
    else if (c < 0x20 || c == 0x7f) fputs(REPLACEMENT, out);
    else fputc(c, out);
}

void weft__put_dot_str(FILE *out, const char *s) {
    fputc('"', out);
    put_utf8(out, s, dot_ascii);
    fputc('"', out);
}

void weft__put_duration(FILE *out, double ns, const char *micro) {
    if (ns < 1e3) fprintf(out, "%.0f ns", ns);
    else if (ns < 1e6) fprintf(out, "%.2f %s", ns / 1e3, micro);
    else if (ns < 1e9) fprintf(out, "%.2f ms", ns / 1e6);
    else fprintf(out, "%.2f s", ns / 1e9);
}

weft_status weft__obs_finish_write(FILE *out) { return (fflush(out) == 0 && !ferror(out)) ? WEFT_OK : WEFT_ESYS; }
