/* Parallel algorithms under awkward use (adversarial round 40). */
#include "algo_test.h"

#include <limits.h>

/* ---- exact results with associative, non-commutative operators --------------
 *
 * A string: its length and up to STR_CAP characters.  Concatenation is
 * associative and not commutative, and a wrong order, a chunk combined twice or
 * one left out all show in the text. */
enum { STR_CAP = 120 };
typedef struct str { unsigned len; char c[STR_CAP]; } str;

static void str_cat(void *acc, const void *x, void *arg) {
    (void)arg;
    str *a = acc;
    const str *b = x;
    for (unsigned i = 0; i < b->len && a->len < STR_CAP; i++) a->c[a->len++] = b->c[i];
}
static bool str_eq(const str *a, const str *b) { return a->len == b->len && memcmp(a->c, b->c, a->len) == 0; }
static str str_of(size_t i) { return (str){ 1, { (char)('!' + i % 90) } }; }

/* 2x2 matrices mod a prime. */
enum { P = 1000003 };
static mat2 matp_mul(mat2 x, mat2 y) {
    mat2 r = { (x.a * y.a + x.b * y.c) % P, (x.a * y.b + x.b * y.d) % P, (x.c * y.a + x.d * y.c) % P,
               (x.c * y.b + x.d * y.d) % P };
    return r;
}
static void matp_op(void *acc, const void *x, void *arg) {
    (void)arg;
    *(mat2 *)acc = matp_mul(*(mat2 *)acc, *(const mat2 *)x);
}
static mat2 matp_of(size_t i) { return (mat2){ (i * 7 + 1) % P, (i * 13 + 2) % P, (i * 3 + 5) % P, (i + 11) % P }; }

/* Configs at the extremes: chunk 0, 1, > n, SIZE_MAX; max_tasks 1, huge. */
static const weft_algo_config EDGE[] = {
    { .partitioner = WEFT_PARTITION_AUTO, .chunk = 1 },
    { .partitioner = WEFT_PARTITION_AUTO, .chunk = SIZE_MAX },
    { .partitioner = WEFT_PARTITION_STATIC, .chunk = SIZE_MAX },
    { .partitioner = WEFT_PARTITION_STATIC, .chunk = 1, .max_tasks = UINT_MAX },
    { .partitioner = WEFT_PARTITION_DYNAMIC, .chunk = SIZE_MAX - 1 },
    { .partitioner = WEFT_PARTITION_DYNAMIC, .chunk = 2, .max_tasks = 1 },
    { .partitioner = WEFT_PARTITION_GUIDED, .chunk = 1, .max_tasks = UINT_MAX },
    { .partitioner = WEFT_PARTITION_GUIDED, .chunk = SIZE_MAX },
    { .partitioner = WEFT_PARTITION_GUIDED, .chunk = 0, .max_tasks = 3 },
    { .partitioner = WEFT_PARTITION_AUTO, .chunk = 1000 },
};
#define NEDGE (sizeof EDGE / sizeof EDGE[0])
static const size_t ODD_SIZES[] = { 0, 1, 2, 3, 5, 17, 97, 119 };
#define NODD (sizeof ODD_SIZES / sizeof ODD_SIZES[0])

static void str_map(const void *in, void *out, void *arg) {
    (void)arg;
    *(str *)out = str_of(*(const size_t *)in);
}

TEST(string_concatenation_reduces_and_scans_give_the_serial_text_on_1_2_4_workers) {
    str in[128], out[128], want[128];
    size_t idx[128];
    for (size_t i = 0; i < 128; i++) in[i] = str_of(i), idx[i] = i;
    const str init = { 2, "<<" };
    for (size_t w = 0; w < NWORKERS; w++) {
        weft_executor *ex = make_executor(WORKERS[w]);
        for (size_t c = 0; c < NEDGE + NCONFIGS; c++) {
            const weft_algo_config *cfg = c < NEDGE ? &EDGE[c] : &CONFIGS[c - NEDGE];
            for (size_t s = 0; s < NODD; s++) {
                size_t n = ODD_SIZES[s];
                /* reduce */
                str r = init, e = init;
                for (size_t i = 0; i < n; i++) str_cat(&e, &in[i], NULL);
                ASSERT_OK(weft_parallel_reduce(ex, in, n, sizeof(str), &r, str_cat, NULL, cfg));
                if (!str_eq(&r, &e))
                    TEST_FAIL_("reduce w=%u cfg=%zu n=%zu: %.*s != %.*s", WORKERS[w], c, n, (int)r.len, r.c,
                               (int)e.len, e.c);
                /* transform_reduce */
                r = init;
                ASSERT_OK(weft_parallel_transform_reduce(ex, idx, n, sizeof(size_t), sizeof(str), &r, str_map,
                                                         str_cat, NULL, cfg));
                if (!str_eq(&r, &e)) TEST_FAIL_("transform_reduce w=%u cfg=%zu n=%zu", WORKERS[w], c, n);
                /* inclusive with and without init, exclusive */
                for (int kind = 0; kind < 3; kind++) {
                    str acc = init;
                    for (size_t i = 0; i < n; i++) {
                        if (kind == 2) want[i] = acc;
                        if (kind == 1 && i == 0) acc = in[0];
                        else str_cat(&acc, &in[i], NULL);
                        if (kind != 2) want[i] = acc;
                    }
                    memset(out, 0, sizeof out);
                    weft_status st = kind == 2
                        ? weft_parallel_exclusive_scan(ex, in, out, n, sizeof(str), &init, str_cat, NULL, cfg)
                        : weft_parallel_inclusive_scan(ex, in, out, n, sizeof(str), kind == 0 ? &init : NULL,
                                                       str_cat, NULL, cfg);
                    ASSERT_OK(st);
                    for (size_t i = 0; i < n; i++)
                        if (!str_eq(&out[i], &want[i]))
                            TEST_FAIL_("scan kind %d w=%u cfg=%zu n=%zu at %zu: %.*s != %.*s", kind, WORKERS[w], c,
                                       n, i, (int)out[i].len, out[i].c, (int)want[i].len, want[i].c);
                }
            }
        }
        weft_executor_destroy(ex);
    }
}

