/* The allocator hook.  Defaults to the C library.  Tests install an allocator that
 * fails the Nth call to check that every allocation site recovers. */
#include "core/alloc.h"
#include "weft/common.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void *libc_alloc(void *ctx, size_t size) { (void)ctx; return malloc(size); }
static void *libc_realloc(void *ctx, void *p, size_t old, size_t size) {
    (void)ctx; (void)old;
    return realloc(p, size);
}
static void libc_free(void *ctx, void *p, size_t size) { (void)ctx; (void)size; free(p); }

static weft_allocator current = {libc_alloc, libc_realloc, libc_free, NULL};

/* The layers' flush hooks (weft__alloc_on_switch): slots filled once each. */
enum { MAX_SWITCH_HOOKS = 4 };
static _Atomic(void (*)(void)) switch_hooks[MAX_SWITCH_HOOKS];

void weft__alloc_on_switch(void (*flush)(void)) {
    for (int i = 0; i < MAX_SWITCH_HOOKS; i++) {
        void (*seen)(void) = NULL;
        /* acq_rel: a set_allocator that sees the hook sees the layer's setup
         * before it (the lock the hook takes was made first). */
        if (atomic_compare_exchange_strong_explicit(&switch_hooks[i], &seen, flush, memory_order_acq_rel,
                                                    memory_order_acquire) ||
            seen == flush)
            return;
    }
}

void weft_set_allocator(const weft_allocator *a) {
    weft__block_cache_flush(); /* cached blocks belong to the outgoing allocator */
    /* So do the blocks the layers keep for the process (the deadline heap):
     * grown later by the incoming allocator's realloc, a block of the
     * outgoing one aborted the process (glibc: "realloc(): invalid pointer"). */
    for (int i = 0; i < MAX_SWITCH_HOOKS; i++) {
        void (*flush)(void) = atomic_load_explicit(&switch_hooks[i], memory_order_acquire);
        if (flush) flush();
    }
    weft_allocator n = {libc_alloc, libc_realloc, libc_free, NULL};
    if (a) {
        n.ctx = a->ctx;
        if (a->alloc) n.alloc = a->alloc;
        if (a->realloc) n.realloc = a->realloc;
        if (a->free) n.free = a->free;
        /* A custom alloc with the default realloc would mix two heaps. */
        if (a->alloc && !a->realloc) n.realloc = NULL;
    }
    current = n;
}

bool weft__alloc_is_default(void) { return current.alloc == libc_alloc; }

/* No object can be larger than PTRDIFF_MAX bytes (glibc's malloc refuses
 * them too): such a request, a user's size near SIZE_MAX, fails here as out
 * of memory without reaching the allocator (ASan's would abort the process). */
static bool too_big(size_t size) { return size > (size_t)PTRDIFF_MAX; }

void *weft__alloc(size_t size) { return too_big(size) ? NULL : current.alloc(current.ctx, size ? size : 1); }

/* With the C library's allocator, calloc: fresh pages come zeroed from the kernel,
 * so a large zeroed block costs no pass over memory until it is used. */
void *weft__calloc(size_t size) {
    if (too_big(size)) return NULL;
    if (weft__alloc_is_default()) return calloc(1, size ? size : 1);
    void *p = weft__alloc(size);
    if (p) memset(p, 0, size);
    return p;
}

void *weft__realloc(void *ptr, size_t old_size, size_t new_size) {
    if (too_big(new_size)) return NULL;
    /* 0 is taken as 1, as by weft__alloc and weft__free: the C library's
     * realloc(p, 0) would free p and return NULL, which a caller reads as
     * "failed, p unchanged" (weft_mem_realloc's contract). */
    if (new_size == 0) new_size = 1;
    if (current.realloc) return current.realloc(current.ctx, ptr, old_size, new_size);
    void *n = weft__alloc(new_size);
    if (!n) return NULL;
    if (ptr) {
        memcpy(n, ptr, old_size < new_size ? old_size : new_size);
        weft__free(ptr, old_size);
    }
    return n;
}

void weft__free(void *ptr, size_t size) {
    if (ptr) current.free(current.ctx, ptr, size ? size : 1);
}

/* Over-allocate and keep the original pointer just below the aligned block. */
static void *align_block(unsigned char *raw, size_t align) {
    if (!raw) return NULL;
    uintptr_t p = ((uintptr_t)(raw + sizeof(void *)) + align - 1) & ~(uintptr_t)(align - 1);
    ((void **)p)[-1] = raw;
    return (void *)p;
}

/* The slack align_block needs above size, or 0 when size + slack does not fit
 * a size_t: a size near SIZE_MAX (a user's buffer size) must fail as out of
 * memory, not wrap around to a tiny block. */
static size_t aligned_total(size_t size, size_t align) {
    size_t slack = align + sizeof(void *);
    return size > SIZE_MAX - slack ? 0 : size + slack;
}

void *weft__alloc_aligned(size_t size, size_t align) {
    size_t total = aligned_total(size, align);
    return total ? align_block(weft__alloc(total), align) : NULL;
}

void *weft__calloc_aligned(size_t size, size_t align) {
    size_t total = aligned_total(size, align);
    return total ? align_block(weft__calloc(total), align) : NULL;
}

void weft__free_aligned(void *ptr, size_t size, size_t align) {
    if (ptr) weft__free(((void **)ptr)[-1], size + align + sizeof(void *));
}

/* The public forms (common.h): libraries beside weft, such as weft::mpi,
 * cannot reach the hidden weft__ calls in libweft.so. */
void *weft_mem_alloc(size_t size) { return weft__alloc(size); }
void *weft_mem_calloc(size_t size) { return weft__calloc(size); }
void *weft_mem_realloc(void *ptr, size_t old_size, size_t new_size) { return weft__realloc(ptr, old_size, new_size); }
void weft_mem_free(void *ptr, size_t size) { weft__free(ptr, size); }

char *weft__strdup(const char *s) {
    if (!s) return NULL;
    size_t n = strlen(s) + 1;
    char *d = weft__alloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

void weft__free_str(char *s) {
    if (s) weft__free(s, strlen(s) + 1);
}
