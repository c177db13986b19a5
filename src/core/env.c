/* Reading weft's environment variables under one rule (env.h): a bad value is
 * warned about once and replaced by the default, never an error. */
#include "core/env.h"
#include "core/log.h"
#include "platform/platform.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Names already warned about: a short fixed list, as weft reads a handful of
 * variables.  A name that does not fit is warned about every time (harmless). */
enum { WARNED_MAX = 16 };
static _Atomic(const char *) warned[WARNED_MAX];

/* True the first time it is asked for `name` (compared by content: callers pass
 * string literals, but one literal may have several addresses). */
static bool first_warning(const char *name) {
    for (int i = 0; i < WARNED_MAX; i++) {
        const char *seen = atomic_load_explicit(&warned[i], memory_order_acquire);
        if (!seen) {
            const char *expected = NULL;
            if (atomic_compare_exchange_strong_explicit(&warned[i], &expected, name, memory_order_acq_rel,
                                                        memory_order_acquire))
                return true;
            seen = expected; /* another thread claimed the slot: compare with its name */
        }
        if (strcmp(seen, name) == 0) return false;
    }
    return true;
}

bool weft__env_first_warning(const char *name) { return first_warning(name); }

static void warn_bad(const char *name, const char *value, const char *expect, const char *fallback) {
    if (first_warning(name))
        weft__log(WEFT_LOG_WARN, "%s=\"%s\" is not %s; using %s", name, value, expect, fallback);
}

bool weft__env_uint(const char *name, uint64_t max, uint64_t *out, const char *fallback) {
    return weft__env_uint_range(name, 0, max, out, fallback);
}

bool weft__env_uint_range(const char *name, uint64_t min, uint64_t max, uint64_t *out, const char *fallback) {
    const char *s = weft__getenv(name);
    if (!s) return false;
    const char *p = s;
    while (*p == ' ' || *p == '\t') p++;
    if (*p >= '0' && *p <= '9') { /* strtoull alone would take "-1" and " +2" */
        char *end;
        errno = 0;
        unsigned long long v = strtoull(p, &end, 10);
        while (*end == ' ' || *end == '\t' || *end == '\n') end++;
        if (!*end && errno == 0 && v >= min && v <= max) {
            *out = (uint64_t)v;
            return true;
        }
    }
    char expect[64];
    snprintf(expect, sizeof expect, "a whole number from %llu to %llu", (unsigned long long)min,
             (unsigned long long)max);
    warn_bad(name, s, expect, fallback);
    return false;
}

int weft__env_choice(const char *name, const char *const *words, const char *fallback) {
    const char *s = weft__getenv(name);
    if (!s) return -1;
    char expect[160] = "one of";
    for (int i = 0; words[i]; i++) {
        if (strcasecmp(s, words[i]) == 0) return i;
        size_t len = strlen(expect);
        snprintf(expect + len, sizeof expect - len, "%s \"%s\"", i ? "," : "", words[i]);
    }
    warn_bad(name, s, expect, fallback);
    return -1;
}

bool weft__env_flag(const char *name, bool dflt) {
    static const char *const words[] = {"0", "false", "no", "off", "1", "true", "yes", "on", NULL};
    int k = weft__env_choice(name, words, dflt ? "on (the default)" : "off (the default)");
    return k < 0 ? dflt : k >= 4;
}
