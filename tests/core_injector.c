/* Injector: FIFO semantics, and exactly-once with many producers and consumers. */
#define _GNU_SOURCE
#include "harness.h"

#include <pthread.h>
#include <stdatomic.h>

#include "core/injector.h"
#include "weft.h"

TEST(injector_is_fifo_across_blocks) {
    weft__injector q;
    ASSERT_OK(weft__injector_init(&q));
    ASSERT_TRUE(weft__injector_empty(&q));
    ASSERT_NULL(weft__injector_pop(&q));
    enum { N = 1000 }; /* spans ~16 blocks of 63 */
    static weft__job j[N];
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < N; i++) ASSERT_OK(weft__injector_push(&q, &j[i]));
        ASSERT_FALSE(weft__injector_empty(&q));
        for (int i = 0; i < N; i++) ASSERT_TRUE(weft__injector_pop(&q) == &j[i]);
        ASSERT_NULL(weft__injector_pop(&q));
        ASSERT_TRUE(weft__injector_empty(&q));
    }
    weft__injector_destroy(&q);
}

TEST(injector_destroy_frees_queued_blocks) {
    weft__injector q;
    ASSERT_OK(weft__injector_init(&q));
    static weft__job j[500];
    for (int i = 0; i < 500; i++) ASSERT_OK(weft__injector_push(&q, &j[i]));
    for (int i = 0; i < 100; i++) ASSERT_NOT_NULL(weft__injector_pop(&q));
    weft__injector_destroy(&q); /* ASan's leak check verifies the rest */
}

#define PRODUCERS 4
#define CONSUMERS 4
static weft__injector mq;
static weft__job *mitems;
static _Atomic unsigned char *mtaken;
static uint64_t per_producer;
static _Atomic int producers_left;
static _Atomic uint64_t consumed;

static void *producer(void *arg) {
    uintptr_t p = (uintptr_t)arg;
    for (uint64_t i = 0; i < per_producer; i++)
        while (weft__injector_push(&mq, &mitems[p * per_producer + i]) != 0) {}
    atomic_fetch_sub(&producers_left, 1);
    return NULL;
}

static void *consumer(void *arg) {
    (void)arg;
    uint64_t last_seen[PRODUCERS];
    for (int i = 0; i < PRODUCERS; i++) last_seen[i] = UINT64_MAX;
    for (;;) {
        weft__job *j = weft__injector_pop(&mq);
        if (!j) {
            if (atomic_load(&producers_left) == 0 && weft__injector_empty(&mq)) break;
            continue;
        }
        size_t idx = (size_t)(j - mitems);
        if (atomic_fetch_add(&mtaken[idx], 1) != 0) {
            fprintf(stderr, "item %zu taken twice\n", idx);
            exit(1);
        }
        /* Per producer, one consumer sees items in increasing order (FIFO). */
        size_t p = idx / per_producer, k = idx % per_producer;
        if (last_seen[p] != UINT64_MAX && k <= last_seen[p]) {
            fprintf(stderr, "producer %zu: item %zu after %llu\n", p, k, (unsigned long long)last_seen[p]);
            exit(1);
        }
        last_seen[p] = k;
        atomic_fetch_add(&consumed, 1);
    }
    return NULL;
}

TEST(injector_exactly_once_with_many_producers_and_consumers) {
    per_producer = test_scale(250000);
    uint64_t total = per_producer * PRODUCERS;
    mitems = calloc(total, sizeof *mitems);
    mtaken = calloc(total, 1);
    ASSERT_OK(weft__injector_init(&mq));
    atomic_store(&producers_left, PRODUCERS);
    pthread_t pt[PRODUCERS], ct[CONSUMERS];
    for (int i = 0; i < CONSUMERS; i++) pthread_create(&ct[i], NULL, consumer, NULL);
    for (uintptr_t i = 0; i < PRODUCERS; i++) pthread_create(&pt[i], NULL, producer, (void *)i);
    for (int i = 0; i < PRODUCERS; i++) pthread_join(pt[i], NULL);
    for (int i = 0; i < CONSUMERS; i++) pthread_join(ct[i], NULL);
    ASSERT_EQ(atomic_load(&consumed), total);
    for (uint64_t i = 0; i < total; i++)
        if (mtaken[i] != 1) TEST_FAIL_("item %llu taken %d times", (unsigned long long)i, (int)mtaken[i]);
    weft__injector_destroy(&mq);
    free(mitems);
    free((void *)mtaken);
}
