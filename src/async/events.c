/* Futures that wake event loops: a completion callback and an eventfd.  The
 * firing side is in core/future.c (make_ready); this is the registering side. */
#include "core/executor.h"
#include "core/future.h"
#include "weft/async.h"
#include "core/error_detail.h"

weft_status weft_future_then(weft_future *f, weft_future_callback cb, void *arg) {
    if (!f || !cb) return weft__fail(__func__, WEFT_EINVAL, "f or cb is NULL");
    /* Ready already (done is set before the completer looks at the callback
     * slot): take the slot as USED, so the callback runs here, before we
     * return, and the completer finds nothing to call. */
    bool ready = atomic_load_explicit(&f->done, memory_order_acquire);
    int st = WEFT__THEN_NONE;
    /* acq_rel: seeing FIRED means seeing the final status. */
    if (!atomic_compare_exchange_strong_explicit(&f->then_state, &st, ready ? WEFT__THEN_USED : WEFT__THEN_SETTING,
                                                 memory_order_acq_rel, memory_order_acquire)) {
        /* FIRED: ready with no callback taken; ours is the one.  Anything else
         * (SETTING, SET, USED): a callback is registered already. */
        if (st != WEFT__THEN_FIRED ||
            !atomic_compare_exchange_strong_explicit(&f->then_state, &st, WEFT__THEN_USED, memory_order_acq_rel,
                                                     memory_order_acquire))
            return weft__fail(__func__, WEFT_EBUSY, "f already has a callback");
        cb(f, f->status, arg);
        return WEFT_OK;
    }
    if (ready) {
        cb(f, f->status, arg);
        return WEFT_OK;
    }
    f->then_fn = cb;
    f->then_arg = arg;
    st = WEFT__THEN_SETTING;
    /* Release: the completer that moves SET on sees then_fn/then_arg.  If it
     * fired while we were writing them (the state is USED), it called
     * nothing: we call cb. */
    if (!atomic_compare_exchange_strong_explicit(&f->then_state, &st, WEFT__THEN_SET, memory_order_acq_rel,
                                                 memory_order_acquire))
        cb(f, f->status, arg);
    return WEFT_OK;
}

weft_status weft_future_fd(weft_future *f, int *fd) {
    if (!f || !fd) return weft__fail(__func__, WEFT_EINVAL, "f or fd is NULL");
    int cur = atomic_load_explicit(&f->efd, memory_order_acquire);
    if (cur >= 0) {
        *fd = cur;
        return WEFT_OK;
    }
    int mine;
    const char *why = "";
    /* Say why: at the process's limit of open files (one descriptor per
     * future in flight, docs/interop.md) a bare "could not be opened" left
     * the user guessing; the way out there is weft_future_then. */
    if (weft__eventfd_open(&mine, &why) != 0)
        return weft__fail(__func__, WEFT_ESYS,
                          "no eventfd could be opened (%s); one descriptor per future in flight is limited "
                          "by the process's open files (ulimit -n): for many futures use weft_future_then",
                          why);
    /* seq_cst CAS then seq_cst load of done: pairs with make_ready's store of
     * done then load of efd, so the fd is signalled by one side or both. */
    if (!atomic_compare_exchange_strong_explicit(&f->efd, &cur, mine, memory_order_seq_cst,
                                                 memory_order_acquire)) {
        weft__fd_close(mine); /* another caller installed one first */
        *fd = cur;
        return WEFT_OK;
    }
    if (atomic_load_explicit(&f->done, memory_order_seq_cst)) weft__eventfd_signal(mine);
    *fd = mine;
    return WEFT_OK;
}