/* ---- matrices mod p through the typed macros, and the range forms ---- */
#define MATP_MUL(a, b) matp_mul((a), (b))
WEFT_ALGO_REDUCE(h40_matp, mat2, MATP_MUL)
WEFT_ALGO_SCAN(h40_matp, mat2, MATP_MUL)

static void matp_range_reduce(size_t lo, size_t hi, void *acc, void *arg) {
    (void)arg;
    mat2 m = matp_of(lo);
    for (size_t i = lo + 1; i < hi; i++) m = matp_mul(m, matp_of(i));
    *(mat2 *)acc = m;
}
static void matp_range_scan(size_t lo, size_t hi, void *acc, bool has, void *arg) {
    mat2 *out = arg, m = has ? *(mat2 *)acc : matp_of(lo);
    size_t i = lo;
    if (!has) out[i++] = m;
    for (; i < hi; i++) out[i] = m = matp_mul(m, matp_of(i));
}

TEST(matrix_products_mod_p_reduce_and_scan_in_serial_order_through_every_entry_point) {
    enum { N = 20011 }; /* prime, past two scan chunks */
    mat2 *in = xmalloc(N * sizeof *in), *out = xmalloc(N * sizeof *out), *want = xmalloc(N * sizeof *want);
    for (size_t i = 0; i < N; i++) in[i] = matp_of(i);
    const mat2 id = { 1, 0, 0, 1 }, init = { 2, 3, 5, 7 };
    static const size_t sizes[] = { 0, 1, 2, 8191, 8192, 8193, 16385, N };
    for (size_t w = 0; w < NWORKERS; w++) {
        weft_executor *ex = make_executor(WORKERS[w]);
        for (size_t c = 0; c < NEDGE; c++) {
            const weft_algo_config *cfg = &EDGE[c];
            for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
                size_t n = sizes[s];
                mat2 e = init;
                for (size_t i = 0; i < n; i++) e = matp_mul(e, in[i]);
                mat2 r = init;
                ASSERT_OK(h40_matp_reduce(ex, in, n, &r, cfg));
                if (!mat2_eq(r, e)) TEST_FAIL_("typed reduce w=%u cfg=%zu n=%zu", WORKERS[w], c, n);
                r = init;
                ASSERT_OK(weft_parallel_reduce_range(ex, n, sizeof(mat2), &r, matp_range_reduce, matp_op, NULL, cfg));
                if (!mat2_eq(r, e)) TEST_FAIL_("reduce_range w=%u cfg=%zu n=%zu", WORKERS[w], c, n);
                /* typed inclusive (init, NULL), typed exclusive, range scan without init */
                for (int kind = 0; kind < 4; kind++) {
                    mat2 acc = kind == 1 || kind == 3 ? id : init;
                    for (size_t i = 0; i < n; i++) {
                        if (kind == 2) want[i] = acc;
                        acc = matp_mul(acc, in[i]);
                        if (kind != 2) want[i] = acc;
                    }
                    memset(out, 0, N * sizeof *out);
                    weft_status st = kind == 0   ? h40_matp_inclusive_scan(ex, in, out, n, &init, cfg)
                                     : kind == 1 ? h40_matp_inclusive_scan(ex, in, out, n, NULL, cfg)
                                     : kind == 2 ? h40_matp_exclusive_scan(ex, in, out, n, init, cfg)
                                                 : weft_parallel_scan_range(ex, n, sizeof(mat2), NULL,
                                                                            matp_range_reduce, matp_range_scan,
                                                                            matp_op, out, cfg);
                    ASSERT_OK(st);
                    for (size_t i = 0; i < n; i++)
                        if (!mat2_eq(out[i], want[i]))
                            TEST_FAIL_("scan kind %d w=%u cfg=%zu n=%zu differs at %zu", kind, WORKERS[w], c, n, i);
                }
            }
        }
        weft_executor_destroy(ex);
    }
    free(in), free(out), free(want);
}

/* ---- sorts: stability and order; searches: the first index ---- */
typedef struct rec { uint32_t key, seq; } rec;
static int rec_cmp(const void *a, const void *b, void *arg) {
    (void)arg;
    uint32_t x = ((const rec *)a)->key, y = ((const rec *)b)->key;
    return (x > y) - (x < y);
}
#define REC_LT(a, b) ((a).key < (b).key)
WEFT_ALGO_SORT(h40_rec, rec, REC_LT)

