/* Escaping task names for the JSON, HTML and DOT writers. */
#include "observe/obs.h"
#include "graph/graph.h" /* weft__dot_put_escaped */

void weft__put_json_str(FILE *out, const char *s) {
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') fprintf(out, "\\%c", *p);
        else if (*p < 0x20) fprintf(out, "\\u%04x", *p);
        else fputc(*p, out);
    }
    fputc('"', out);
}

void weft__put_html(FILE *out, const char *s) {
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '&': fputs("&amp;", out); break;
        case '"': fputs("&quot;", out); break;
        case '\'': fputs("&#39;", out); break;
        default: fputc(*s, out);
        }
    }
}

void weft__put_duration(FILE *out, double ns, const char *micro) {
    if (ns < 1e3) fprintf(out, "%.0f ns", ns);
    else if (ns < 1e6) fprintf(out, "%.2f %s", ns / 1e3, micro);
    else if (ns < 1e9) fprintf(out, "%.2f ms", ns / 1e6);
    else fprintf(out, "%.2f s", ns / 1e9);
}

void weft__put_dot_str(FILE *out, const char *s) {
    fputc('"', out);
    weft__dot_put_escaped(out, s);
    fputc('"', out);
}

weft_status weft__obs_finish_write(FILE *out) { return (fflush(out) == 0 && !ferror(out)) ? WEFT_OK : WEFT_ESYS; }
