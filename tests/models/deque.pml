/* The Chase-Lev deque of src/core/deque.h and deque.c, as weft implements it:
 * the owner pushes (growing the ring when full) and pops at the bottom, two
 * thieves steal at the top.  Checked (spin, exhaustive, tests/models.cmake):
 *   W2  no task is taken twice        (assert in take)
 *       no steal or pop returns an empty slot as a task (assert in take)
 *   W1  no task is lost: once everyone has stopped, what is left between top
 *       and bottom, drained, plus what was taken, is every task exactly once.
 *
 * Abstraction.  Each atomic access of the C code is one step here, and spin
 * interleaves steps with sequential consistency (SC).  SC is stronger than the
 * C11 orderings the code uses, so a pass here proves the algorithm (the order
 * of its steps, the CAS on the last element, where the ring is loaded) and not
 * that the orderings are strong enough.  What SC hides: (1) the StoreLoad
 * fence in pop, which the code relies on; it is modelled explicitly below as
 * a total-store-order store buffer for the owner's store of bottom, drained by
 * the fence (variant NO_FENCE removes the fence: the buffered bottom may stay
 * invisible to thieves while the owner reads top, and tasks are taken twice);
 * (2) the acquire/release pairs (push's release of bottom with steal's acquire,
 * grow's release of the ring): SC gives them for free; they are what the
 * published C11 proof (Le et al., PPoPP 2013) covers and what the TSan stress
 * test deque_every_item_taken_exactly_once_under_steal_storm_with_resizes
 * exercises.  The ring capacity starts at 1 slot (weft's 16 is only a larger
 * bound of the same algorithm), so growth and slot reuse occur within 4 tasks.
 *
 * Variants that must FAIL (the check bites):
 *   -DNO_FENCE            pop without its seq_cst fence (store buffer kept)
 *   -DNO_LAST_CAS         pop takes the last task without the CAS on top
 *   -DRING_BEFORE_BOTTOM  steal loads the ring before top/bottom (the
 *                         crossbeam CVE-2021-32810 class of bug)
 *   -DPUSH_OLD_RING       push writes the slot into the ring it had before growing
 */

#ifndef NITEMS
#define NITEMS 4          /* tasks the owner pushes: 1..NITEMS (0 = empty slot) */
#endif
#ifndef NPOPS
#define NPOPS 2           /* pops the owner tries, interleaved with its pushes */
#endif
#ifndef STEALS
#define STEALS 2          /* steals each thief tries */
#endif
#define NRINGS 4          /* capacities 1, 2, 4, 8 */
#define MAXCAP 8
#define MASK(r) ((1 << (r)) - 1)

typedef Ring { byte s[MAXCAP] };
Ring ring[NRINGS];
byte ringsel = 0;         /* q->ring: index of the live ring (capacity 1 << ringsel) */
byte top = 0;
byte bottom = 0;
byte taken[NITEMS + 1];
byte finished = 0;        /* processes done (owner, thieves) */

/* The owner's store buffer for bottom (total store order): pop's store of b-1
 * may sit here, invisible to thieves, until drained.  The owner reads its own
 * buffered value (store forwarding). */
byte buf_val;
bool buf_full = false;
#define OWN_BOTTOM (buf_full -> buf_val : bottom)
#define DRAIN atomic { if :: buf_full -> bottom = buf_val; buf_full = false :: else -> skip fi }

inline take(x) {
    assert(x != 0);           /* a claimed slot never holds "no task" */
    assert(taken[x] == 0);    /* W2: taken once */
    taken[x] = 1
}

/* Owner only.  Copies [t, b) into a ring twice as large and publishes it.  The
 * new ring is private until published, so copy and publication are one step. */
inline grow() {
    na = a + 1;
    assert(na < NRINGS);
    d_step {
        i = t;
        do
        :: i < b -> ring[na].s[i & MASK(na)] = ring[a].s[i & MASK(a)]; i++
        :: else -> break
        od;
        i = 0;
        ringsel = na;         /* release store of q->ring */
        a = na;
        na = 0
    }
}

