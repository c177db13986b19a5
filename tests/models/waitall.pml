/* The weft_executor_wait_all handshake of src/core/runs.c: a worker's
 * weft__runs_busy_end (ends stored, a light fence, quiet_waiters read, the
 * injector shortcut, weft__runs_quiet_check) against a waiter (registers in
 * quiet_waiters, the heavy fence, then reads the epoch and every counter, and
 * sleeps on the epoch).
 *
 * Checked (spin, exhaustive, tests/models.cmake):
 *   never early: when wait_all returns, no run is in flight (assert; a ghost
 *     counter `live` follows the true number), nested runs included (a task
 *     that begins a run before its own run ends);
 *   no lost wake-up: the waiter always returns (else every other process has
 *     stopped and the waiter sleeps: an invalid end state).
 *
 * Memory orderings.  spin interleaves with sequential consistency.  The code's
 * fence is asymmetric: the worker's side is a compiler barrier only
 * (weft__fence_light), the waiter's is membarrier (weft__fence_heavy: every
 * running thread of the process executes a full barrier).  That is modelled on
 * total store order: each worker's store of its "ended" counter sits in a store
 * buffer (its own reads see it; others do not) until drained, at any time, by
 * the worker's next locked instruction or full fence, or by the waiter's heavy
 * fence, which drains every worker's buffer at once.  So the StoreLoad the
 * handshake relies on (ends stored, then quiet_waiters read; registered, then
 * counters read) is modelled, not assumed; variant NO_HEAVY_FENCE (the waiter
 * with only its own seq_cst RMW) must fail.  Not proved here: the
 * acquire/release chains that make a run's begin visible before its end on
 * other threads (SC gives them; runs.c's header argues them, and the TSan
 * tests of wait_all exercise them), and the sleep protocol (sleep.pml): here
 * an idle worker simply waits until a job or the end is there.
 *
 * Variants that must FAIL:
 *   -DNO_HEAVY_FENCE      the waiter's fence does not reach the workers
 *   -DEPOCH_AFTER_CHECK   the waiter reads the epoch after its counter check
 *   -DBEGUN_FIRST         in_flight reads the begun counters before the ended ones
 *   -DSHORTCUT_WITHOUT_FENCE  busy_end leaves the check to a queued job's run
 *                         (injector not empty) without a full fence first: the
 *                         code before this model found the hole.  The worker's
 *                         end may still be buffered when the other worker's
 *                         check and the waiter's read run: both see the run in
 *                         flight, and nobody checks again.
 */

#ifndef NW
#define NW 2              /* workers */
#endif
#ifndef NRUNS
#define NRUNS 2           /* runs begun from outside, then waited for */
#endif
#ifndef NNEST
#define NNEST 1           /* runs begun by a task (an async task from a task) */
#endif
#define TOTAL (NRUNS + NNEST)

byte begun[NW];           /* per-worker counters, written by their worker only */
byte ended[NW];
byte ended_buf[NW];       /* ends still in the worker's store buffer */
byte outside_begun = 0;
byte quiet_waiters = 0;
byte quiet_epoch = 0;

byte inj = 0;             /* jobs in the injector (from outside) */
byte dq = 0;              /* jobs in the workers' deques (nested runs) */
byte ran = 0;
byte nested = 0;
byte live = 0;            /* ghost: runs truly in flight */

#define DRAIN(w) atomic { ended[w] = ended[w] + ended_buf[w]; ended_buf[w] = 0 }
#define DRAIN_ALL d_step { i = 0; do :: i < NW -> ended[i] = ended[i] + ended_buf[i]; ended_buf[i] = 0; i++ :: else -> i = 0; break od }

/* weft__runs_in_flight: every "ended" counter, then every "begun" one, one
 * load each.  A thread reads its own buffered stores. */
inline in_flight() {
    se = 0; sb = 0; k = 0;
#ifdef BEGUN_FIRST
    sb = outside_begun;
    do :: k < NW -> sb = sb + begun[k]; k++ :: else -> k = 0; break od;
#endif
    do
    :: k < NW -> se = se + ended[k] + (k == me -> ended_buf[k] : 0); k++
    :: else -> k = 0; break
    od;
#ifndef BEGUN_FIRST
    sb = outside_begun;
    do :: k < NW -> sb = sb + begun[k]; k++ :: else -> k = 0; break od;
#endif
    busy = (sb != se);
    se = 0; sb = 0
}