static bool key_is(const void *e, void *arg) { return ((const rec *)e)->key == *(uint32_t *)arg; }

TEST(sorts_keep_ties_in_input_order_and_searches_give_the_first_index_at_awkward_sizes) {
    static const size_t sizes[] = { 0, 1, 2, 3, 4095, 4096, 4097, 8191, 12289, 40009 };
    static const unsigned tasks[] = { 0, 1, 3, 5, UINT_MAX };
    rec *v = xmalloc(40009 * sizeof *v), *w = xmalloc(40009 * sizeof *w);
    for (size_t wk = 0; wk < NWORKERS; wk++) {
        weft_executor *ex = make_executor(WORKERS[wk]);
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
            for (size_t t = 0; t < sizeof tasks / sizeof tasks[0]; t++) {
                size_t n = sizes[s];
                weft_algo_config cfg = { .max_tasks = tasks[t] };
                uint64_t seed = 40 + n + t;
                uint32_t keys = n / 7 + 1; /* many ties */
                for (size_t i = 0; i < n; i++) v[i] = (rec){ (uint32_t)(test_rand(&seed) % keys), (uint32_t)i };
                for (int kind = 0; kind < 3; kind++) {
                    memcpy(w, v, n * sizeof *w);
                    weft_status st = kind == 0 ? weft_parallel_sort(ex, w, n, sizeof *w, rec_cmp, NULL, &cfg)
                                     : kind == 1 ? weft_parallel_stable_sort(ex, w, n, sizeof *w, rec_cmp, NULL, &cfg)
                                                 : h40_rec_stable_sort(ex, w, n, &cfg);
                    ASSERT_OK(st);
                    for (size_t i = 1; i < n; i++)
                        if (w[i - 1].key > w[i].key || (w[i - 1].key == w[i].key && w[i - 1].seq >= w[i].seq))
                            TEST_FAIL_("sort kind %d w=%u n=%zu tasks=%u: out of order at %zu", kind, WORKERS[wk], n,
                                       tasks[t], i);
                }
                if (n == 0) continue;
                /* first smallest, first largest, first match */
                size_t mn = 0, mx = 0, idx = 12345;
                for (size_t i = 1; i < n; i++) {
                    if (v[i].key < v[mn].key) mn = i;
                    if (v[i].key > v[mx].key) mx = i;
                }
                ASSERT_OK(weft_parallel_min_element(ex, v, n, sizeof *v, rec_cmp, NULL, &idx, &cfg));
                ASSERT_EQ(idx, mn);
                ASSERT_OK(weft_parallel_max_element(ex, v, n, sizeof *v, rec_cmp, NULL, &idx, &cfg));
                ASSERT_EQ(idx, mx);
                uint32_t key = v[n - 1].key;
                size_t first = 0;
                while (v[first].key != key) first++;
                ASSERT_OK(weft_parallel_find_if(ex, v, n, sizeof *v, key_is, &key, &idx, &cfg));
                ASSERT_EQ(idx, first);
                key = UINT32_MAX;
                ASSERT_OK(weft_parallel_find_if(ex, v, n, sizeof *v, key_is, &key, &idx, &cfg));
                ASSERT_EQ(idx, n);
            }
        weft_executor_destroy(ex);
    }
    free(v), free(w);
}

/* ---- a token fired from inside the work, at the first / middle / last element ---- */
enum { CN = 5003 };
typedef struct probe {
    _Atomic unsigned char runs[CN];
    size_t fire_at;
    weft_cancel_token *tok;
    _Atomic int twice;
} probe;

static void probe_hit(probe *p, size_t i) {
    if (atomic_fetch_add(&p->runs[i], 1) != 0) atomic_store(&p->twice, 1);
    if (i == p->fire_at) (void)weft_cancel_token_cancel(p->tok);
}
static void probe_index(size_t i, void *arg) { probe_hit(arg, i); }
static void probe_range(size_t lo, size_t hi, void *arg) {
    for (size_t i = lo; i < hi; i++) probe_hit(arg, i);
}
static probe *g_probe; /* for the element callbacks, which get pointers */
static const uint64_t *g_base;
static void probe_elem(void *e, void *arg) { probe_hit(arg, (size_t)((uint64_t *)e - (uint64_t *)g_base)); }
static void probe_map(const void *in, void *out, void *arg) {
    probe_hit(arg, (size_t)((const uint64_t *)in - g_base));
    *(uint64_t *)out = *(const uint64_t *)in;
}
static bool probe_pred(const void *e, void *arg) {
    probe_hit(arg, (size_t)((const uint64_t *)e - g_base));
    return false;
}
static void probe_scan_reduce(size_t lo, size_t hi, void *acc, void *arg) {
    (void)arg;
    *(uint64_t *)acc = hi - lo;
}
static void probe_scan_range(size_t lo, size_t hi, void *acc, bool has, void *arg) {
    probe_range(lo, hi, arg);
    *(uint64_t *)acc = (has ? *(uint64_t *)acc : 0) + (hi - lo);
}

