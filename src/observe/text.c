/* Escaping task names for the JSON, HTML and DOT writers.  A name is any C
 * string: bytes that are not valid UTF-8 (and control characters where the
 * format has no escape for them) come out as U+FFFD, so that every file the
 * profiler writes is valid in its format whatever the names hold. */
#include "observe/obs.h"
#include "core/escape.h"
#include "core/error_detail.h"

#include <string.h>

static void json_ascii(FILE *out, unsigned char c) {
    if (c == '"' || c == '\\') fprintf(out, "\\%c", c);
    else if (c < 0x20) fprintf(out, "\\u%04x", c);
    else fputc(c, out);
}

void weft__put_json_str(FILE *out, const char *s) {
    fputc('"', out);
    weft__put_utf8(out, s, json_ascii);
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
        if ((c < 0x20 && c != '\t' && c != '\n') || c == 0x7f) fputs(WEFT__REPLACEMENT, out);
        else fputc(c, out);
    }
}

void weft__put_html(FILE *out, const char *s) { weft__put_utf8_xml(out, s, html_ascii); }

void weft__put_dot_str(FILE *out, const char *s) {
    fputc('"', out);
    weft__put_dot_escaped(out, s);
    fputc('"', out);
}

void weft__put_duration(FILE *out, double ns, const char *micro) {
    if (ns < 1e3) fprintf(out, "%.0f ns", ns);
    else if (ns < 1e6) fprintf(out, "%.2f %s", ns / 1e3, micro);
    else if (ns < 1e9) fprintf(out, "%.2f ms", ns / 1e6);
    else fprintf(out, "%.2f s", ns / 1e9);
}

/* fn: the public call that wrote, which the message names (docs/errors.md,
 * R3: the family's "weft_profiler_write_*" said too little, and was wrong for
 * weft_taskflow_dump_dot_profiled). */
weft_status weft__obs_finish_write(FILE *out, const char *fn) {
    if (fflush(out) == 0 && !ferror(out)) return WEFT_OK;
    return weft__fail(fn, WEFT_ESYS, "writing to out failed");
}
