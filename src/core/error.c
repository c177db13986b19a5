/* Status strings and the version, generated from the tables in the headers. */
#include "weft/common.h"
#include "weft/version.h"

const char *weft_strerror(int status) {
    switch (status) {
#define WEFT__TEXT(name, value, text) case value: return text;
        WEFT_ERROR_TABLE(WEFT__TEXT)
#undef WEFT__TEXT
    }
    return "unknown status";
}

const char *weft_errname(int status) {
    switch (status) {
#define WEFT__NAME(name, value, text) case value: return #name;
        WEFT_ERROR_TABLE(WEFT__NAME)
#undef WEFT__NAME
    }
    return "WEFT_E?";
}

#define WEFT__STR2(x) #x
#define WEFT__STR(x) WEFT__STR2(x)
const char *weft_version(void) {
    return WEFT__STR(WEFT_VERSION_MAJOR) "." WEFT__STR(WEFT_VERSION_MINOR) "." WEFT__STR(WEFT_VERSION_PATCH);
}
unsigned weft_version_number(void) { return WEFT_VERSION; }