TEST(a_token_fired_by_the_work_stops_every_algorithm_and_nothing_runs_twice) {
    uint64_t *v = xmalloc(CN * 8), *out = xmalloc(CN * 8);
    for (size_t i = 0; i < CN; i++) v[i] = i;
    g_base = v;
    const size_t at[] = { 0, CN / 2, CN - 1 };
    probe *p = xmalloc(sizeof *p);
    for (size_t w = 0; w < NWORKERS; w++) {
        weft_executor *ex = make_executor(WORKERS[w]);
        for (size_t c = 0; c < NCONFIGS + NEDGE; c++)
            for (size_t a = 0; a < 3; a++)
                for (int kind = 0; kind < 7; kind++) {
                    memset(p, 0, sizeof *p);
                    p->fire_at = at[a];
                    ASSERT_NOT_NULL(p->tok = weft_cancel_token_create(NULL, NULL));
                    g_probe = p;
                    weft_algo_config cfg = c < NCONFIGS ? CONFIGS[c] : EDGE[c - NCONFIGS];
                    cfg.cancel = p->tok;
                    uint64_t result = 77;
                    size_t index = 77;
                    weft_status st;
                    switch (kind) {
                    case 0: st = weft_parallel_for(ex, 0, CN, 1, probe_index, p, &cfg); break;
                    case 1: st = weft_parallel_for_range(ex, 0, CN, 1, probe_range, p, &cfg); break;
                    case 2: st = weft_parallel_for_each(ex, v, CN, 8, probe_elem, p, &cfg); break;
                    case 3: st = weft_parallel_transform(ex, v, 8, out, 8, CN, probe_map, p, &cfg); break;
                    case 4:
                        st = weft_parallel_transform_reduce(ex, v, CN, 8, 8, &result, probe_map, add_u64, p, &cfg);
                        break;
                    case 5: st = weft_parallel_find_if(ex, v, CN, 8, probe_pred, p, &index, &cfg); break;
                    default:
                        st = weft_parallel_scan_range(ex, CN, 8, NULL, probe_scan_reduce, probe_scan_range, add_u64,
                                                      p, &cfg);
                        break;
                    }
                    size_t ran = 0;
                    for (size_t i = 0; i < CN; i++) ran += atomic_load(&p->runs[i]) != 0;
                    if (atomic_load(&p->twice)) TEST_FAIL_("kind %d cfg %zu w=%u: an element ran twice", kind, c, WORKERS[w]);
                    if (st != WEFT_OK && st != WEFT_ECANCELED)
                        TEST_FAIL_("kind %d cfg %zu: %s", kind, c, weft_errname(st));
                    if (st == WEFT_OK && ran != CN)
                        TEST_FAIL_("kind %d cfg %zu w=%u fire %zu: OK but %zu of %d ran", kind, c, WORKERS[w], at[a],
                                   ran, CN);
                    if (st == WEFT_ECANCELED && (result != 77 || index != 77))
                        TEST_FAIL_("kind %d: cancelled but wrote its result", kind);
                    if (st == WEFT_ECANCELED && ran == CN)
                        TEST_FAIL_("kind %d cfg %zu w=%u fire %zu: every element ran but ECANCELED", kind, c,
                                   WORKERS[w], at[a]);
                    /* One task in index order (one worker): the first element's cancel
                     * skips the rest whenever there is a second chunk. */
                    if (WORKERS[w] == 1 && a == 0 && ran < CN && st != WEFT_ECANCELED)
                        TEST_FAIL_("kind %d cfg %zu: not all ran, yet %s", kind, c, weft_errname(st));
                    if (kind == 6 && st == WEFT_ECANCELED) /* a scan: a prefix of the elements */
                        for (size_t i = 1; i < CN; i++)
                            if (atomic_load(&p->runs[i]) && !atomic_load(&p->runs[i - 1]))
                                TEST_FAIL_("cancelled scan cfg %zu w=%u: element %zu ran, %zu did not", c,
                                           WORKERS[w], i, i - 1);
                    weft_cancel_token_destroy(p->tok);
                }
        weft_executor_destroy(ex);
    }
    free(p), free(v), free(out);
}

/* ---- emplaced algorithms re-run with their ranges changed in between ---- */
typedef struct rerun {
    weft_for_desc f;
    weft_reduce_desc r;
    weft_scan_desc s;
    weft_sort_desc o;
    weft_transform_desc t;
    uint64_t *v, *out, *sorted, *tout, result, init;
    _Atomic unsigned char *hits;
    size_t cap;
} rerun;

static void rr_body(size_t lo, size_t hi, void *arg) {
    rerun *r = arg;
    for (size_t i = lo; i < hi; i += r->f.step) {
        atomic_fetch_add(&r->hits[i], 1);
        if (hi - i <= r->f.step) break;
    }
}
static void rr_twice(const void *in, void *out, void *arg) {
    (void)arg;
    *(uint64_t *)out = 2 * *(const uint64_t *)in;
}

