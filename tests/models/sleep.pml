/* The sleep/wake protocol of src/core/sleep.c and sleep.h, with the worker
 * loop of src/core/worker.c (search, weft__sleep_prepare, final_look, the futex
 * wait, leave_idle, end_search with Tokio's "last searcher wakes another" rule,
 * and weft__sleep_notify_local after a push to the worker's own deque).
 *
 * Checked (spin, exhaustive, tests/models.cmake):
 *   no lost wake-up: every job is run and every worker then stops.  A job
 *     published while every worker is parking left unrun would leave all
 *     workers blocked in their futex wait and the shutdown process waiting
 *     for it: an invalid end state (safety run), and a violation of the
 *     ltl formula "eventually every job has run" (liveness run, weak fairness).
 *   the state word stays consistent: a counter never drops below zero, and
 *     never more tokens than idle workers ("tokens are never orphaned").
 *
 * Abstraction.  Jobs are counted, not named: the injector and each worker's
 * deque are counters, a steal is one atomic decrement (the deque itself is
 * tests/models/deque.pml).  NPROD jobs come from outside (the injector and the
 * full notify); the first NSPAWN jobs run each push one child onto their
 * worker's own deque (notify_local).  A search is one round (the code does
 * steal_rounds + yield_rounds: more rounds only find more).  The futex wait
 * is the guard (epoch != key): it blocks until the epoch moves, atomically
 * with the comparison, as the kernel does.  One fork-join detail is left out:
 * weft__fj_steal's shared frames (src/fj) follow the same publish-then-notify
 * rule and are not modelled.
 *
 * Memory orderings.  spin interleaves with sequential consistency.  The code's
 * state transitions are seq_cst RMWs and the epoch is seq_cst, so SC is exact
 * for them.  The one StoreLoad the protocol relies on is the publisher's: the
 * job's store (a release store of a deque's bottom) then the seq_cst fence in
 * wake(), then the read of state, against the worker's seq_cst RMW of state
 * then its final look (the store-buffer pattern).  It is modelled with a
 * store buffer (total store order) for the publisher's job store, drained by
 * the fence; variant NO_NOTIFY_FENCE removes the fence and must fail.  What
 * the model does not prove: that weaker-than-SC orderings elsewhere (the
 * relaxed read in notify_local, relaxed deque accesses) are enough; those
 * reads only decide whether to notify (a stale read delays, the pushing worker
 * runs its own job), and the TSan tests sleep_no_lost_wakeup_with_random_gaps
 * and exec_tests.no_lost_wakeup_with_random_gaps exercise them.
 *
 * Variants that must FAIL:
 *   -DLOOK_BEFORE_REGISTER  the final look comes before the idle announcement
 *   -DKEY_AT_WAIT           the epoch key is read just before waiting, not before
 *                           the announcement
 *   -DNO_NOTIFY_FENCE       notify reads state without the seq_cst fence
 *   -DNO_TOKEN_CLAIM        leaving idle ignores a pending token
 */

#ifndef NW
#define NW 2              /* workers */
#endif
#ifndef NPROD
#define NPROD 2           /* jobs submitted from outside */
#endif
#ifndef NSPAWN
#define NSPAWN 1          /* jobs that push one child to their own deque */
#endif
#define TOTAL (NPROD + NSPAWN)

/* The state word's three counters, changed together by one RMW (atomic {}). */
byte searching = NW;      /* every worker starts out searching */
byte idle = 0;
byte tokens = 0;
byte epoch = 0;           /* the futex word */
bool shutdown = false;

byte inj = 0;             /* jobs in the injector */
byte dq[NW];              /* jobs in each worker's deque */
byte ran = 0;             /* jobs run */
byte spawned = 0;

/* The publisher's store buffer (TSO): a job pushed to the injector may sit here,
 * invisible to workers, until drained (by the fence in wake, or at any time). */
byte inj_pending = 0;
#define DRAIN_INJ atomic { inj = inj + inj_pending; inj_pending = 0 }

/* wake(s, 1, true): notify one sleeper unless someone searches.  The CAS loop
 * compares the whole state word with the snapshot it read. */
