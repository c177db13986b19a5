/* The profiler's set of suspects (suspects.h says what they are): an
 * executor-wide open-addressed table of (taskflow, index) keys and a bitmap
 * the batching fast path tests. */
#include "observe/suspects.h"

#include <stddef.h>

static uint64_t suspect_key(const void *tf, uint32_t index) {
    uint64_t k = ((uint64_t)(uintptr_t)tf ^ ((uint64_t)index << 40) ^ index) * 0x9e3779b97f4a7c15ull;
    return k | 1; /* 0: an empty slot; SUSPECT_GONE: a removed one */
}
#define SUSPECT_GONE ((uint64_t)2) /* even: never a key */

bool weft__obs_is_suspect(const struct weft__obs *o, const void *tf, uint32_t index) {
    if (!suspect_bit_at(o, suspect_tfh(tf), index)) return false;
    if (atomic_load_explicit(&o->suspects_full, memory_order_relaxed)) return true; /* see weft__obs_add_suspect */
    uint64_t k = suspect_key(tf, index), x;
    for (uint32_t i = (uint32_t)(k >> 32) % WEFT__SUSPECTS;; i = (i + 1) % WEFT__SUSPECTS) {
        x = atomic_load_explicit((_Atomic uint64_t *)&o->suspect[i], memory_order_relaxed);
        if (x == k) return true;
        if (x == 0) return false;
    }
}

void weft__obs_add_suspect(struct weft__obs *o, const void *tf, uint32_t index) {
    uint32_t b = (index ^ suspect_tfh(tf)) % WEFT__SUSPECT_BITS;
    /* Slots are filled once per recording (a removed key leaves a tombstone),
     * so probes always end at an empty one.  Once half are used, the bit alone
     * marks a suspect (suspects_full; nsuspects holds one more for them all,
     * so the fast path keeps looking until the next start).  Returning with
     * nothing, as it did, broke observe.h's "a long task is measured from its
     * second run": a few batches the OS stopped the worker in, earlier in the
     * same run, filled the slots (their tasks are let go only in the next
     * run), and the long task's batch, flagged, made no suspect, run after run
     * (tests/obs_hunt46.c).  Costs a task that shares a bit with a let-go one
     * an exact timing, and bits are let go with their task (drop_suspect). */
    if (atomic_load_explicit(&o->nsuspect_slots, memory_order_relaxed) >= WEFT__SUSPECTS / 2) {
        atomic_fetch_or_explicit(&o->suspect_bits[b / 64], (uint64_t)1 << (b % 64), memory_order_relaxed);
        if (!atomic_exchange_explicit(&o->suspects_full, true, memory_order_relaxed))
            atomic_fetch_add_explicit(&o->nsuspects, 1, memory_order_relaxed);
        return;
    }
    uint64_t k = suspect_key(tf, index);
    for (uint32_t i = (uint32_t)(k >> 32) % WEFT__SUSPECTS;; i = (i + 1) % WEFT__SUSPECTS) {
        uint64_t x = 0;
        /* Relaxed: a suspect is a hint; a worker that misses a new one batches
         * the task once more. */
        if (atomic_compare_exchange_strong_explicit(&o->suspect[i], &x, k, memory_order_relaxed,
                                                    memory_order_relaxed))
            break;
        if (x == k) return;
    }
    atomic_fetch_add_explicit(&o->nsuspect_slots, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&o->nsuspects, 1, memory_order_relaxed);
    atomic_fetch_or_explicit(&o->suspect_bits[b / 64], (uint64_t)1 << (b % 64), memory_order_relaxed);
}

/* A suspect timed alone turned out short: the batch that made it one held
 * another task that ran long, or the OS stopped the worker there (on a busy
 * machine the usual case).  It goes back to batching, and once no suspect is
 * left the fast path stops testing for them (suspects_on).  Its bit stays set
 * (another key may share it): while any suspect is left, a task on that bit
 * only costs a look at the keys. */
void weft__obs_drop_suspect(struct weft__obs *o, const void *tf, uint32_t index) {
    uint64_t k = suspect_key(tf, index), x;
    if (atomic_load_explicit(&o->suspects_full, memory_order_relaxed)) {
        /* Its bit alone may make it a suspect (weft__obs_add_suspect): cleared, though
         * another taskflow's suspect may share it (that one is then batched
         * once more, flagged again if it is long, and made one again). */
        uint32_t b = (index ^ suspect_tfh(tf)) % WEFT__SUSPECT_BITS;
        atomic_fetch_and_explicit(&o->suspect_bits[b / 64], ~((uint64_t)1 << (b % 64)), memory_order_relaxed);
    }
    for (uint32_t i = (uint32_t)(k >> 32) % WEFT__SUSPECTS;; i = (i + 1) % WEFT__SUSPECTS) {
        x = atomic_load_explicit(&o->suspect[i], memory_order_relaxed);
        if (x == 0) return;
        if (x == k) {
            /* Another worker timing the same task may drop it at once. */
            if (atomic_compare_exchange_strong_explicit(&o->suspect[i], &x, SUSPECT_GONE, memory_order_relaxed,
                                                        memory_order_relaxed))
                atomic_fetch_sub_explicit(&o->nsuspects, 1, memory_order_relaxed);
            return;
        }
    }
}

/* A new recording starts from no suspects (no run is in flight: relaxed; a
 * worker sees the count drop at its next batch_open). */
void weft__obs_clear_suspects(struct weft__obs *o) {
    atomic_store_explicit(&o->nsuspects, 0, memory_order_relaxed);
    atomic_store_explicit(&o->nsuspect_slots, 0, memory_order_relaxed);
    atomic_store_explicit(&o->suspects_when, 0, memory_order_relaxed);
    atomic_store_explicit(&o->suspects_full, false, memory_order_relaxed);
    for (size_t i = 0; i < WEFT__SUSPECT_BITS / 64; i++) atomic_store_explicit(&o->suspect_bits[i], 0, memory_order_relaxed);
    for (size_t i = 0; i < WEFT__SUSPECTS; i++) atomic_store_explicit(&o->suspect[i], 0, memory_order_relaxed);
}

/* Suspects were found in run-iteration `when`: suspects_when becomes it, or
 * UINT64_MAX once two differ. */
void weft__obs_note_suspects_when(struct weft__obs *o, uint64_t when) {
    uint64_t cur = atomic_load_explicit(&o->suspects_when, memory_order_relaxed);
    while (cur != when && cur != UINT64_MAX &&
           !atomic_compare_exchange_weak_explicit(&o->suspects_when, &cur, cur == 0 ? when : UINT64_MAX,
                                                  memory_order_relaxed, memory_order_relaxed)) {
    }
}