/* Sets every descriptor for iteration k (a task before the algorithms). */
static int rr_setup(weft_ctx *cx, void *arg) {
    rerun *r = arg;
    uint64_t k = weft_ctx_iteration(cx);
    static const size_t lens[] = { 0, 1, 2, 4099, 13, 8209, 3, 20011 };
    size_t n = lens[k % 8], first = k % 3, step = 1 + k % 4;
    memset((void *)r->hits, 0, r->cap);
    r->f.first = first, r->f.last = first + n, r->f.step = step;
    r->r.in = r->v + first, r->r.n = n, r->result = 1000 + k;
    r->s.in = r->v + first, r->s.n = n, r->s.exclusive = k & 1, r->init = k;
    for (size_t i = 0; i < n; i++) r->sorted[i] = r->v[(i * 7919) % r->cap];
    r->o.n = n;
    r->t.in = r->v + first, r->t.n = n;
    r->f.config.partitioner = r->r.config.partitioner = r->s.config.partitioner =
        r->t.config.partitioner = (weft_partitioner)(k % 4);
    return 0;
}

/* Checks iteration k's results (a task after them). */
static int rr_check(weft_ctx *cx, void *arg) {
    rerun *r = arg;
    uint64_t k = weft_ctx_iteration(cx);
    size_t n = r->r.n, first = r->f.first, step = r->f.step;
    for (size_t i = 0; i < r->cap; i++) {
        unsigned want = i >= first && i < first + n && (i - first) % step == 0;
        if (atomic_load(&r->hits[i]) != want) return 100 + (int)k;
    }
    uint64_t sum = 1000 + k, acc = k;
    for (size_t i = 0; i < n; i++) {
        uint64_t x = r->v[first + i];
        sum += x;
        if (r->s.exclusive) {
            if (r->out[i] != acc) return 200 + (int)k;
            acc += x;
        } else {
            acc += x;
            if (r->out[i] != acc) return 200 + (int)k;
        }
        if (r->tout[i] != 2 * x) return 300 + (int)k;
        if (i && r->sorted[i - 1] > r->sorted[i]) return 400 + (int)k;
    }
    if (r->result != sum) return 500 + (int)k;
    return 0;
}

TEST(emplaced_algorithms_rerun_with_changed_ranges_read_their_descriptors_each_run) {
    enum { CAP = 20011 + 8 };
    rerun *r = xmalloc(sizeof *r);
    memset(r, 0, sizeof *r);
    r->cap = CAP;
    r->v = random_u64(CAP, 4040), r->out = xmalloc(CAP * 8), r->sorted = xmalloc(CAP * 8), r->tout = xmalloc(CAP * 8);
    r->hits = xmalloc(CAP);
    r->f = (weft_for_desc){ .body = rr_body, .arg = r };
    r->r = (weft_reduce_desc){ .size = 8, .result = &r->result, .op = add_u64 };
    r->s = (weft_scan_desc){ .out = r->out, .size = 8, .init = &r->init, .op = add_u64 };
    r->o = (weft_sort_desc){ .base = r->sorted, .size = 8, .cmp = cmp_u64 };
    r->t = (weft_transform_desc){ .in_size = 8, .out = r->tout, .out_size = 8, .f = rr_twice };
    for (size_t w = 0; w < NWORKERS; w++) {
        weft_executor *ex = make_executor(WORKERS[w]);
        weft_taskflow *tf = make_taskflow("rerun");
        weft_task setup = must_emplace(tf, rr_setup, r), check = must_emplace(tf, rr_check, r);
        weft_task algos[] = { weft_emplace_for(tf, &r->f), weft_emplace_reduce(tf, &r->r),
                              weft_emplace_scan(tf, &r->s), weft_emplace_sort(tf, &r->o),
                              weft_emplace_transform(tf, &r->t) };
        for (int i = 0; i < 5; i++) {
            ASSERT_FALSE(weft_task_is_null(algos[i]));
            ASSERT_OK(weft_precede(setup, algos[i]));
            ASSERT_OK(weft_precede(algos[i], check));
        }
        weft_future *f;
        ASSERT_OK(weft_run_n(ex, tf, 24, &f));
        weft_status st = weft_future_wait(f);
        weft_run_info info;
        ASSERT_OK(weft_future_info(f, &info));
        if (st != WEFT_OK)
            TEST_FAIL_("w=%u: %s, task \"%s\" code %d", WORKERS[w], weft_errname(st), info.failed_task, info.task_code);
        weft_future_destroy(f);
        weft_taskflow_destroy(tf);
        weft_executor_destroy(ex);
    }
    free(r->v), free(r->out), free(r->sorted), free(r->tout), free((void *)r->hits), free(r);
}

/* ---- every ready-queue policy: calls from outside, from tasks, nested, at priorities ---- */
#include <pthread.h>
typedef struct lifo {
    pthread_mutex_t m;
    weft_sched_item *items[1 << 14];
    size_t n;
} lifo;
static int lifo_push(void *st, weft_sched_item *it, weft_priority p, int worker) {
    (void)p, (void)worker;
    lifo *s = st;
    pthread_mutex_lock(&s->m);
    int full = s->n == sizeof s->items / sizeof s->items[0];
    if (!full) s->items[s->n++] = it;
    pthread_mutex_unlock(&s->m);
    return full;
}
static weft_sched_item *lifo_pop(void *st, int worker) {
    (void)worker;
    lifo *s = st;
    pthread_mutex_lock(&s->m);
    weft_sched_item *it = s->n ? s->items[--s->n] : NULL;
    pthread_mutex_unlock(&s->m);
    return it;
}

