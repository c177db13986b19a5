/* Environment variables that tune weft (WEFT_WORKERS, WEFT_AFFINITY, ...): one
 * rule for all of them, as libgomp and Rayon do.  Unset, or 0 where 0 is listed
 * as "default", means the default.  Any other value that is not valid (empty,
 * not a number, out of range, an unknown word) is logged once per variable at
 * warn level, naming the value and the fallback, and the default is used: a bad
 * variable never makes a call fail.  docs/errors.md states the rule.  Internal. */
#ifndef WEFT_CORE_ENV_H
#define WEFT_CORE_ENV_H

#include <stdbool.h>
#include <stdint.h>

/* A whole number from 0 to max in `name`.  Returns true and sets *out when the
 * variable is set to such a number; false when it is unset or bad (bad: warned
 * about once, naming `fallback`, the default the caller uses).  Any thread. */
bool weft__env_uint(const char *name, uint64_t max, uint64_t *out, const char *fallback);
/* weft__env_uint for a variable whose values start at min (a 0 that would
 * mean nothing is warned about like any bad value). */
bool weft__env_uint_range(const char *name, uint64_t min, uint64_t max, uint64_t *out, const char *fallback);

/* One of `words` (a NULL-terminated list) in `name`.  Returns its index, or -1
 * when unset or not one of them (warned about once, naming `fallback`). */
int weft__env_choice(const char *name, const char *const *words, const char *fallback);

/* A yes/no switch: 1/true/yes/on or 0/false/no/off (any case).  Returns dflt
 * when unset or bad (warned about once). */
bool weft__env_flag(const char *name, bool dflt);

/* True the first time it is asked for `name` in this process: for a variable
 * read by hand (a path that only its use can find bad: WEFT_STATS) to warn
 * about once like the others.  Any thread. */
bool weft__env_first_warning(const char *name);

#endif
