/* Live statistics (live.c): what the rest of observe/ calls.  Internal. */
#ifndef WEFT_OBSERVE_LIVE_H
#define WEFT_OBSERVE_LIVE_H

#include "observe/obs.h"

/* Starts publishing ex as WEFT_STATS says (nothing when it is unset); a path
 * that cannot be written is warned about, never an error.  Executor create. */
void weft__live_from_env(weft_executor *ex);
/* Stops publishing o's executor, if it does: the thread ends, a last refresh
 * is marked closed, the files are removed.  Not from a worker of it. */
void weft__live_stop(struct weft__obs *o);

#endif