typedef struct pol_arg { weft_executor *ex; _Atomic int bad; size_t n; } pol_arg;

static void pol_calls(weft_executor *ex, size_t n, _Atomic int *bad) {
    mat2 *in = xmalloc((n + 1) * sizeof *in), *out = xmalloc((n + 1) * sizeof *out);
    for (size_t i = 0; i < n; i++) in[i] = matp_of(i);
    mat2 e = { 1, 0, 0, 1 }, r = e;
    if (weft_parallel_reduce(ex, in, n, sizeof *in, &r, matp_op, NULL, NULL) != WEFT_OK) atomic_fetch_add(bad, 1);
    weft_algo_config small = { .chunk = 257 };
    if (weft_parallel_inclusive_scan(ex, in, out, n, sizeof *in, NULL, matp_op, NULL, &small) != WEFT_OK)
        atomic_fetch_add(bad, 1);
    for (size_t i = 0; i < n; i++) {
        e = matp_mul(e, in[i]);
        if (!mat2_eq(out[i], e)) { atomic_fetch_add(bad, 1); break; }
    }
    if (!mat2_eq(r, e)) atomic_fetch_add(bad, 1);
    uint64_t *u = random_u64(n + 1, n);
    if (weft_u64_sort(ex, u, n, NULL) != WEFT_OK) atomic_fetch_add(bad, 1);
    for (size_t i = 1; i < n; i++)
        if (u[i - 1] > u[i]) { atomic_fetch_add(bad, 1); break; }
    free(in), free(out), free(u);
}
static void pol_chunk(size_t lo, size_t hi, void *arg) {
    pol_arg *a = arg;
    for (size_t i = lo; i < hi; i++) pol_calls(a->ex, 3000 + i * 977, &a->bad);
}
static int pol_task(weft_ctx *cx, void *arg) {
    pol_arg *a = arg;
    pol_calls(weft_ctx_executor(cx), a->n, &a->bad);
    /* a loop whose bodies make parallel calls */
    if (weft_parallel_for_range(weft_ctx_executor(cx), 0, 6, 1, pol_chunk, a, &(weft_algo_config){ .chunk = 1 }) !=
        WEFT_OK)
        atomic_fetch_add(&a->bad, 1);
    return 0;
}

TEST(algorithms_give_exact_results_under_every_ready_queue_policy) {
    static const weft_sched_kind kinds[] = { WEFT_SCHED_FIFO, WEFT_SCHED_PRIORITY, WEFT_SCHED_ROUND_ROBIN,
                                             WEFT_SCHED_CUSTOM, WEFT_SCHED_RANDOM };
    static lifo lp;
    pthread_mutex_init(&lp.m, NULL);
    weft_sched_policy pol = { .state = &lp, .push = lifo_push, .pop = lifo_pop };
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        for (unsigned w = 1; w <= 4; w *= 2) {
            weft_sched_config sc = { .kind = kinds[k], .policy = kinds[k] == WEFT_SCHED_CUSTOM ? &pol : NULL };
            weft_status err = WEFT_OK;
            weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = w, .sched = &sc }, &err);
            ASSERT_NOT_NULL(ex);
            pol_arg a = { ex, 0, 9001 };
            pol_calls(ex, 20011, &a.bad);
            for (int prio = -1; prio <= 2; prio++) {
                ASSERT_OK(weft_algo_set_priority((weft_priority)prio, NULL));
                pol_calls(ex, 10007, &a.bad);
                ASSERT_EQ(weft_run_root(ex, pol_task, &a), 0);
            }
            ASSERT_OK(weft_algo_set_priority(WEFT_PRIORITY_NORMAL, NULL));
            if (atomic_load(&a.bad)) TEST_FAIL_("policy %d, %u workers: %d wrong results", (int)kinds[k], w, atomic_load(&a.bad));
            weft_sched_stats stats;
            ASSERT_OK(weft_sched_get_stats(ex, &stats));
            ASSERT_EQ(stats.policy_errors, 0);
            weft_executor_destroy(ex);
        }
}

/* ---- out of memory at every allocation of a call ---- */
static _Atomic long oom_count = -1; /* allocations left before the failing one; -1: none fail */
static void *oom_alloc(void *ctx, size_t size) {
    (void)ctx;
    long left = atomic_load(&oom_count);
    if (left >= 0 && atomic_fetch_sub(&oom_count, 1) == 0) return NULL;
    return malloc(size);
}
static void *oom_realloc(void *ctx, void *p, size_t old, size_t size) {
    (void)ctx, (void)old;
    long left = atomic_load(&oom_count);
    if (left >= 0 && atomic_fetch_sub(&oom_count, 1) == 0) return NULL;
    return realloc(p, size);
}
static void oom_free(void *ctx, void *p, size_t size) { (void)ctx, (void)size, free(p); }

typedef struct oom_case {
    weft_executor *ex;
    int kind;
    size_t n;
    const weft_algo_config *cfg;
    _Atomic unsigned char *hits;
    uint64_t *v, *out;
    weft_status st;
} oom_case;