/* weft__runs_quiet_check: a full fence (drains our buffer), then the waiters,
 * then the counters; the epoch bump wakes the waiter's futex. */
inline quiet_check() {
    DRAIN(me);
    if
    :: quiet_waiters > 0 ->
        in_flight();
        if
        :: !busy -> quiet_epoch++
        :: else -> skip
        fi;
        busy = false
    :: else -> skip
    fi
}

/* A job: the run's task.  The first NNEST ones begin a nested run (its job is
 * pushed to the deques) before their own run ends on this worker. */
inline run_job() {
    if
    :: atomic { nested < NNEST -> DRAIN(me); nested++; begun[me]++; live++ };
       dq++
    :: else -> skip
    fi;
    /* weft__runs_end on a worker: a release add to its own counter (buffered) */
    atomic { ended_buf[me]++; live--; ran++ }
}

/* The worker loop, reduced to what the handshake sees: take a job (idle
 * workers wait for one: sleep.pml checks that part), run jobs while the deques
 * hold some (or stop the stretch early: steal_again is bounded), then
 * weft__runs_busy_end. */
proctype worker(byte me) {
    byte se, sb, k, i;
    bool busy = false;
    do
    :: atomic { inj > 0 -> DRAIN(me); inj-- };   /* a locked CAS drains the buffer */
       goto stretch
    :: atomic { dq > 0 -> DRAIN(me); dq-- };
       goto stretch
    :: ran == TOTAL -> break
    od;
    goto out;
stretch:
    run_job();
    do
    :: atomic { dq > 0 -> DRAIN(me); dq-- }; run_job()
    :: true -> break
    od;
    /* weft__runs_busy_end: weft__fence_light is a compiler barrier only: the
     * ends may still be buffered when quiet_waiters is read. */
    if
    :: quiet_waiters == 0 -> skip
    :: else ->
#ifndef SHORTCUT_WITHOUT_FENCE
        DRAIN(me);            /* atomic_thread_fence(seq_cst): our ends visible
                               * before we leave the check to a queued job's run */
#endif
        if
        :: inj > 0 -> skip    /* a queued job's run ends later and checks */
        :: else -> quiet_check()
        fi
    fi;
    if
    :: ran == TOTAL -> goto out
    :: else -> skip
    fi;
    do
    :: atomic { inj > 0 -> DRAIN(me); inj-- }; goto stretch
    :: atomic { dq > 0 -> DRAIN(me); dq-- }; goto stretch
    :: ran == TOTAL -> goto out
    od;
out:
    skip
}

/* The memory system drains worker w's store buffer at any time. */
proctype drainer(byte w) {
end: do
    :: atomic { ended_buf[w] > 0 -> DRAIN(w) }
    od
}

/* The program: begins NRUNS runs from outside (weft__runs_begin with no
 * worker, then the start job into the injector), then weft_executor_wait_all. */
active proctype program() {
    byte se, sb, k, i, e, n = 0;
    byte me = NW;             /* not a worker: no buffered ends of its own */
    bool busy = false;
    do
    :: n < NRUNS -> atomic { outside_begun++; live++ }; inj++; n++
    :: else -> break
    od;
    quiet_waiters++;          /* seq_cst RMW */
#ifndef NO_HEAVY_FENCE
    DRAIN_ALL;                /* weft__fence_heavy: membarrier */
#endif
    do
    :: true ->
#ifndef EPOCH_AFTER_CHECK
        e = quiet_epoch;      /* the epoch before the check */
#endif
        in_flight();
        if
        :: !busy -> break
        :: else -> skip
        fi;
#ifdef EPOCH_AFTER_CHECK
        e = quiet_epoch;
#endif
        (quiet_epoch != e)    /* futex_wait(quiet_epoch, e) */
    od;
    quiet_waiters--;
    assert(live == 0)         /* wait_all returned with nothing in flight */
}

init {
    byte j = 0;
    atomic {
        do
        :: j < NW -> run worker(j); run drainer(j); j++
        :: else -> break
        od
    }
}