/* Each step below is one access to shared memory; reads of what only the owner
 * writes (bottom, ringsel, the slots) are merged into the neighbouring step. */
inline push(item) {
    atomic {
        DRAIN;                /* later stores leave after the buffered one (TSO) */
        b = OWN_BOTTOM;
        t = top;              /* acquire */
        a = ringsel;
        old = a
    };
    if
    :: (b - t > MASK(a)) -> grow()
    :: else -> skip
    fi;
#ifdef PUSH_OLD_RING
    a = old;
#endif
    ring[a].s[b & MASK(a)] = item;
    atomic { bottom = b + 1; b = 0; t = 0; a = 0; old = 0 }   /* release store */
}

inline pop() {
    atomic {
        b = OWN_BOTTOM;
        if
        :: top >= b -> b = 0; was_empty = true   /* the fence-free empty test */
        :: else ->
            DRAIN;            /* a store still buffered leaves first (TSO) */
            b = b - 1; a = ringsel; buf_val = b; buf_full = true   /* relaxed store */
        fi
    };
    if
    :: was_empty -> was_empty = false
    :: else ->
#ifndef NO_FENCE
        DRAIN;                /* atomic_thread_fence(seq_cst): StoreLoad */
#endif
        atomic { t = top; if :: t <= b -> x = ring[a].s[b & MASK(a)] :: else -> skip fi };
        if
        :: t == b ->          /* the last task: race the thieves on top */
#ifndef NO_LAST_CAS
            atomic { DRAIN; if :: top == t -> top = t + 1 :: else -> x = 0 fi };   /* locked CAS drains */
#endif
            atomic { DRAIN; bottom = b + 1 }
        :: t > b -> atomic { DRAIN; bottom = b + 1 }
        :: t < b -> skip
        fi
    fi;
    atomic {
        if
        :: x != 0 -> take(x)
        :: else -> skip
        fi;
        x = 0; t = 0; b = 0; a = 0
    }
}

active proctype owner() {
    byte b, t, a, na, old, x, i;
    bool was_empty = false;
    byte pushed = 0, pops = 0;
    do
    :: pushed < NITEMS -> pushed++; push(pushed)
    :: pops < NPOPS -> pops++; pop()
    :: pushed == NITEMS && pops == NPOPS -> break
    od;
    DRAIN;
    finished++
}

active [2] proctype thief() {
    byte t, b, a, x, n = 0;
    do
    :: n < STEALS ->
        n++;
#ifdef RING_BEFORE_BOTTOM
        a = ringsel;
#endif
        t = top;              /* acquire; then the fence pairing with pop's */
        b = bottom;           /* acquire: syncs with push's release */
        if
        :: t >= b -> skip     /* EMPTY */
        :: else ->
#ifndef RING_BEFORE_BOTTOM
            a = ringsel;      /* acquire, after bottom */
#endif
            x = ring[a].s[t & MASK(a)];
            atomic {
                if
                :: top == t -> top = t + 1; take(x)   /* CAS won: OK */
                :: else -> skip                       /* RETRY */
                fi
            }
        fi;
        atomic { t = 0; b = 0; a = 0; x = 0 }
    :: else -> break
    od;
    finished++
}

#ifdef NO_FENCE
/* A thread of the memory system: drains the owner's store buffer at any time. */
active proctype store_buffer() {
end: do
    :: buf_full -> DRAIN
    od
}
#endif

/* W1: when everyone has stopped, drain what is left and count. */
active proctype checker() {
    byte i;
    finished == 3;
    i = top;
    do
    :: i < bottom -> take(ring[ringsel].s[i & MASK(ringsel)]); i++
    :: else -> break
    od;
    i = 1;
    do
    :: i <= NITEMS -> assert(taken[i] == 1); i++
    :: else -> break
    od
}