static void oom_hit(size_t lo, size_t hi, void *arg) {
    oom_case *c = arg;
    for (size_t i = lo; i < hi; i++) atomic_fetch_add(&c->hits[i], 1);
}
static void oom_call(oom_case *c) {
    uint64_t r = 5, init = 3;
    size_t idx = 9;
    switch (c->kind) {
    case 0: c->st = weft_parallel_for_range(c->ex, 0, c->n, 1, oom_hit, c, c->cfg); break;
    case 1: c->st = weft_parallel_reduce(c->ex, c->v, c->n, 8, &r, add_u64, NULL, c->cfg); break;
    case 2: c->st = weft_parallel_exclusive_scan(c->ex, c->v, c->out, c->n, 8, &init, add_u64, NULL, c->cfg); break;
    case 3: c->st = weft_u64_sum_inclusive_scan(c->ex, c->v, c->out, c->n, NULL, c->cfg); break;
    case 4: c->st = weft_parallel_stable_sort(c->ex, c->out, c->n, 8, cmp_u64, NULL, c->cfg); break;
    case 5: c->st = weft_u64_sort(c->ex, c->out, c->n, c->cfg); break;
    default: c->st = weft_parallel_max_element(c->ex, c->v, c->n, 8, cmp_u64, NULL, &idx, c->cfg); break;
    }
    if (c->st == WEFT_OK) {
        uint64_t sum = 5, acc = 3;
        size_t best = 0;
        for (size_t i = 0; i < c->n; i++) {
            sum += c->v[i];
            if (c->v[i] > c->v[best]) best = i;
        }
        if (c->kind == 0)
            for (size_t i = 0; i < c->n; i++)
                if (atomic_load(&c->hits[i]) != 1) c->st = 1000;
        if (c->kind == 1 && r != sum) c->st = 1001;
        if (c->kind == 2)
            for (size_t i = 0; i < c->n; i++) {
                if (c->out[i] != acc) { c->st = 1002; break; }
                acc += c->v[i];
            }
        if (c->kind == 3)
            for (size_t i = 0, a = 0; i < c->n; i++)
                if (c->out[i] != (a += c->v[i])) { c->st = 1003; break; }
        if (c->kind == 4 || c->kind == 5)
            for (size_t i = 1; i < c->n; i++)
                if (c->out[i - 1] > c->out[i]) { c->st = 1004; break; }
        if (c->kind == 6 && idx != best) c->st = 1006;
    } else if (c->st == WEFT_ENOMEM) { /* nothing changed */
        if (c->kind == 0)
            for (size_t i = 0; i < c->n; i++)
                if (atomic_load(&c->hits[i])) c->st = 2000;
        if (c->kind == 1 && r != 5) c->st = 2001;
        if (c->kind == 6 && idx != 9) c->st = 2006;
    }
}
static int oom_task(weft_ctx *cx, void *arg) {
    (void)cx;
    oom_call(arg);
    return 0;
}

TEST(every_algorithm_out_of_memory_at_each_allocation_gives_enomem_or_the_exact_result) {
    enum { N = 20011 };
    uint64_t *v = random_u64(N, 404), *out = xmalloc(N * 8);
    _Atomic unsigned char *hits = xmalloc(N);
    static const weft_algo_config cfgs[] = { { 0 }, { .partitioner = WEFT_PARTITION_GUIDED },
                                             { .partitioner = WEFT_PARTITION_STATIC, .chunk = 1 } };
    weft_set_allocator(&(weft_allocator){ oom_alloc, oom_realloc, oom_free, NULL });
    for (unsigned w = 2; w <= 20; w += 18) {
        weft_executor *ex = make_executor(w);
        for (int kind = 0; kind < 7; kind++)
            for (size_t c = 0; c < 3; c++)
                for (int inside = 0; inside < 2; inside++)
                    for (long k = 0; k < 12; k++) {
                        oom_case oc = { ex, kind, N, &cfgs[c], hits, v, out, 0 };
                        memset((void *)hits, 0, N);
                        memcpy(out, v, N * 8);
                        atomic_store(&oom_count, k);
                        if (inside) {
                            int rr = weft_run_root(ex, oom_task, &oc);
                            atomic_store(&oom_count, -1);
                            if (rr != 0) { /* the root itself could not be queued */
                                ASSERT_EQ(rr, WEFT_ENOMEM);
                                continue;
                            }
                        } else {
                            oom_call(&oc);
                        }
                        atomic_store(&oom_count, -1);
                        if (oc.st != WEFT_OK && oc.st != WEFT_ENOMEM)
                            TEST_FAIL_("w=%u kind %d cfg %zu %s, failing allocation %ld: %d (%s)", w, kind, c,
                                       inside ? "inside" : "outside", k, oc.st, weft_errname(oc.st));
                    }
        weft_executor_destroy(ex);
    }
    weft_set_allocator(NULL);
    free(v), free(out), free((void *)hits);
}

