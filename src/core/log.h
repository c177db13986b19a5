/* Internal logging: weft__log(WEFT_LOG_WARN, "fmt", ...) from any layer.  The
 * level test is one relaxed load, so a debug message costs little when off. */
#ifndef WEFT_CORE_LOG_H
#define WEFT_CORE_LOG_H

#include <stdatomic.h>

#include "weft/observe.h"

extern _Atomic int weft__log_level_;

/* Formats and emits the message if `level` is enabled.  Any thread; takes no lock
 * of weft's (stderr's own lock, or the user's callback). */
#define weft__log(level, ...)                                                            \
    do {                                                                                 \
        if ((int)(level) <= atomic_load_explicit(&weft__log_level_, memory_order_relaxed)) \
            weft__log_emit((level), __VA_ARGS__);                                        \
    } while (0)

void weft__log_emit(weft_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Adds what a layer above knows to an entry logged on worker w while it runs
 * a task (executor_number, task, run).  Called on the logging thread, after
 * the entry's level passed; must not log. */
struct weft__worker;
typedef void (*weft__log_context_fn)(struct weft__worker *w, weft_log_entry *entry);
/* Sets it (observe/ does, once per executor created; the same function each
 * time).  Any thread. */
void weft__log_set_context(weft__log_context_fn fn);

/* Reads WEFT_LOG once per process (executor creation calls it). */
void weft__log_init_from_env(void);

#endif
