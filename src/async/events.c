/* Futures that wake event loops: a completion callback and an eventfd.  The
 * firing side is in core/future.c (make_ready); this is the registering side. */
#include "core/executor.h"
#include "core/future.h"
#include "weft/async.h"

weft_status weft_future_then(weft_future *f, weft_future_callback cb, void *arg) {
    if (!f || !cb) return WEFT_EINVAL;
    /* Ready already (done is set before the completer fires the hooks): take the
     * callback slot as FIRED ourselves, so the callback runs here, before we
     * return, and the completer finds nothing to call. */
    int target = atomic_load_explicit(&f->done, memory_order_acquire) ? WEFT__THEN_FIRED : WEFT__THEN_SETTING;
    int st = WEFT__THEN_NONE;
    /* acq_rel: seeing FIRED means seeing the final status. */
    bool won = atomic_compare_exchange_strong_explicit(&f->then_state, &st, target, memory_order_acq_rel,
                                                       memory_order_acquire);
    if (!won && st != WEFT__THEN_FIRED) return WEFT_EBUSY; /* a callback is registered */
    if (!won || target == WEFT__THEN_FIRED) {
        cb(f, f->status, arg);
        return WEFT_OK;
    }
    f->then_fn = cb;
    f->then_arg = arg;
    st = WEFT__THEN_SETTING;
    /* Release: the completer that exchanges SET away sees then_fn/then_arg.  If
     * it fired while we were writing them, it called nothing: we call cb. */
    if (!atomic_compare_exchange_strong_explicit(&f->then_state, &st, WEFT__THEN_SET, memory_order_acq_rel,
                                                 memory_order_acquire))
        cb(f, f->status, arg);
    return WEFT_OK;
}

weft_status weft_future_fd(weft_future *f, int *fd) {
    if (!f || !fd) return WEFT_EINVAL;
    int cur = atomic_load_explicit(&f->efd, memory_order_acquire);
    if (cur >= 0) {
        *fd = cur;
        return WEFT_OK;
    }
    int mine;
    if (weft__eventfd_open(&mine) != 0) return WEFT_ESYS;
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