/* ---- the default executor from threads that are not workers, at once ---- */
typedef struct outside { _Atomic int bad; unsigned seed; } outside;
static void *outside_thread(void *arg) {
    outside *o = arg;
    for (int round = 0; round < 4; round++) {
        size_t n = 4099 + (size_t)o->seed * 131 + (size_t)round * 7919;
        pol_calls(NULL, n, &o->bad);
        /* a sort cancelled from its comparator leaves a permutation */
        str s = { 0, { 0 } }, want = { 0, { 0 } };
        str *in = xmalloc(n * sizeof *in);
        for (size_t i = 0; i < n; i++) in[i] = str_of(i + o->seed), str_cat(&want, &in[i], NULL);
        if (weft_parallel_reduce(NULL, in, n, sizeof *in, &s, str_cat, NULL, &(weft_algo_config){ .chunk = 3 }) !=
                WEFT_OK ||
            !str_eq(&s, &want))
            atomic_fetch_add(&o->bad, 1);
        free(in);
    }
    return NULL;
}

TEST(algorithms_on_the_default_executor_from_several_outside_threads_at_once_are_exact) {
    pthread_t th[6];
    outside o[6];
    for (unsigned i = 0; i < 6; i++) {
        o[i] = (outside){ 0, i };
        ASSERT_EQ(pthread_create(&th[i], NULL, outside_thread, &o[i]), 0);
    }
    for (unsigned i = 0; i < 6; i++) {
        ASSERT_EQ(pthread_join(th[i], NULL), 0);
        ASSERT_EQ(atomic_load(&o[i].bad), 0);
    }
}

/* A sort whose comparator cancels the token midway: a permutation, ECANCELED or OK. */
typedef struct cancel_cmp { weft_cancel_token *tok; _Atomic size_t calls; size_t at; } cancel_cmp;
static int cmp_then_cancel(const void *a, const void *b, void *arg) {
    cancel_cmp *c = arg;
    if (atomic_fetch_add(&c->calls, 1) == c->at) (void)weft_cancel_token_cancel(c->tok);
    return rec_cmp(a, b, NULL);
}
TEST(a_sort_cancelled_by_its_comparator_leaves_a_permutation_on_each_worker_count) {
    enum { N = 30011 };
    rec *v = xmalloc(N * sizeof *v);
    for (size_t w = 0; w < NWORKERS; w++) {
        weft_executor *ex = make_executor(WORKERS[w]);
        for (size_t at = 0; at < 600000; at = at * 3 + 1) {
            uint64_t seed = at;
            for (size_t i = 0; i < N; i++) v[i] = (rec){ (uint32_t)(test_rand(&seed) % 1000), (uint32_t)i };
            cancel_cmp c = { weft_cancel_token_create(NULL, NULL), 0, at };
            ASSERT_NOT_NULL(c.tok);
            for (unsigned t = 0; t <= 4; t += 4) {
                weft_status st = weft_parallel_stable_sort(ex, v, N, sizeof *v, cmp_then_cancel, &c,
                                                           &(weft_algo_config){ .cancel = c.tok, .max_tasks = t });
                ASSERT_TRUE(st == WEFT_OK || st == WEFT_ECANCELED);
                unsigned char *seen = calloc(N, 1);
                for (size_t i = 0; i < N; i++) {
                    ASSERT_TRUE(v[i].seq < N && !seen[v[i].seq]);
                    seen[v[i].seq] = 1;
                }
                free(seen);
                if (st == WEFT_OK)
                    for (size_t i = 1; i < N; i++) ASSERT_TRUE(rec_cmp(&v[i - 1], &v[i], NULL) <= 0);
                ASSERT_OK(weft_cancel_token_reset(c.tok));
                atomic_store(&c.calls, 0);
            }
            weft_cancel_token_destroy(c.tok);
        }
        weft_executor_destroy(ex);
    }
    free(v);
}

/* algo.h: a body stops its call by cancelling the config's token; an emplaced
 * call's task then fails with WEFT_ECANCELED as its task_code. */
TEST(an_emplaced_loop_whose_body_cancels_its_token_fails_its_task_with_ecanceled) {
    weft_executor *ex = make_executor(2);
    probe *p = xmalloc(sizeof *p);
    memset(p, 0, sizeof *p);
    p->fire_at = 0;
    ASSERT_NOT_NULL(p->tok = weft_cancel_token_create(NULL, NULL));
    weft_for_desc d = { 0, CN, 1, probe_range, p, { .partitioner = WEFT_PARTITION_DYNAMIC, .chunk = 16, .max_tasks = 1, .cancel = p->tok } };
    weft_taskflow *tf = make_taskflow("stops");
    weft_task t = weft_emplace_for(tf, &d);
    ASSERT_FALSE(weft_task_is_null(t));
    ASSERT_OK(weft_task_set_name(t, "loop"));
    weft_future *f;
    ASSERT_OK(weft_run(ex, tf, &f));
    weft_status st = weft_future_wait(f);
    weft_run_info info;
    ASSERT_OK(weft_future_info(f, &info));
    ASSERT_STATUS(st, WEFT_ETASK);
    ASSERT_EQ(info.task_code, WEFT_ECANCELED);
    ASSERT_STREQ(info.failed_task, "loop");
    size_t ran = 0;
    for (size_t i = 0; i < CN; i++) ran += atomic_load(&p->runs[i]);
    ASSERT_EQ(ran, 16); /* one task, chunks in order: the first chunk only */
    weft_future_destroy(f);
    weft_taskflow_destroy(tf);
    weft_cancel_token_destroy(p->tok);
    free(p);
    weft_executor_destroy(ex);
}
