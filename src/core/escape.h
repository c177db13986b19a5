/* Writing user-given names (task and taskflow names: any C string) into text
 * formats: bytes that are not valid UTF-8 come out as U+FFFD, so every file weft
 * writes (DOT from graph/, JSON, HTML and DOT from observe/) stays valid in its
 * format whatever the names hold.  Internal. */
#ifndef WEFT_CORE_ESCAPE_H
#define WEFT_CORE_ESCAPE_H

#include <stdio.h>

/* U+FFFD in UTF-8: what an invalid byte, or a control character a format has no
 * escape for, becomes. */
#define WEFT__REPLACEMENT "\xef\xbf\xbd"

/* Writes s to out: each ASCII byte through `ascii` (the format's escaping),
 * each other valid UTF-8 sequence as it is, each invalid byte as U+FFFD. */
void weft__put_utf8(FILE *out, const char *s, void (*ascii)(FILE *, unsigned char));
/* The same for XML and HTML text (the SVG files and the HTML report): U+FFFE
 * and U+FFFF, valid UTF-8 but no character XML 1.0 allows (a parser rejects
 * the whole file), come out as U+FFFD too. */
void weft__put_utf8_xml(FILE *out, const char *s, void (*ascii)(FILE *, unsigned char));

/* s as the inside of a Graphviz DOT double-quoted string (no quotes added):
 * `"` and `\` escaped, newlines as \n, other control characters U+FFFD. */
void weft__put_dot_escaped(FILE *out, const char *s);

#endif