inline notify() {
#ifndef NO_NOTIFY_FENCE
    DRAIN_INJ;            /* atomic_thread_fence(seq_cst) */
#endif
    atomic { vs = searching; vi = idle; vt = tokens };
    do
    :: vs > 0 || vi <= vt -> woke = false; break
    :: else ->
        atomic {
            if
            :: searching == vs && idle == vi && tokens == vt ->
                searching++; tokens++; woke = true
            :: else -> vs = searching; vi = idle; vt = tokens; woke = false
            fi
        };
        if
        :: woke -> break
        :: else -> skip
        fi
    od;
    if
    :: woke -> epoch++    /* then futex_wake: the waiter's guard sees it */
    :: else -> skip
    fi;
    atomic { vs = 0; vi = 0; vt = 0; woke = false }
}

inline end_search() {
    atomic { assert(searching > 0); old = searching; searching-- };
    if
    :: old == 1 -> notify()
    :: else -> skip
    fi;
    old = 0
}

inline leave_idle() {
    atomic {
        assert(idle > 0);
        idle--;
#ifndef NO_TOKEN_CLAIM
        if
        :: tokens > 0 -> tokens--
        :: else -> searching++
        fi;
#else
        searching++;
#endif
        assert(tokens <= idle)
    }
}

/* One look at the injector and every other worker's deque; got = found one. */
inline look() {
    atomic {
        if
        :: inj > 0 -> inj--; got = true
        :: else -> skip
        fi
    };
    v = 0;
    do
    :: v < NW && !got ->
        if
        :: v != me -> atomic { if :: dq[v] > 0 -> dq[v]--; got = true :: else -> skip fi }
        :: else -> skip
        fi;
        v++
    :: else -> break
    od;
    v = 0
}

/* Runs a job; the first NSPAWN jobs push a child to the worker's own deque and
 * notify_local (relaxed read of state; the full notify if someone seems idle).
 * weft__push_local skips even that when the deque held a job per worker. */
inline run_job() {
    atomic {
        ran++;
        if
        :: spawned < NSPAWN -> spawned++; before = dq[me]; dq[me]++; pushed = true
        :: else -> skip
        fi
    };
    if
    :: pushed && before < NW ->
        atomic { vs = searching; vi = idle; vt = tokens };
        if
        :: vs == 0 && vi > vt -> notify()
        :: else -> atomic { vs = 0; vi = 0; vt = 0 }
        fi
    :: else -> skip
    fi;
    pushed = false; before = 0
}

proctype worker(byte me) {
    byte v, key, old, before, vs, vi, vt;
    bool got = false, woke = false, pushed = false;
    do
    :: true ->
        /* search: one steal round unless shut down */
        if
        :: !shutdown -> look()
        :: else -> skip
        fi;
        if
        :: !got ->
#ifdef LOOK_BEFORE_REGISTER
            look();
#endif
#ifndef KEY_AT_WAIT
            key = epoch;      /* before the announcement */
#endif
            atomic { assert(searching > 0); searching--; idle++ };   /* weft__sleep_prepare */
#ifndef LOOK_BEFORE_REGISTER
            look();           /* final_look */
#endif
            if
            :: !got ->
                if
                :: shutdown -> break
                :: else -> skip
                fi;
#ifdef KEY_AT_WAIT
                key = epoch;
#endif
                (epoch != key);   /* weft__sleep_wait: futex_wait(epoch, key) */
                key = 0;
                leave_idle()
            :: else ->
                key = 0;
                leave_idle()
            fi
        :: else -> skip
        fi;
        if
        :: got ->
            got = false;
            end_search();
            /* the busy stretch: the job, then the own deque until empty */
            run_job();
            do
            :: atomic { dq[me] > 0 -> dq[me]-- }; run_job()
            :: atomic { dq[me] == 0 -> searching++ }; break   /* start_search */
            od
        :: else -> skip
        fi
    od
}

active proctype producer() {
    byte vs, vi, vt;
    bool woke = false;
    byte n = 0;
    do
    :: n < NPROD ->
        n++;
        inj_pending++;        /* the job's publication (a store) */
        notify()
    :: else -> break
    od;
    DRAIN_INJ
}

/* The memory system drains the publisher's store buffer at any time. */
active proctype store_buffer() {
end: do
    :: atomic { inj_pending > 0 -> inj = inj + inj_pending; inj_pending = 0 }
    od
}

/* weft_executor_destroy once every job has run: shutdown, then wake everyone. */
active proctype shutter() {
    ran == TOTAL;
    shutdown = true;
    epoch++
}

init {
    byte i = 0;
    atomic {
        do
        :: i < NW -> run worker(i); i++
        :: else -> break
        od
    }
}

ltl every_job_runs { <> (ran == TOTAL) }
