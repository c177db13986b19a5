/* Session 44 (h44-1): the contracts of the public headers, least-tested
 * calls first.  Each test checks promises of a doc comment that no other test
 * checked: documented errors, out-params on failure, getters of NULL, calls of
 * another executor, ordering.  The tests named a_* pin defects the sweep found
 * (each commit says which). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_barrier_t */
#endif
#include "harness.h"
#include "counting_alloc.h"
#include <weft.h>
#include <stdio.h>
#include <string.h>
#include <pthread.h>
#include <sched.h>
static weft_executor *mkex(unsigned n) { weft_status st; weft_executor *e = weft_executor_create(&(weft_executor_config){ .workers = n }, &st); ASSERT_OK(st); return e; }

static int nop(weft_ctx *c, void *a) { (void)c; (void)a; return 0; }
static int stg(weft_pipeflow *pf, void *a) { if (weft_pipeflow_token(pf) == 3) weft_pipeflow_stop(pf); return 0; }

TEST(mem_calls_take_zero_as_one_and_refuse_sizes_past_ptrdiff_max) {
    void *p = weft_mem_alloc(0); ASSERT_NOT_NULL(p); weft_mem_free(p, 0);
    unsigned char *q = weft_mem_realloc(NULL, 0, 16); ASSERT_NOT_NULL(q); memset(q, 7, 16);
    q = weft_mem_realloc(q, 16, 0); ASSERT_NOT_NULL(q); ASSERT_EQ(q[0], 7); weft_mem_free(q, 1);
    ASSERT_NULL(weft_mem_alloc(SIZE_MAX)); ASSERT_NULL(weft_mem_calloc(SIZE_MAX));
    char *r = weft_mem_alloc(8); ASSERT_NULL(weft_mem_realloc(r, 8, SIZE_MAX)); weft_mem_free(r, 8);
    weft_mem_free(NULL, 5);
}
TEST(version_string_and_number_match_the_header_macros) {
    char b[32]; snprintf(b, sizeof b, "%d.%d.%d", WEFT_VERSION_MAJOR, WEFT_VERSION_MINOR, WEFT_VERSION_PATCH);
    ASSERT_STREQ(weft_version(), b); ASSERT_EQ(weft_version_number(), WEFT_VERSION);
}
static int drops;
static void drop(void *s) { (void)s; drops++; }
TEST(work_retain_returns_its_argument_and_null_stays_null) {
    weft_status st;
    weft_work *w = weft_work_create(nop, NULL, drop, &st); ASSERT_OK(st);
    ASSERT_TRUE(weft_work_retain(w) == w); ASSERT_EQ(weft_work_refs(w), 2);
    ASSERT_NULL(weft_work_retain(NULL));
    weft_work_release(w); weft_work_release(w); ASSERT_EQ(drops, 1);
    ASSERT_NULL(weft_work_create(NULL, NULL, NULL, &st)); ASSERT_STATUS(st, WEFT_EINVAL);
}
TEST(params_refuse_nulls_accept_an_int_as_a_float_and_leave_out_alone_on_failure) {
    weft_status st; weft_params *p = weft_params_create(&st); ASSERT_OK(st);
    ASSERT_STATUS(weft_params_set_float(NULL, "x", 1), WEFT_EINVAL);
    ASSERT_STATUS(weft_params_set_float(p, NULL, 1), WEFT_EINVAL);
    ASSERT_STATUS(weft_params_set_string(p, "s", NULL), WEFT_EINVAL);
    ASSERT_OK(weft_params_set_float(p, "x", 2.5));
    int64_t i = 42; ASSERT_STATUS(weft_params_get_int(p, "x", &i), WEFT_EINVAL); ASSERT_EQ(i, 42);
    double d = 0; ASSERT_OK(weft_params_get_float(p, "x", &d)); ASSERT_TRUE(d == 2.5);
    ASSERT_OK(weft_params_set_int(p, "x", 3)); ASSERT_OK(weft_params_get_float(p, "x", &d)); ASSERT_TRUE(d == 3.0);
    ASSERT_OK(weft_params_set_int(p, "big", INT64_MAX)); ASSERT_OK(weft_params_get_float(p, "big", &d));
    ASSERT_OK(weft_params_set_bool(p, "b", true)); bool b = false; ASSERT_OK(weft_params_get_bool(p, "b", &b)); ASSERT_TRUE(b);
    ASSERT_STATUS(weft_params_get_float(p, "b", &d), WEFT_EINVAL);
    ASSERT_STATUS(weft_params_get_float(p, "nope", &d), WEFT_ENOENT);
    ASSERT_TRUE(strstr(weft_params_error_message(p), "nope") != NULL);
    ASSERT_OK(weft_params_set_string(p, "x", "hey")); const char *s = NULL; ASSERT_OK(weft_params_get_string(p, "x", &s)); ASSERT_STREQ(s, "hey");
    ASSERT_OK(weft_params_set_float(p, "", 1.0)); ASSERT_OK(weft_params_get_float(p, "", &d));
    weft_params_destroy(p); weft_params_destroy(NULL);
}
TEST(semaphore_max_reset_and_task_acquire_release_counts_as_documented) {
    weft_status st;
    ASSERT_NULL(weft_semaphore_create((size_t)INTPTR_MAX + 1, &st)); ASSERT_STATUS(st, WEFT_EINVAL);
    weft_semaphore *s = weft_semaphore_create((size_t)INTPTR_MAX, &st); ASSERT_OK(st);
    ASSERT_EQ(weft_semaphore_max(s), INTPTR_MAX); ASSERT_EQ(weft_semaphore_value(s), INTPTR_MAX);
    ASSERT_OK(weft_semaphore_reset(s)); ASSERT_EQ(weft_semaphore_value(s), INTPTR_MAX);
    ASSERT_STATUS(weft_semaphore_reset(NULL), WEFT_EINVAL); ASSERT_EQ(weft_semaphore_max(NULL), 0);
    weft_taskflow *tf = weft_taskflow_create(NULL, &st);
    weft_task t = weft_emplace(tf, nop, NULL);
    ASSERT_OK(weft_task_acquire(t, s)); ASSERT_OK(weft_task_acquire(t, s));
    ASSERT_OK(weft_task_release(t, s)); ASSERT_OK(weft_task_release(t, s));
    ASSERT_EQ(weft_task_num_acquires(t), 1); ASSERT_EQ(weft_task_num_releases(t), 2);
    ASSERT_EQ(weft_task_num_acquires(WEFT_TASK_NULL), 0);
    weft_executor *ex = mkex(2);
    /* acquire once, release twice: net +1 -> releases find all free? */
    ASSERT_STATUS(weft_run_and_wait(ex, tf), WEFT_ETASK);
    ASSERT_EQ(weft_semaphore_value(s), INTPTR_MAX);
    weft_executor_destroy(ex); weft_taskflow_destroy(tf);
    ASSERT_OK(weft_semaphore_destroy(s));
}
TEST(cancel_token_retain_returns_its_argument_and_null_for_null) {
    ASSERT_NULL(weft_cancel_token_retain(NULL));
    weft_cancel_token *t = weft_cancel_token_create(NULL, NULL);
    ASSERT_TRUE(weft_cancel_token_retain(t) == t);
    weft_cancel_token_destroy(t); weft_cancel_token_destroy(t);
}
TEST(pipeline_getters_and_setters_refuse_values_outside_their_enums) {
    weft_status st;
    weft_stage s[2] = {{WEFT_STAGE_SERIAL, stg, NULL, "a"}, {WEFT_STAGE_PARALLEL, stg, NULL, "b"}};
    weft_pipeline *p = weft_pipeline_create(3, s, 2, &st); ASSERT_OK(st);
    ASSERT_EQ(weft_pipeline_num_lines(p), 3); ASSERT_EQ(weft_pipeline_num_stages(p), 2);
    ASSERT_EQ(weft_pipeline_num_lines(NULL), 0);
    ASSERT_EQ(weft_pipeline_priority(p), WEFT_PRIORITY_NORMAL);
    ASSERT_EQ(weft_pipeline_priority(NULL), WEFT_PRIORITY_NORMAL);
    ASSERT_OK(weft_pipeline_set_priority(p, WEFT_PRIORITY_CRITICAL)); ASSERT_EQ(weft_pipeline_priority(p), WEFT_PRIORITY_CRITICAL);
    ASSERT_STATUS(weft_pipeline_set_priority(p, (weft_priority)99), WEFT_EINVAL); ASSERT_EQ(weft_pipeline_priority(p), WEFT_PRIORITY_CRITICAL);
    ASSERT_STATUS(weft_pipeline_set_priority(NULL, WEFT_PRIORITY_LOW), WEFT_EINVAL);
    ASSERT_STATUS(weft_pipeline_set_scheduling(p, (weft_pipeline_scheduling)7), WEFT_EINVAL);
    weft_stage bad = {(weft_stage_kind)5, stg, NULL, "x"};
    ASSERT_NULL(weft_pipeline_create(1, &bad, 1, &st)); ASSERT_STATUS(st, WEFT_EINVAL);
    ASSERT_NULL(weft_pipeline_create(65537, s, 2, &st)); ASSERT_STATUS(st, WEFT_EINVAL);
    weft_pipeline *p2 = weft_pipeline_create(65536, s, 1, &st); ASSERT_OK(st); ASSERT_OK(weft_pipeline_destroy(p2));
    ASSERT_OK(weft_pipeline_destroy(p)); ASSERT_OK(weft_pipeline_destroy(NULL));
}
static weft_gpu_device *emu(size_t mem) {
    weft_status st; weft_gpu_device *d = weft_gpu_open(&(weft_gpu_config){ .kind = WEFT_GPU_EMULATOR, .emulator_memory = mem }, &st);
    if (!d) SKIP("no emulator");
    return d;
}
TEST(gpu_emulator_calls_refuse_each_documented_bad_argument) {
    weft_gpu_device *d = emu(1 << 20), *d2 = emu(1 << 20);
    weft_status st = WEFT_OK;
    ASSERT_EQ(weft_gpu_device_kind(d), WEFT_GPU_EMULATOR); ASSERT_EQ(weft_gpu_device_kind(NULL), WEFT_GPU_AUTO);
    ASSERT_STREQ(weft_gpu_device_name(NULL), ""); ASSERT_NOT_NULL(weft_gpu_device_name(d));
    ASSERT_STREQ(weft_gpu_kind_name(WEFT_GPU_EMULATOR), "emulator"); ASSERT_STREQ(weft_gpu_kind_name((weft_gpu_kind)-1), "?");
    ASSERT_STREQ(weft_gpu_kind_name((weft_gpu_kind)5), "?"); ASSERT_STREQ(weft_gpu_kind_name(WEFT_GPU_AUTO), "auto");
    size_t fr = 0, tot = 0; ASSERT_OK(weft_gpu_mem_info(d, &fr, &tot)); ASSERT_EQ(tot, 1 << 20); ASSERT_LE(fr, tot);
    ASSERT_OK(weft_gpu_mem_info(d, NULL, NULL)); ASSERT_STATUS(weft_gpu_mem_info(NULL, &fr, &tot), WEFT_EINVAL);
    ASSERT_NULL(weft_gpu_buffer_create(d, 0, 4, 0, &st)); ASSERT_STATUS(st, WEFT_EINVAL);
    ASSERT_NULL(weft_gpu_buffer_create(d, 4, 0, 0, &st)); ASSERT_STATUS(st, WEFT_EINVAL);
    ASSERT_NULL(weft_gpu_buffer_create(d, SIZE_MAX / 2, 4, 0, &st)); ASSERT_STATUS(st, WEFT_EINVAL);
    ASSERT_NULL(weft_gpu_buffer_create(d, 4, 4, 2, &st)); ASSERT_STATUS(st, WEFT_EINVAL);
    ASSERT_NULL(weft_gpu_buffer_create(NULL, 4, 4, 0, &st)); ASSERT_STATUS(st, WEFT_EINVAL);
    ASSERT_NULL(weft_gpu_buffer_create(d, 1, 2 << 20, 0, &st)); ASSERT_STATUS(st, WEFT_ENOMEM);
    weft_gpu_buffer *b = weft_gpu_buffer_create(d, 12, 10, 0, &st); ASSERT_OK(st);
    ASSERT_EQ(weft_gpu_buffer_count(b), 10); ASSERT_EQ(weft_gpu_buffer_elem_size(b), 12); ASSERT_EQ(weft_gpu_buffer_bytes(b), 120);
    ASSERT_EQ(weft_gpu_buffer_elem_size(NULL), 0); ASSERT_NULL(weft_gpu_buffer_host_ptr(b)); ASSERT_NULL(weft_gpu_buffer_host_ptr(NULL));
    weft_gpu_buffer *m = weft_gpu_buffer_create(d, 4, 4, WEFT_GPU_MANAGED, &st); ASSERT_OK(st); ASSERT_NOT_NULL(weft_gpu_buffer_host_ptr(m));
    char host[240] = {0};
    ASSERT_OK(weft_gpu_copy_to_device(b, 10, host, 0));
    ASSERT_STATUS(weft_gpu_copy_to_device(b, 9, host, 2), WEFT_EINVAL);
    ASSERT_STATUS(weft_gpu_copy_to_device(b, SIZE_MAX, host, 2), WEFT_EINVAL);
    ASSERT_STATUS(weft_gpu_copy_to_host(b, 0, NULL, 1), WEFT_EINVAL);
    weft_gpu_stream *s2 = weft_gpu_stream_create(d2, &st); ASSERT_OK(st);
    ASSERT_TRUE(weft_gpu_stream_device(s2) == d2); ASSERT_NULL(weft_gpu_stream_device(NULL));
    ASSERT_STATUS(weft_gpu_copy_to_device_async(s2, b, 0, host, 1), WEFT_EINVAL);
    ASSERT_STATUS(weft_gpu_copy_to_host_async(s2, b, 0, host, 1), WEFT_EINVAL);
    ASSERT_OK(weft_gpu_stream_wait(s2)); ASSERT_STATUS(weft_gpu_stream_wait(NULL), WEFT_EINVAL);
    ASSERT_NULL(weft_gpu_host_alloc(d, 0, &st)); ASSERT_STATUS(st, WEFT_EINVAL);
    ASSERT_NULL(weft_gpu_host_alloc(NULL, 8, &st)); ASSERT_STATUS(st, WEFT_EINVAL);
    void *h = weft_gpu_host_alloc(d, 8, &st); ASSERT_OK(st); weft_gpu_host_free(d, h); weft_gpu_host_free(d, NULL);
    ASSERT_NULL(weft_gpu_stream_pool_create(d, 257, &st)); ASSERT_STATUS(st, WEFT_EINVAL);
    weft_gpu_stream_pool *p = weft_gpu_stream_pool_create(d, 0, &st); ASSERT_OK(st); ASSERT_EQ(weft_gpu_stream_pool_size(p), 4);
    ASSERT_TRUE(weft_gpu_stream_pool_get(p, 5) == weft_gpu_stream_pool_get(p, 1)); ASSERT_NULL(weft_gpu_stream_pool_get(NULL, 0));
    ASSERT_EQ(weft_gpu_stream_pool_size(weft_gpu_device_pool(d)), 4);
    weft_gpu_stream_pool_destroy(p);
    weft_gpu_stream_destroy(s2);
    weft_gpu_buffer_destroy(m); weft_gpu_buffer_destroy(b); weft_gpu_buffer_destroy(NULL);
    weft_gpu_close(d); weft_gpu_close(d2); weft_gpu_close(NULL);
    ASSERT_NULL(weft_gpu_open(&(weft_gpu_config){ .kind = (weft_gpu_kind)9 }, &st)); ASSERT_STATUS(st, WEFT_EINVAL);
    ASSERT_NULL(weft_gpu_open(&(weft_gpu_config){ .kind = WEFT_GPU_EMULATOR, .streams = 257 }, &st)); ASSERT_STATUS(st, WEFT_EINVAL);
}
#include <weft/algo_typed.h>
#include <math.h>
TEST(typed_scans_sorts_and_reductions_are_exact_at_1_2_4_workers_also_streaming) {
    for (unsigned w = 1; w <= 4; w *= 2) {
        weft_executor *ex = mkex(w);
        size_t ns[] = {0, 1, 2, 17, 1000, 70000};
        for (size_t k = 0; k < sizeof ns / sizeof *ns; k++) {
            size_t n = ns[k];
            float *in = malloc((n + 1) * 4), *out = malloc((n + 1) * 4);
            uint64_t *ui = malloc((n + 1) * 8), *uo = malloc((n + 1) * 8);
            for (size_t i = 0; i < n; i++) { in[i] = (float)(i % 3); ui[i] = UINT64_MAX - i % 5; }
            float init = 5;
            ASSERT_OK(weft_float_sum_inclusive_scan(ex, in, out, n, &init, NULL));
            float acc = 5; for (size_t i = 0; i < n; i++) { acc += in[i]; if (out[i] != acc) TEST_FAIL_("w%u n%zu i%zu %f %f", w, n, i, out[i], acc); }
            ASSERT_OK(weft_float_sum_exclusive_scan(ex, in, out, n, 2.0f, NULL));
            acc = 2; for (size_t i = 0; i < n; i++) { if (out[i] != acc) TEST_FAIL_("ex w%u n%zu i%zu", w, n, i); acc += in[i]; }
            ASSERT_OK(weft_u64_sum_exclusive_scan(ex, ui, uo, n, 7, NULL));
            uint64_t ua = 7; for (size_t i = 0; i < n; i++) { if (uo[i] != ua) TEST_FAIL_("u w%u n%zu i%zu", w, n, i); ua += ui[i]; }
            uint64_t r = 3; ASSERT_OK(weft_u64_sum_reduce(ex, ui, n, &r, NULL)); ASSERT_TRUE(r == ua - 7 + 3);
            /* in place */
            memcpy(uo, ui, n * 8);
            ASSERT_OK(weft_u64_sum_inclusive_scan(ex, uo, uo, n, NULL, NULL));
            ua = 0; for (size_t i = 0; i < n; i++) { ua += ui[i]; if (uo[i] != ua) TEST_FAIL_("ip w%u n%zu i%zu", w, n, i); }
            memcpy(uo, ui, n * 8);
            ASSERT_OK(weft_u64_sum_exclusive_scan(ex, uo, uo, n, 1, NULL));
            ua = 1; for (size_t i = 0; i < n; i++) { if (uo[i] != ua) TEST_FAIL_("ipx w%u n%zu i%zu", w, n, i); ua += ui[i]; }
            /* nans-last stable sort: NaNs keep input order (payload) */
            for (size_t i = 0; i < n; i++) { if (i % 4 == 0) { uint32_t b = 0x7fc00000u | (uint32_t)(i / 4); memcpy(&in[i], &b, 4); } else in[i] = (float)((n - i) % 7) - 3; }
            memcpy(out, in, n * 4);
            ASSERT_OK(weft_float_nans_last_stable_sort(ex, out, n, NULL));
            size_t i = 0, q = 0;
            for (; i < n && !isnan(out[i]); i++) if (i && out[i] < out[i - 1]) TEST_FAIL_("order w%u n%zu i%zu", w, n, i);
            for (; i < n; i++, q += 4) { uint32_t b; memcpy(&b, &out[i], 4); if (!isnan(out[i]) || (b & 0x3fffff) != q / 4) TEST_FAIL_("nan w%u n%zu i%zu", w, n, i); }
            ASSERT_EQ(q, (n + 3) / 4 * 4);
            int64_t *li = (int64_t *)ui; for (size_t j = 0; j < n; j++) li[j] = j % 3 == 0 ? INT64_MIN : j % 3 == 1 ? INT64_MAX : (int64_t)j - 50;
            ASSERT_OK(weft_i64_sort(ex, li, n, NULL)); for (size_t j = 1; j < n; j++) ASSERT_TRUE(li[j - 1] <= li[j]);
            free(in); free(out); free(ui); free(uo);
        }
        weft_executor_destroy(ex);
    }
    /* An output of weft_algo_stream_bytes() or more is written with streaming
     * stores (x86-64): a u64 scan that large, not in place, stays exact. */
    size_t n = weft_algo_stream_bytes() / 8 + 3;
    uint64_t *in = malloc(n * 8), *out = malloc(n * 8);
    ASSERT_NOT_NULL(in); ASSERT_NOT_NULL(out);
    for (size_t i = 0; i < n; i++) in[i] = i % 7;
    weft_executor *ex = mkex(2);
    ASSERT_OK(weft_u64_sum_exclusive_scan(ex, in, out, n, 5, NULL));
    uint64_t acc = 5;
    for (size_t i = 0; i < n; i++) { if (out[i] != acc) TEST_FAIL_("streamed scan at %zu", i); acc += in[i]; }
    weft_executor_destroy(ex);
    free(in); free(out);
}
static int failer(weft_ctx *c, void *a) { (void)c; return (int)(intptr_t)a; }
static atomic_int gate;
static atomic_int started;
static int blocker(weft_ctx *c, void *a) { (void)a; atomic_store(&started, 1); while (!atomic_load(&gate) && !weft_ctx_cancelled(c)) ; return 0; }
TEST(run_many_keeps_errors_per_member_and_its_calls_refuse_other_futures) {
    weft_executor *ex = mkex(2);
    weft_status st;
    weft_taskflow *a = weft_taskflow_create("a", &st), *b = weft_taskflow_create("b", &st), *c = weft_taskflow_create("c", &st);
    weft_emplace(a, nop, NULL); weft_emplace(b, failer, (void *)(intptr_t)42);
    weft_task x = weft_emplace(c, nop, NULL), y = weft_emplace(c, nop, NULL);
    weft_precede(x, y); weft_precede(y, x);
    weft_taskflow *tfs[4] = {a, NULL, b, c};
    weft_future *all = NULL;
    ASSERT_OK(weft_run_many(ex, tfs, 4, &all));
    ASSERT_STATUS(weft_future_wait(all), WEFT_ETASK);
    weft_run_info info;
    ASSERT_OK(weft_future_info(all, &info));
    ASSERT_STATUS(info.status, WEFT_ETASK); ASSERT_EQ(info.task_code, WEFT_EINVAL); ASSERT_EQ(info.iterations, 1);
    ASSERT_OK(weft_run_many_status(all, 0)); ASSERT_STATUS(weft_run_many_status(all, 1), WEFT_EINVAL);
    ASSERT_STATUS(weft_run_many_status(all, 2), WEFT_ETASK); ASSERT_STATUS(weft_run_many_status(all, 3), WEFT_ECYCLE);
    ASSERT_STATUS(weft_run_many_status(all, 4), WEFT_EINVAL);
    memset(&info, 0x5a, sizeof info);
    ASSERT_OK(weft_run_many_info(all, 3, &info)); ASSERT_STATUS(info.status, WEFT_ECYCLE); ASSERT_EQ(info.task_code, 0); ASSERT_EQ(info.skipped, 0);
    ASSERT_OK(weft_run_many_info(all, 2, &info)); ASSERT_EQ(info.task_code, 42);
    ASSERT_STATUS(weft_run_many_info(all, 0, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_run_many_info(all, 9, &info), WEFT_EINVAL);
    ASSERT_STATUS(weft_run_many_cancel(all), WEFT_ENOENT);
    weft_future_destroy(all);
    weft_future *one = NULL; ASSERT_OK(weft_run(ex, a, &one)); ASSERT_OK(weft_future_wait(one));
    ASSERT_STATUS(weft_run_many_status(one, 0), WEFT_EINVAL); ASSERT_STATUS(weft_run_many_cancel(one), WEFT_EINVAL);
    ASSERT_STATUS(weft_run_many_info(one, 0, &info), WEFT_EINVAL);
    ASSERT_STATUS(weft_run_many_cancel(NULL), WEFT_EINVAL);
    weft_future_destroy(one);
    ASSERT_OK(weft_run_many(ex, NULL, 0, &all)); ASSERT_OK(weft_future_wait(all)); ASSERT_STATUS(weft_run_many_status(all, 0), WEFT_EINVAL); weft_future_destroy(all);
    ASSERT_STATUS(weft_run_many(ex, NULL, 1, &all), WEFT_EINVAL);
    weft_status sts[4] = {99, 99, 99, 99};
    ASSERT_STATUS(weft_run_many_and_wait(ex, tfs, 4, sts), WEFT_EINVAL);
    ASSERT_OK(sts[0]); ASSERT_STATUS(sts[1], WEFT_EINVAL); ASSERT_STATUS(sts[2], WEFT_ETASK); ASSERT_STATUS(sts[3], WEFT_ECYCLE);
    /* cancel a going set */
    weft_taskflow *d = weft_taskflow_create("d", &st); weft_emplace(d, blocker, NULL);
    weft_taskflow *tf2[2] = {d, a};
    atomic_store(&gate, 0);
    ASSERT_OK(weft_run_many(ex, tf2, 2, &all));
    ASSERT_OK(weft_run_many_cancel(all));
    ASSERT_OK(weft_future_wait(all) == WEFT_ECANCELED ? WEFT_OK : weft_future_status(all));
    ASSERT_STATUS(weft_run_many_status(all, 0), WEFT_ECANCELED);
    weft_future_destroy(all);
    weft_executor_destroy(ex);
    weft_taskflow_destroy(a); weft_taskflow_destroy(b); weft_taskflow_destroy(c); weft_taskflow_destroy(d);
}
static bool never(void *a) { (void)a; return true; }
#define SENT ((weft_future *)(uintptr_t)0x1234)
TEST(every_submission_refused_sets_its_future_out_param_to_null) {
    weft_executor *ex = mkex(2);
    weft_status st;
    weft_taskflow *c = weft_taskflow_create("c", &st);
    weft_task x = weft_emplace(c, nop, NULL), y = weft_emplace(c, nop, NULL);
    weft_precede(x, y); weft_precede(y, x);
    weft_future *f; int bad = 0;
#define CHK(call, want) do { f = SENT; weft_status s_ = (call); if (s_ != (want) || f != NULL) { fprintf(stderr, "%s: %s f=%p\n", #call, weft_errname(s_), (void *)f); bad++; } } while (0)
    CHK(weft_run(ex, NULL, &f), WEFT_EINVAL);
    CHK(weft_run(ex, c, &f), WEFT_ECYCLE);
    CHK(weft_run_n(ex, c, 2, &f), WEFT_ECYCLE);
    CHK(weft_run_n(ex, NULL, 2, &f), WEFT_EINVAL);
    CHK(weft_run_until(ex, c, never, NULL, &f), WEFT_ECYCLE);
    CHK(weft_run_until(ex, c, NULL, NULL, &f), WEFT_EINVAL);
    CHK(weft_run_n_parallel(ex, c, 2, &f), WEFT_ECYCLE);
    CHK(weft_run_n_parallel(ex, NULL, 2, &f), WEFT_EINVAL);
    CHK(weft_run_with_priority(ex, c, WEFT_PRIORITY_HIGH, &f), WEFT_ECYCLE);
    CHK(weft_run_with_priority(ex, c, (weft_priority)77, &f), WEFT_EINVAL);
    CHK(weft_run_many(ex, NULL, 3, &f), WEFT_EINVAL);
    CHK(weft_async(ex, NULL, NULL, &f), WEFT_EINVAL);
    CHK(weft_dependent_async(ex, NULL, NULL, NULL, 0, &f), WEFT_EINVAL);
    CHK(weft_dependent_async(ex, nop, NULL, NULL, 2, &f), WEFT_EINVAL);
    CHK(weft_async_with(ex, nop, NULL, &(weft_async_options){ .priority = (weft_priority)77 }, &f), WEFT_EINVAL);
    CHK(weft_async_acquire(ex, nop, NULL, NULL, 1, &f), WEFT_EINVAL);
    weft_semaphore *nul = NULL;
    CHK(weft_async_acquire(ex, nop, NULL, &nul, 1, &f), WEFT_EINVAL);
    ASSERT_EQ(bad, 0);
    weft_taskflow_destroy(c);
    weft_executor_destroy(ex);
}
TEST(dependencies_of_another_executor_or_not_async_are_refused) {
    weft_executor *ex = mkex(2), *ex2 = mkex(1);
    weft_status st;
    weft_future *a2 = NULL, *runf = NULL, *f = SENT, *set = NULL;
    ASSERT_OK(weft_async(ex2, nop, NULL, &a2));
    weft_taskflow *tf = weft_taskflow_create("t", &st); weft_emplace(tf, nop, NULL);
    ASSERT_OK(weft_run(ex, tf, &runf));
    weft_taskflow *tfs[1] = {tf};
    ASSERT_OK(weft_run_many(ex, tfs, 1, &set));
    int bad = 0;
    CHK(weft_dependent_async(ex, nop, NULL, &a2, 1, &f), WEFT_EINVAL);
    CHK(weft_dependent_async(ex, nop, NULL, &runf, 1, &f), WEFT_EINVAL);
    CHK(weft_dependent_async(ex, nop, NULL, &set, 1, &f), WEFT_EINVAL);
    weft_future *nulf = NULL;
    CHK(weft_dependent_async(ex, nop, NULL, &nulf, 1, &f), WEFT_EINVAL);
    CHK(weft_async_with(ex, nop, NULL, &(weft_async_options){ .deps = &a2, .ndeps = 1 }, &f), WEFT_EINVAL);
    CHK(weft_async_with(ex, nop, NULL, &(weft_async_options){ .deps = &runf, .ndeps = 1, .priority = WEFT_PRIORITY_HIGH }, &f), WEFT_EINVAL);
    CHK(weft_async_with(ex, nop, NULL, &(weft_async_options){ .deps = NULL, .ndeps = 1 }, &f), WEFT_EINVAL);
    ASSERT_EQ(bad, 0);
    ASSERT_OK(weft_future_wait(a2)); ASSERT_OK(weft_future_wait(runf)); ASSERT_OK(weft_future_wait(set));
    /* finished deps of the right executor: runs */
    weft_future *a1 = NULL; ASSERT_OK(weft_async(ex, nop, NULL, &a1)); ASSERT_OK(weft_future_wait(a1));
    weft_future *deps[3] = {a1, a1, a1};
    ASSERT_OK(weft_dependent_async(ex, nop, NULL, deps, 3, &f)); ASSERT_OK(weft_future_wait(f)); weft_future_destroy(f);
    weft_future_destroy(a1); weft_future_destroy(a2); weft_future_destroy(runf); weft_future_destroy(set);
    weft_taskflow_destroy(tf);
    weft_executor_destroy(ex); weft_executor_destroy(ex2);
}
#include <signal.h>
static int pre_task(weft_ctx *c, void *a) {
    int *r = a;
    r[0] = weft_preempt_thread(NULL);
    r[1] = weft_preempt_thread(c);
    return 0;
}
TEST(preempt_calls_before_install_say_enoent_and_a_second_signal_is_ebusy) {
    weft_preempt_watch w;
    weft_cancel_token *t = weft_cancel_token_create(NULL, NULL);
    ASSERT_STATUS(weft_preempt_watch_begin(&w, t), WEFT_ENOENT);
    weft_preempt_watch_end(&w); weft_preempt_watch_end(NULL);
    ASSERT_STATUS(weft_preempt_watch_begin(NULL, t), WEFT_EINVAL);
    weft_executor *ex = mkex(1);
    int r[2] = {99, 99};
    ASSERT_OK(weft_run_root_status(ex, pre_task, r, NULL));
    ASSERT_STATUS(r[0], WEFT_EINVAL); ASSERT_STATUS(r[1], WEFT_ENOENT);
    ASSERT_FALSE(weft_preempt_requested());
    ASSERT_STATUS(weft_preempt_install(&(weft_preempt_config){ .signo = -1 }), WEFT_EINVAL);
    ASSERT_STATUS(weft_preempt_install(&(weft_preempt_config){ .signo = 65 }), WEFT_EINVAL);
    ASSERT_STATUS(weft_preempt_install(&(weft_preempt_config){ .signo = SIGKILL }), WEFT_EINVAL);
    ASSERT_OK(weft_preempt_install(NULL));
    ASSERT_OK(weft_preempt_install(&(weft_preempt_config){ .signo = SIGUSR2 }));
    weft_status s2 = weft_preempt_install(&(weft_preempt_config){ .signo = SIGUSR1 });
    ASSERT_STATUS(s2, WEFT_EBUSY); /* another signal than the one installed */
    ASSERT_OK(weft_preempt_watch_begin(&w, t));
    ASSERT_OK(weft_cancel_token_cancel(t));
    ASSERT_TRUE(weft_preempt_requested());
    weft_preempt_watch_end(&w);
    ASSERT_FALSE(weft_preempt_requested());
    raise(SIGUSR2); ASSERT_TRUE(weft_preempt_requested()); weft_preempt_clear(); ASSERT_FALSE(weft_preempt_requested());
    weft_cancel_token_destroy(t);
    weft_executor_destroy(ex);
}
TEST(a_preempt_watch_refused_for_a_null_token_leaves_a_slot_that_watch_end_ignores) {
    weft_preempt_watch w;
    memset(&w, 0xab, sizeof w); /* the caller's stack: whatever was there */
    ASSERT_STATUS(weft_preempt_watch_begin(&w, NULL), WEFT_EINVAL);
    weft_preempt_watch_end(&w); /* "a watch that failed to open: a no-op" */
    ASSERT_FALSE(weft_preempt_requested());
}
static atomic_int hits[8];
static int mark(weft_ctx *c, void *a) { (void)c; atomic_fetch_add(&hits[(intptr_t)a], 1); return 0; }
static int pick1(weft_ctx *c, void *a) { (void)c; (void)a; atomic_fetch_add(&hits[0], 1); return 1; }
TEST(graph_edits_shift_branches_and_break_or_make_cycles_as_documented) {
    weft_executor *ex = mkex(2); weft_status st;
    weft_taskflow *tf = weft_taskflow_create("e", &st);
    weft_task c = weft_emplace_condition(tf, pick1, NULL);
    weft_task a = weft_emplace(tf, mark, (void *)1), b = weft_emplace(tf, mark, (void *)2), d = weft_emplace(tf, mark, (void *)3);
    ASSERT_OK(weft_precede(c, a)); ASSERT_OK(weft_precede(c, b)); ASSERT_OK(weft_precede(c, d));
    ASSERT_OK(weft_edge_remove(c, b));
    ASSERT_STATUS(weft_edge_remove(c, b), WEFT_ENOENT);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(hits[1], 0); ASSERT_EQ(hits[2], 1); ASSERT_EQ(hits[3], 1); /* b: a source now */
    /* a cycle broken by an edit runs; one made by an edit is refused */
    weft_taskflow *t2 = weft_taskflow_create("cyc", &st);
    weft_task x = weft_emplace(t2, mark, (void *)4), y = weft_emplace(t2, mark, (void *)5), z = weft_emplace(t2, mark, (void *)6);
    ASSERT_OK(weft_precede(x, y)); ASSERT_OK(weft_precede(y, z)); ASSERT_OK(weft_precede(z, x));
    ASSERT_STATUS(weft_run_and_wait(ex, t2), WEFT_ECYCLE);
    ASSERT_OK(weft_edge_remove(z, x));
    ASSERT_OK(weft_run_and_wait(ex, t2)); ASSERT_EQ(hits[6], 1);
    ASSERT_OK(weft_precede(z, y));
    ASSERT_STATUS(weft_run_and_wait(ex, t2), WEFT_ECYCLE);
    ASSERT_OK(weft_task_remove_dependents(y));
    ASSERT_OK(weft_run_and_wait(ex, t2)); ASSERT_EQ(hits[6], 2); ASSERT_EQ(hits[4], 2);
    ASSERT_OK(weft_precede(z, x)); ASSERT_OK(weft_precede(x, y));
    ASSERT_STATUS(weft_run_and_wait(ex, t2), WEFT_ECYCLE);
    ASSERT_OK(weft_task_remove_successors(z));
    ASSERT_OK(weft_run_and_wait(ex, t2)); ASSERT_EQ(hits[6], 3);
    ASSERT_OK(weft_precede(z, x));
    ASSERT_STATUS(weft_run_and_wait(ex, t2), WEFT_ECYCLE);
    ASSERT_OK(weft_task_erase(x));
    ASSERT_OK(weft_run_and_wait(ex, t2)); ASSERT_EQ(hits[6], 4); ASSERT_EQ(hits[5], 4);
    /* a double edge is removed whole */
    weft_task p = weft_emplace(t2, mark, (void *)7);
    ASSERT_OK(weft_precede(p, z)); ASSERT_OK(weft_precede(p, z));
    ASSERT_EQ(weft_task_num_dependents(z), 3);
    ASSERT_OK(weft_edge_remove(p, z)); ASSERT_EQ(weft_task_num_dependents(z), 1); ASSERT_EQ(weft_task_num_successors(p), 0);
    ASSERT_OK(weft_run_and_wait(ex, t2)); ASSERT_EQ(hits[6], 5);
    weft_task other = weft_emplace(tf, mark, (void *)1);
    ASSERT_STATUS(weft_edge_remove(p, other), WEFT_EINVAL);
    weft_taskflow_destroy(tf); weft_taskflow_destroy(t2); weft_executor_destroy(ex);
}
#include <poll.h>
#include <unistd.h>
TEST(future_fd_is_one_descriptor_readable_once_the_future_is_ready) {
    weft_executor *ex = mkex(1);
    atomic_store(&gate, 0);
    weft_future *f; ASSERT_OK(weft_async(ex, blocker, NULL, &f));
    int fd = -1, fd2 = -2; ASSERT_OK(weft_future_fd(f, &fd)); ASSERT_OK(weft_future_fd(f, &fd2)); ASSERT_EQ(fd, fd2);
    struct pollfd p = { fd, POLLIN, 0 };
    ASSERT_EQ(poll(&p, 1, 0), 0);
    atomic_store(&gate, 1);
    ASSERT_EQ(poll(&p, 1, 5000), 1); ASSERT_EQ(poll(&p, 1, 0), 1);
    ASSERT_TRUE(weft_future_ready(f));
    weft_future_destroy(f);
    ASSERT_OK(weft_async(ex, nop, NULL, &f)); ASSERT_OK(weft_future_wait(f));
    ASSERT_OK(weft_future_fd(f, &fd)); p.fd = fd; ASSERT_EQ(poll(&p, 1, 0), 1);
    ASSERT_STATUS(weft_future_fd(f, NULL), WEFT_EINVAL); ASSERT_STATUS(weft_future_fd(NULL, &fd), WEFT_EINVAL);
    weft_future_destroy(f);
    weft_executor_destroy(ex);
}
TEST(sched_handles_of_another_executor_are_einval_and_removed_ones_enoent) {
    weft_executor *ex = mkex(1), *ex2 = mkex(1);
    atomic_store(&gate, 0); atomic_store(&started, 0);
    weft_future *b; ASSERT_OK(weft_async(ex, blocker, NULL, &b));
    while (!atomic_load(&started)) sched_yield(); /* the one worker is taken: what follows stays queued */
    weft_sched_handle h = {0, 0}, h2 = {0, 0};
    weft_future *f = NULL, *g = NULL;
    ASSERT_OK(weft_async_with(ex, nop, NULL, &(weft_async_options){ .handle = &h }, &f));
    ASSERT_OK(weft_async_with(ex, nop, NULL, &(weft_async_options){ .handle = &h2, .priority = WEFT_PRIORITY_LOW, .deps = &f, .ndeps = 1 }, &g));
    ASSERT_FALSE(h.slot == 0 && h.gen == 0);
    weft_priority pr = (weft_priority)77;
    ASSERT_OK(weft_sched_priority(ex, h, &pr)); ASSERT_EQ(pr, WEFT_PRIORITY_NORMAL);
    pr = (weft_priority)77;
    ASSERT_STATUS(weft_sched_priority(ex2, h, &pr), WEFT_EINVAL); ASSERT_EQ(pr, 77);
    ASSERT_STATUS(weft_sched_priority(ex, (weft_sched_handle){0, 0}, &pr), WEFT_ENOENT); ASSERT_EQ(pr, 77);
    ASSERT_STATUS(weft_sched_priority(ex, h, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_sched_reprioritize(ex, h, (weft_priority)9), WEFT_EINVAL);
    ASSERT_STATUS(weft_sched_reprioritize(ex2, h, WEFT_PRIORITY_HIGH), WEFT_EINVAL);
    ASSERT_STATUS(weft_sched_remove(ex2, h), WEFT_EINVAL);
    ASSERT_OK(weft_sched_reprioritize(ex, h, WEFT_PRIORITY_HIGH));
    size_t n = 99; ASSERT_OK(weft_sched_snapshot(ex, NULL, 0, &n)); ASSERT_GE(n, 1);
    ASSERT_STATUS(weft_sched_snapshot(ex, NULL, 1, &n), WEFT_EINVAL);
    ASSERT_OK(weft_sched_escalate(ex, NULL));
    /* remove the dependency: the dependent still runs (deps finish whatever their status) */
    ASSERT_OK(weft_sched_remove(ex, h));
    ASSERT_TRUE(weft_future_ready(f)); ASSERT_STATUS(weft_future_status(f), WEFT_ECANCELED);
    ASSERT_STATUS(weft_sched_remove(ex, h), WEFT_ENOENT);
    ASSERT_STATUS(weft_sched_priority(ex, h, &pr), WEFT_ENOENT);
    atomic_store(&gate, 1);
    ASSERT_OK(weft_future_wait(g));
    ASSERT_OK(weft_future_wait(b));
    weft_sched_stats s; ASSERT_OK(weft_sched_get_stats(ex, &s)); ASSERT_EQ(s.removed, 1); ASSERT_EQ(s.queued, 0);
    ASSERT_STREQ(weft_priority_name((weft_priority)-2), "?"); ASSERT_STREQ(weft_priority_name(WEFT_PRIORITY_CRITICAL), "critical");
    weft_future_destroy(b); weft_future_destroy(f); weft_future_destroy(g);
    weft_executor_destroy(ex); weft_executor_destroy(ex2);
}
static atomic_int mhits[200];
static int mh(weft_ctx *c, void *a) { (void)c; atomic_fetch_add(&mhits[(intptr_t)a], 1); return 0; }
static int mc_rc[8];
static int multi(weft_ctx *c, void *a, weft_branches *out) {
    (void)c; (void)a;
    mc_rc[0] = weft_branches_add(out, 0);
    mc_rc[1] = weft_branches_add(out, 64);
    mc_rc[2] = weft_branches_add(out, 129);
    mc_rc[3] = weft_branches_add(out, 130);
    mc_rc[4] = weft_branches_add(out, 64);
    mc_rc[5] = weft_branches_add(NULL, 1);
    mc_rc[6] = weft_branches_add(out, 63);
    mc_rc[7] = weft_branches_add(out, UINT32_MAX);
    return 0;
}
static int sfd[6];
static int sub(weft_ctx *c, weft_subflow *sf, void *a) {
    (void)c;
    weft_emplace(weft_subflow_graph(sf), nop, NULL);
    if (a) { sfd[0] = weft_subflow_detach(sf); sfd[1] = weft_subflow_detached(sf); sfd[2] = weft_subflow_detach(sf); sfd[3] = weft_subflow_join(sf); }
    else { sfd[0] = weft_subflow_join(sf); sfd[1] = weft_subflow_detached(sf); sfd[2] = weft_subflow_detach(sf); sfd[3] = weft_subflow_detached(sf); sfd[4] = weft_subflow_join(sf); }
    return 0;
}
TEST(multi_condition_branches_past_64_and_subflow_detach_join_rules) {
    weft_executor *ex = mkex(2); weft_status st;
    weft_taskflow *tf = weft_taskflow_create("m", &st);
    weft_task m = weft_emplace_multi_condition(tf, multi, NULL);
    for (intptr_t i = 0; i < 130; i++) ASSERT_OK(weft_precede(m, weft_emplace(tf, mh, (void *)i)));
    for (int r = 0; r < 2; r++) {
        ASSERT_OK(weft_run_and_wait(ex, tf));
        for (int i = 0; i < 130; i++) ASSERT_EQ(mhits[i], (i == 0 || i == 63 || i == 64 || i == 129) ? r + 1 : 0);
        ASSERT_OK(mc_rc[0]); ASSERT_OK(mc_rc[1]); ASSERT_OK(mc_rc[2]); ASSERT_STATUS(mc_rc[3], WEFT_EINVAL);
        ASSERT_OK(mc_rc[4]); ASSERT_STATUS(mc_rc[5], WEFT_EINVAL); ASSERT_OK(mc_rc[6]); ASSERT_STATUS(mc_rc[7], WEFT_EINVAL);
    }
    weft_taskflow *t2 = weft_taskflow_create("s", &st);
    weft_emplace_subflow(t2, sub, (void *)1);
    ASSERT_OK(weft_run_and_wait(ex, t2));
    ASSERT_OK(sfd[0]); ASSERT_TRUE(sfd[1]); ASSERT_OK(sfd[2]); ASSERT_STATUS(sfd[3], WEFT_EINVAL);
    weft_taskflow *t3 = weft_taskflow_create("s", &st);
    weft_emplace_subflow(t3, sub, NULL);
    ASSERT_OK(weft_run_and_wait(ex, t3));
    ASSERT_OK(sfd[0]); ASSERT_FALSE(sfd[1]); ASSERT_STATUS(sfd[2], WEFT_EINVAL); ASSERT_FALSE(sfd[3]); ASSERT_OK(sfd[4]);
    ASSERT_FALSE(weft_subflow_detached(NULL));
    weft_taskflow_destroy(tf); weft_taskflow_destroy(t2); weft_taskflow_destroy(t3); weft_executor_destroy(ex);
}
static bool collect(weft_task t, void *a) { size_t *v = a; v[++v[0]] = weft_task_index(t); return true; }
TEST(for_each_task_visits_in_index_order_skipping_erased_slots_as_graph_h_says) {
    weft_status st;
    weft_taskflow *tf = weft_taskflow_create("fe", &st);
    weft_task a = weft_emplace(tf, nop, NULL), b = weft_emplace(tf, nop, NULL), c = weft_emplace(tf, nop, NULL);
    (void)a; (void)c;
    ASSERT_OK(weft_task_erase(b));
    size_t v[8] = {0};
    ASSERT_OK(weft_taskflow_for_each_task(tf, collect, v));
    ASSERT_EQ(v[0], 2); ASSERT_EQ(v[1], 0); ASSERT_EQ(v[2], 2);
    weft_task d = weft_emplace(tf, nop, NULL); /* takes b's slot */
    ASSERT_EQ(weft_task_index(d), 1);
    memset(v, 0, sizeof v);
    ASSERT_OK(weft_taskflow_for_each_task(tf, collect, v));
    ASSERT_EQ(v[0], 3); ASSERT_EQ(v[1], 0); ASSERT_EQ(v[2], 1); ASSERT_EQ(v[3], 2); /* d before c */
    weft_taskflow_destroy(tf);
}
static int cb_runs;
static void on_c(void *a, const char *r) { (void)a; (void)r; cb_runs++; }
TEST(cancel_token_children_resets_and_deadlines_behave_as_documented) {
    weft_cancel_token *p = weft_cancel_token_create(NULL, NULL);
    ASSERT_OK(weft_cancel_token_cancel_with(p, "why"));
    weft_cancel_token *c = weft_cancel_token_create(p, NULL);
    ASSERT_TRUE(weft_cancel_token_is_cancelled(c)); ASSERT_STREQ(weft_cancel_token_reason(c), "why");
    uint64_t n0 = weft_cancel_token_cancel_count(c);
    ASSERT_OK(weft_cancel_token_reset(c));
    ASSERT_TRUE(weft_cancel_token_is_cancelled(c)); ASSERT_STREQ(weft_cancel_token_reason(c), "why");
    ASSERT_EQ(weft_cancel_token_cancel_count(c), n0 + 1);
    ASSERT_OK(weft_cancel_token_reset(p)); ASSERT_OK(weft_cancel_token_reset(c));
    ASSERT_FALSE(weft_cancel_token_is_cancelled(c));
    weft_cancel_callback *h = NULL;
    ASSERT_OK(weft_cancel_token_on_cancel(c, on_c, NULL, &h));
    ASSERT_OK(weft_cancel_token_cancel(p));
    ASSERT_TRUE(weft_cancel_token_is_cancelled(c)); ASSERT_EQ(cb_runs, 1);
    ASSERT_FALSE(weft_cancel_callback_remove(h));
    ASSERT_STATUS(weft_cancel_token_cancel(c), WEFT_ECANCELED);
    /* deadlines */
    weft_cancel_token *d = weft_cancel_token_create(NULL, NULL);
    ASSERT_OK(weft_cancel_after(d, 1000000000ull)); ASSERT_OK(weft_cancel_after(d, UINT64_MAX));
    ASSERT_FALSE(weft_cancel_disarm(d));
    ASSERT_OK(weft_cancel_at(d, 1000000000ull * 3600 + weft_cancel_now_ns())); ASSERT_OK(weft_cancel_at(d, UINT64_MAX)); ASSERT_FALSE(weft_cancel_disarm(d));
    ASSERT_OK(weft_cancel_at(d, weft_cancel_now_ns() + 3600000000000ull)); ASSERT_TRUE(weft_cancel_disarm(d)); ASSERT_FALSE(weft_cancel_disarm(d));
    ASSERT_OK(weft_cancel_at(d, 1)); ASSERT_TRUE(weft_cancel_token_is_cancelled(d)); ASSERT_STREQ(weft_cancel_token_reason(d), "deadline exceeded");
    ASSERT_OK(weft_cancel_after(d, 5)); ASSERT_FALSE(weft_cancel_disarm(d));
    ASSERT_OK(weft_cancel_token_reset(d)); ASSERT_FALSE(weft_cancel_token_is_cancelled(d));
    ASSERT_OK(weft_cancel_after(d, 0)); ASSERT_TRUE(weft_cancel_token_is_cancelled(d));
    ASSERT_STATUS(weft_cancel_after(NULL, 1), WEFT_EINVAL); ASSERT_FALSE(weft_cancel_disarm(NULL));
    weft_cancel_token_destroy(c); weft_cancel_token_destroy(p); weft_cancel_token_destroy(d);
}

/* cancel.h: a reason is truncated to WEFT_CANCEL_REASON_MAX - 1 bytes at a
 * UTF-8 character boundary, "no more than that is read, so the text need not
 * be NUL-terminated within the limit". */
static size_t reason_len(const char *buf) {
    weft_cancel_token *r = weft_cancel_token_create(NULL, NULL);
    ASSERT_OK(weft_cancel_token_cancel_with(r, buf));
    size_t n = strlen(weft_cancel_token_reason(r));
    weft_cancel_token_destroy(r);
    return n;
}
TEST(a_cancel_reason_reads_no_byte_past_the_limit_and_cuts_only_a_split_character) {
    const size_t L = WEFT_CANCEL_REASON_MAX - 1;
    char *buf = malloc(L + 1); /* byte L: not the reason's, whatever it holds */
    memset(buf, 'a', L); buf[L] = (char)0x80;
    ASSERT_EQ(reason_len(buf), L); /* 255 whole characters: nothing to cut */
    memset(buf, 'a', L); buf[L - 1] = (char)0xC3; /* a 2-byte character's first byte */
    ASSERT_EQ(reason_len(buf), L - 1);
    memset(buf, 'a', L); buf[L - 2] = (char)0xE2; buf[L - 1] = (char)0x82; /* 2 of 3 bytes */
    ASSERT_EQ(reason_len(buf), L - 2);
    memset(buf, 'a', L); buf[L - 3] = (char)0xE2; buf[L - 2] = (char)0x82; buf[L - 1] = (char)0xAC; /* whole */
    ASSERT_EQ(reason_len(buf), L);
    memset(buf, 'a', L); buf[L - 3] = (char)0xF0; buf[L - 2] = (char)0x9F; buf[L - 1] = (char)0x98; /* 3 of 4 */
    ASSERT_EQ(reason_len(buf), L - 3);
    free(buf);
    char *exact = malloc(L); /* not NUL-terminated at all: ASan sees a read past it */
    memset(exact, 'b', L);
    ASSERT_EQ(reason_len(exact), L);
    free(exact);
    char longer[400]; /* a NUL-terminated reason longer than the limit, split after a lead byte */
    memset(longer, 'c', sizeof longer); longer[L - 1] = (char)0xC3; longer[L] = (char)0xA9; longer[399] = 0;
    ASSERT_EQ(reason_len(longer), L - 1);
}
/* observe.h: a log entry logged by a worker running a taskflow task carries
 * the task's name (its first 63 bytes) while metrics are on.  The label is
 * handed to the entry callback (and the JSON sink) as a C string: a cut
 * inside a multi-byte character gave invalid UTF-8, which the failed task's
 * name, the dump and cancellation reasons avoid. */
static char entry_task[128];
static int entry_seen;
static void grab_entry(void *u, const weft_log_entry *e) {
    (void)u;
    if (e->task && !entry_seen) { snprintf(entry_task, sizeof entry_task, "%s", e->task); entry_seen = 1; }
}
static int log_from_task(weft_ctx *c, void *a) {
    (void)c; (void)a;
    weft_executor_destroy(weft_default_executor()); /* refused: a warning, logged on this worker */
    return 0;
}
static bool utf8_ok(const char *s) {
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        int more = *p < 0x80 ? 0 : (*p & 0xE0) == 0xC0 ? 1 : (*p & 0xF0) == 0xE0 ? 2 : (*p & 0xF8) == 0xF0 ? 3 : -1;
        if (more < 0) return false;
        p++;
        for (int i = 0; i < more; i++, p++) if ((*p & 0xC0) != 0x80) return false;
    }
    return true;
}
TEST(a_log_entry_task_label_of_a_long_non_ascii_name_is_cut_at_a_character_boundary) {
    weft_status st;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = 1, .metrics = true }, &st);
    ASSERT_OK(st);
    weft_taskflow *tf = weft_taskflow_create("log", &st);
    weft_task t = weft_emplace(tf, log_from_task, NULL);
    char name[128] = "";
    for (int i = 0; i < 40; i++) strcat(name, "\xC3\xA9"); /* 80 bytes: the 64-byte label ends mid-character */
    ASSERT_OK(weft_task_set_name(t, name));
    weft_log_set_entry_callback(grab_entry, NULL);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    weft_log_set_callback(NULL, NULL);
    ASSERT_TRUE(entry_seen);
    ASSERT_GE(strlen(entry_task), 62);
    ASSERT_TRUE(strncmp(entry_task, name, strlen(entry_task)) == 0);
    if (!utf8_ok(entry_task)) TEST_FAIL_("entry task label is not valid UTF-8 (%zu bytes)", strlen(entry_task));
    weft_taskflow_destroy(tf);
    weft_executor_destroy(ex);
}
#include <limits.h>
TEST(topology_lookups_of_cpus_out_of_range_give_minus_one_or_einval) {
    weft_topology *topo = NULL;
    ASSERT_OK(weft_topology_detect(&(weft_topology_config){ .source = WEFT_TOPOLOGY_SYSFS }, &topo));
    ASSERT_EQ(weft_topology_cpu_index(topo, -1), -1); ASSERT_EQ(weft_topology_cpu_index(topo, INT_MAX), -1);
    ASSERT_EQ(weft_topology_cpu_index(topo, 1 << 20), -1); ASSERT_EQ(weft_topology_cpu_index(NULL, 0), -1);
    ASSERT_EQ(weft_topology_numa_node_for_cpu(topo, -1), -1); ASSERT_EQ(weft_topology_numa_node_for_cpu(topo, INT_MAX), -1);
    ASSERT_EQ(weft_topology_numa_node_for_cpu(topo, INT_MIN), -1); ASSERT_EQ(weft_topology_numa_node_for_cpu(NULL, 0), -1);
    weft_cpu_info ci; weft_package_info pi; weft_core_info co; weft_cache_info ca; weft_numa_node_info ni;
    unsigned nc = weft_topology_cpu_count(topo);
    ASSERT_STATUS(weft_topology_cpu(topo, nc, &ci), WEFT_EINVAL); ASSERT_STATUS(weft_topology_cpu(topo, 0, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_topology_package(topo, weft_topology_package_count(topo), &pi), WEFT_EINVAL);
    ASSERT_STATUS(weft_topology_core(topo, weft_topology_core_count(topo), &co), WEFT_EINVAL);
    ASSERT_STATUS(weft_topology_cache(topo, weft_topology_cache_count(topo), &ca), WEFT_EINVAL);
    ASSERT_STATUS(weft_topology_numa_node(topo, weft_topology_numa_node_count(topo), &ni), WEFT_EINVAL);
    for (unsigned i = 0; i < nc; i++) {
        ASSERT_OK(weft_topology_cpu(topo, i, &ci));
        ASSERT_EQ(weft_topology_cpu_index(topo, ci.os_index), (int)i);
        ASSERT_EQ(weft_topology_numa_node_for_cpu(topo, ci.os_index), (int)ci.numa_node);
    }
    int cpus[8] = {-1, 100000, INT_MAX, -7, 0, 1, 8191, 8192};
    unsigned victims[7], te[WEFT_TIERS];
    ASSERT_OK(weft_topology_steal_tiers(topo, cpus, 8, 0, victims, te));
    ASSERT_EQ(te[WEFT_TIERS - 1], 7);
    ASSERT_STATUS(weft_topology_steal_tiers(topo, cpus, 8, 8, victims, te), WEFT_EINVAL);
    ASSERT_STATUS(weft_topology_steal_tiers(topo, cpus, 0, 0, victims, te), WEFT_EINVAL);
    int one[1] = {8192};
    ASSERT_STATUS(weft_thread_bind(one, 1), WEFT_EINVAL); one[0] = -1; ASSERT_STATUS(weft_thread_bind(one, 1), WEFT_EINVAL);
    ASSERT_STATUS(weft_thread_bind(NULL, 1), WEFT_EINVAL); ASSERT_STATUS(weft_thread_bind(one, 0), WEFT_EINVAL);
    one[0] = 8191; ASSERT_STATUS(weft_thread_bind(one, 1), WEFT_ESYS);
    int pc[4];
    ASSERT_STATUS(weft_topology_place(topo, &(weft_placement_config){ .strategy = (weft_placement)7 }, 4, pc), WEFT_EINVAL);
    ASSERT_STATUS(weft_topology_place(topo, &(weft_placement_config){ .numa_node_count = 1 }, 4, pc), WEFT_EINVAL);
    unsigned bad_node = weft_topology_numa_node_count(topo);
    ASSERT_STATUS(weft_topology_place(topo, &(weft_placement_config){ .strategy = WEFT_PLACE_COMPACT, .numa_nodes = &bad_node, .numa_node_count = 1 }, 4, pc), WEFT_EINVAL);
    ASSERT_STATUS(weft_topology_place(topo, NULL, 0, pc), WEFT_EINVAL);
    ASSERT_OK(weft_topology_place(topo, NULL, 4, pc)); for (int i = 0; i < 4; i++) ASSERT_EQ(pc[i], -1);
    int c1 = 5; ASSERT_STATUS(weft_topology_worker_cpu(topo, NULL, 4, 4, &c1), WEFT_EINVAL);
    ASSERT_OK(weft_topology_place(topo, &(weft_placement_config){ .strategy = WEFT_PLACE_SCATTER }, 4, pc));
    for (unsigned w = 0; w < 4; w++) { ASSERT_OK(weft_topology_worker_cpu(topo, &(weft_placement_config){ .strategy = WEFT_PLACE_SCATTER }, w, 4, &c1)); ASSERT_EQ(c1, pc[w]); }
    /* numa memory */
    void *m = (void *)1; weft_numa_outcome oc;
    ASSERT_STATUS(weft_numa_alloc(topo, 0, 0, &m, &oc), WEFT_EINVAL);
    ASSERT_STATUS(weft_numa_alloc(topo, 10, bad_node, &m, &oc), WEFT_EINVAL);
    ASSERT_STATUS(weft_numa_alloc(topo, 10, 0, NULL, &oc), WEFT_EINVAL);
    ASSERT_OK(weft_numa_alloc(topo, 10, 0, &m, NULL)); ASSERT_EQ((uintptr_t)m % 4096, 0);
    unsigned node = 99; weft_status nst = weft_numa_node_of_address(topo, m, &node);
    ASSERT_TRUE(nst == WEFT_ENOENT || nst == WEFT_ESYS || nst == WEFT_OK);
    memset(m, 1, 10);
    nst = weft_numa_node_of_address(topo, m, &node); ASSERT_TRUE(nst == WEFT_ESYS || (nst == WEFT_OK && node < weft_topology_numa_node_count(topo)));
    weft_numa_free(m, 10); weft_numa_free(NULL, 10);
    ASSERT_STATUS(weft_numa_alloc_interleaved(topo, 10, NULL, 1, &m, &oc), WEFT_EINVAL);
    unsigned n0 = 0;
    ASSERT_STATUS(weft_numa_alloc_interleaved(topo, 10, &n0, 0, &m, &oc), WEFT_EINVAL);
    ASSERT_OK(weft_numa_alloc_interleaved(topo, 5000, NULL, 0, &m, &oc)); weft_numa_free(m, 5000);
    ASSERT_STATUS(weft_numa_alloc(topo, SIZE_MAX, 0, &m, &oc), WEFT_ENOMEM); ASSERT_NULL(m);
    weft_topology_destroy(topo); weft_topology_destroy(NULL);
}
static atomic_int then_calls;
static void on_then(weft_future *f, weft_status s, void *a) { (void)f; (void)s; (void)a; atomic_fetch_add(&then_calls, 1); }
static int iso_rc[4];
static int iso_task(weft_ctx *c, void *a) {
    (void)c;
    weft_future **fs = a;
    iso_rc[0] = weft_future_wait_isolated(fs[0]); /* a run's future, from a worker */
    iso_rc[1] = weft_future_wait_isolated(fs[1]); /* a dependent task whose dependency has not finished */
    iso_rc[2] = weft_future_wait_isolated(NULL);
    return 0;
}
TEST(future_then_once_and_isolated_waits_refuse_what_they_cannot_wait_for) {
    weft_executor *ex = mkex(2); weft_status st;
    weft_future *f; ASSERT_OK(weft_async(ex, nop, NULL, &f)); ASSERT_OK(weft_future_wait(f));
    ASSERT_OK(weft_future_then(f, on_then, NULL)); ASSERT_EQ(then_calls, 1);
    ASSERT_STATUS(weft_future_then(f, on_then, NULL), WEFT_EBUSY); ASSERT_EQ(then_calls, 1);
    ASSERT_STATUS(weft_future_then(f, NULL, NULL), WEFT_EINVAL); ASSERT_STATUS(weft_future_then(NULL, on_then, NULL), WEFT_EINVAL);
    weft_future_destroy(f);
    /* from a thread that is no worker: a run's future is waited for */
    weft_taskflow *tf = weft_taskflow_create("r", &st); weft_emplace(tf, nop, NULL);
    weft_future *rf; ASSERT_OK(weft_run(ex, tf, &rf)); ASSERT_OK(weft_future_wait_isolated(rf));
    atomic_store(&gate, 0); atomic_store(&started, 0);
    weft_future *blk; ASSERT_OK(weft_async(ex, blocker, NULL, &blk));
    weft_future *dep; ASSERT_OK(weft_dependent_async(ex, nop, NULL, &blk, 1, &dep));
    weft_future *fs[2] = {rf, dep};
    weft_future *it; ASSERT_OK(weft_async(ex, iso_task, fs, &it)); ASSERT_OK(weft_future_wait(it));
    ASSERT_STATUS(iso_rc[0], WEFT_EINVAL); ASSERT_STATUS(iso_rc[1], WEFT_EAGAIN); ASSERT_STATUS(iso_rc[2], WEFT_EINVAL);
    atomic_store(&gate, 1);
    ASSERT_OK(weft_future_wait(dep));
    weft_future_destroy(it); weft_future_destroy(dep); weft_future_destroy(blk); weft_future_destroy(rf);
    weft_taskflow_destroy(tf); weft_executor_destroy(ex);
}
static int fstage(weft_pipeflow *pf, void *a) { (void)a; weft_pipeflow_stop(pf); return 0; }
static int ditem(weft_pipeflow *pf, void *in, void *out, void *a) { (void)in; (void)out; (void)a; weft_pipeflow_stop(pf); return 0; }
static int sitem(void *it, size_t i, void *a) { (void)it; (void)i; (void)a; return 0; }
static weft_status ok_build(weft_composition *c, const weft_params *p, void *a) { (void)c; (void)p; (void)a; return WEFT_OK; }
static int hostk(const weft_gpu_range *r, void *const *args) { (void)r; (void)args; return 0; }
TEST(every_creator_sets_err_to_ok_on_success) {
    weft_status st; int bad = 0;
#define OKC(expr) do { st = (weft_status)77; void *o_ = (void *)(expr); if (!o_ || st != WEFT_OK) { fprintf(stderr, "%s: %p st %d\n", #expr, o_, (int)st); bad++; } } while (0)
    weft_executor *ex; OKC(ex = weft_executor_create(&(weft_executor_config){ .workers = 1 }, &st));
    weft_semaphore *s; OKC(s = weft_semaphore_create(1, &st));
    weft_cancel_token *t; OKC(t = weft_cancel_token_create(NULL, &st));
    weft_composition *c; OKC(c = weft_composition_create("c", &st));
    weft_params *p; OKC(p = weft_params_create(&st));
    weft_taskflow *tf; OKC(tf = weft_taskflow_create("t", &st));
    weft_work *w; OKC(w = weft_work_create(nop, NULL, NULL, &st));
    weft_factory *fa; OKC(fa = weft_factory_create("f", ok_build, NULL, &st));
    weft_composition *made; OKC(made = weft_factory_make(fa, p, &st));
    weft_stage ts = {WEFT_STAGE_SERIAL, fstage, NULL, "a"};
    weft_pipeline *pl; OKC(pl = weft_pipeline_create(1, &ts, 1, &st));
    weft_data_stage ds = {WEFT_STAGE_SERIAL, ditem, NULL, "d", 0, 0, NULL, NULL};
    weft_pipeline *dp; OKC(dp = weft_data_pipeline_create(1, &ds, 1, &st));
    int items[2];
    weft_item_stage is = {WEFT_STAGE_SERIAL, sitem, NULL, "i"};
    weft_pipeline *sp; OKC(sp = weft_simple_pipeline_create(1, items, 2, sizeof(int), &is, 1, &st));
    weft_gpu_device *d; OKC(d = weft_gpu_open(&(weft_gpu_config){ .kind = WEFT_GPU_EMULATOR, .emulator_memory = 1 << 20 }, &st));
    weft_gpu_buffer *b; OKC(b = weft_gpu_buffer_create(d, 4, 4, 0, &st));
    void *h; OKC(h = weft_gpu_host_alloc(d, 16, &st));
    weft_gpu_stream *gs; OKC(gs = weft_gpu_stream_create(d, &st));
    weft_gpu_event *ev; OKC(ev = weft_gpu_event_record(gs, &st));
    weft_gpu_stream_pool *gp; OKC(gp = weft_gpu_stream_pool_create(d, 2, &st));
    weft_gpu_kernel_source src = { .name = "k", .host = hostk };
    weft_gpu_kernel *k; OKC(k = weft_gpu_kernel_create(d, &src, &st));
    ASSERT_EQ(bad, 0);
    weft_gpu_kernel_destroy(k); weft_gpu_stream_pool_destroy(gp); weft_gpu_event_destroy(ev); weft_gpu_stream_destroy(gs);
    weft_gpu_host_free(d, h); weft_gpu_buffer_destroy(b); weft_gpu_close(d);
    weft_pipeline_destroy(sp); weft_pipeline_destroy(dp); weft_pipeline_destroy(pl);
    weft_composition_destroy(made); weft_factory_destroy(fa); weft_work_release(w); weft_taskflow_destroy(tf);
    weft_params_destroy(p); weft_composition_destroy(c); weft_cancel_token_destroy(t); weft_semaphore_destroy(s);
    weft_executor_destroy(ex);
}
static void addi(void *acc, const void *x, void *a) { (void)a; *(int *)acc += *(const int *)x; }
static int cmpi(const void *x, const void *y, void *a) { (void)a; return (*(const int *)x > *(const int *)y) - (*(const int *)x < *(const int *)y); }
static bool is7(const void *x, void *a) { (void)a; return *(const int *)x == 7; }
static atomic_int body_runs;
static void body_i(size_t i, void *a) { (void)i; (void)a; atomic_fetch_add(&body_runs, 1); }
TEST(algorithms_with_a_cancelled_token_run_nothing_and_thread_settings_refuse_bad_values) {
    weft_executor *ex = mkex(2);
    weft_cancel_token *t = weft_cancel_token_create(NULL, NULL);
    ASSERT_OK(weft_cancel_token_cancel(t));
    weft_algo_config cfg = { .cancel = t };
    int v[5000]; for (int i = 0; i < 5000; i++) v[i] = i % 50;
    int r = 123; size_t idx = 77;
    ASSERT_STATUS(weft_parallel_reduce(ex, v, 5000, sizeof(int), &r, addi, NULL, &cfg), WEFT_ECANCELED); ASSERT_EQ(r, 123);
    ASSERT_STATUS(weft_parallel_find_if(ex, v, 5000, sizeof(int), is7, NULL, &idx, &cfg), WEFT_ECANCELED); ASSERT_EQ(idx, 77);
    ASSERT_STATUS(weft_parallel_min_element(ex, v, 5000, sizeof(int), cmpi, NULL, &idx, &cfg), WEFT_ECANCELED); ASSERT_EQ(idx, 77);
    ASSERT_STATUS(weft_parallel_for(ex, 0, 5000, 1, body_i, NULL, &cfg), WEFT_ECANCELED); ASSERT_EQ(body_runs, 0);
    ASSERT_STATUS(weft_parallel_sort(ex, v, 5000, sizeof(int), cmpi, NULL, &cfg), WEFT_ECANCELED);
    long sum = 0; for (int i = 0; i < 5000; i++) sum += v[i]; ASSERT_EQ(sum, 100 * (49 * 50 / 2));
    ASSERT_STATUS(weft_parallel_reduce(ex, v, 5000, sizeof(int), &r, addi, NULL, &(weft_algo_config){ .partitioner = (weft_partitioner)4 }), WEFT_EINVAL);
    ASSERT_EQ(r, 123);
    weft_priority prev = (weft_priority)77;
    ASSERT_STATUS(weft_algo_set_priority((weft_priority)5, &prev), WEFT_EINVAL); ASSERT_EQ(prev, 77); ASSERT_EQ(weft_algo_priority(), WEFT_PRIORITY_NORMAL);
    ASSERT_OK(weft_algo_set_priority(WEFT_PRIORITY_LOW, &prev)); ASSERT_EQ(prev, WEFT_PRIORITY_NORMAL); ASSERT_EQ(weft_algo_priority(), WEFT_PRIORITY_LOW);
    r = 0; ASSERT_OK(weft_parallel_reduce(ex, v, 5000, sizeof(int), &r, addi, NULL, NULL)); ASSERT_EQ(r, 100 * (49 * 50 / 2));
    ASSERT_OK(weft_algo_set_priority(WEFT_PRIORITY_NORMAL, NULL));
    unsigned pn = 77;
    weft_topology *topo; ASSERT_OK(weft_topology_detect(NULL, &topo));
    unsigned nodes = weft_topology_numa_node_count(topo); weft_topology_destroy(topo);
    ASSERT_STATUS(weft_algo_set_numa_node(WEFT_NUMA_NODE(nodes + 5), &pn), WEFT_EINVAL); ASSERT_EQ(pn, 77); ASSERT_EQ(weft_algo_numa_node(), 0);
    ASSERT_OK(weft_algo_set_numa_node(WEFT_NUMA_NODE(0), &pn)); ASSERT_EQ(pn, 0); ASSERT_EQ(weft_algo_numa_node(), WEFT_NUMA_NODE(0));
    ASSERT_OK(weft_algo_set_numa_node(0, NULL));
    weft_cancel_token_destroy(t);
    weft_executor_destroy(ex);
}
/* docs/errors.md, R3: a failing call sets a message naming the call that was
 * made, never its family, and says what is wrong.  The four GPU copies shared
 * a check that named "weft_gpu_copy" (no such call) and called every refusal
 * a "bad copy" of a range, also a NULL host pointer or a buffer and stream of
 * two devices, whose range was fine. */
static void set_write_sentinel(void) {
    weft_status st = WEFT_OK;
    ASSERT_NULL(weft_semaphore_create(0, &st)); /* another call's message */
}
static bool message_names(const char *fn, const char *what) {
    const char *m = weft_last_error_message();
    bool ok = strncmp(m, fn, strlen(fn)) == 0 && m[strlen(fn)] == ':' && strstr(m, what);
    if (!ok) fprintf(stderr, "  want \"%s: ...%s...\", got \"%s\"\n", fn, what, m);
    return ok;
}
TEST(a_gpu_copy_refusals_name_the_copy_called_and_what_is_wrong) {
    weft_gpu_device *d = emu(1 << 20), *d2 = emu(1 << 20);
    weft_status st;
    weft_gpu_buffer *b = weft_gpu_buffer_create(d, 4, 4, 0, &st);
    ASSERT_OK(st);
    weft_gpu_stream *s = weft_gpu_stream_create(d, &st), *s2 = weft_gpu_stream_create(d2, &st);
    char h[64];
    int bad = 0;
    ASSERT_STATUS(weft_gpu_copy_to_device(b, 3, h, 2), WEFT_EINVAL);
    bad += !message_names("weft_gpu_copy_to_device", "past the end");
    ASSERT_STATUS(weft_gpu_copy_to_host(b, 0, NULL, 2), WEFT_EINVAL);
    bad += !message_names("weft_gpu_copy_to_host", "NULL");
    ASSERT_STATUS(weft_gpu_copy_to_device(NULL, 0, h, 1), WEFT_EINVAL);
    bad += !message_names("weft_gpu_copy_to_device", "NULL");
    ASSERT_STATUS(weft_gpu_copy_to_device_async(s2, b, 0, h, 1), WEFT_EINVAL);
    bad += !message_names("weft_gpu_copy_to_device_async", "device");
    ASSERT_STATUS(weft_gpu_copy_to_host_async(s2, b, 0, h, 1), WEFT_EINVAL);
    bad += !message_names("weft_gpu_copy_to_host_async", "device");
    ASSERT_STATUS(weft_gpu_copy_to_host_async(s, b, 4, h, 1), WEFT_EINVAL);
    bad += !message_names("weft_gpu_copy_to_host_async", "past the end");
    ASSERT_EQ(bad, 0);
    weft_gpu_stream_destroy(s); weft_gpu_stream_destroy(s2);
    weft_gpu_buffer_destroy(b);
    weft_gpu_close(d); weft_gpu_close(d2);
}
/* docs/errors.md, R3: "A check shared by a family of calls names the call
 * that was made, never the family".  A failed write of the profile exports
 * said "weft_profiler_write_*: writing to out failed" for all six writers
 * (weft_taskflow_dump_dot_profiled included, which is not even of that
 * family). */
TEST(a_profile_export_write_failures_name_the_writer_called) {
    weft_status st;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = 1 }, &st);
    ASSERT_OK(st);
    weft_taskflow *tf = weft_taskflow_create("w", &st);
    weft_emplace(tf, nop, NULL);
    ASSERT_OK(weft_profiler_start(ex));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_OK(weft_profiler_stop(ex));
    FILE *ro = fopen("/dev/null", "r"); /* every write fails */
    ASSERT_NOT_NULL(ro);
    int bad = 0;
#define WRITE_FAILS(fn, call) do { \
        set_write_sentinel(); \
        ASSERT_STATUS(call, WEFT_ESYS); \
        bad += !message_names(fn, "writ"); \
    } while (0)
    WRITE_FAILS("weft_profiler_write_json", weft_profiler_write_json(ex, ro));
    WRITE_FAILS("weft_profiler_write_html", weft_profiler_write_html(ex, ro));
    WRITE_FAILS("weft_profiler_write_timeline_svg", weft_profiler_write_timeline_svg(ex, ro));
    WRITE_FAILS("weft_profiler_write_folded", weft_profiler_write_folded(ex, NULL, ro));
    WRITE_FAILS("weft_profiler_write_flame_svg", weft_profiler_write_flame_svg(ex, NULL, ro));
    WRITE_FAILS("weft_taskflow_dump_dot_profiled", weft_taskflow_dump_dot_profiled(tf, ex, ro));
    ASSERT_EQ(bad, 0);
    fclose(ro);
    weft_taskflow_destroy(tf);
    weft_executor_destroy(ex);
}
/* The same rule for the exports' working memory: out of memory, the timeline
 * and the report said "weft_profiler_write_html/timeline_svg", the folded
 * stacks and the flame graph "weft_profiler_write_folded/flame_svg". */
TEST(a_profile_export_out_of_memory_names_the_writer_called) {
    weft_set_allocator(&counting);
    weft_status st;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = 1 }, &st);
    ASSERT_OK(st);
    weft_taskflow *tf = weft_taskflow_create("m", &st);
    weft_emplace(tf, nop, NULL);
    ASSERT_OK(weft_profiler_start(ex));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_OK(weft_profiler_stop(ex));
    FILE *null = fopen("/dev/null", "w");
    ASSERT_NOT_NULL(null);
    int bad = 0, seen = 0;
    for (int which = 0; which < 4; which++) {
        static const char *const fns[] = { "weft_profiler_write_html", "weft_profiler_write_timeline_svg",
                                           "weft_profiler_write_folded", "weft_profiler_write_flame_svg" };
        for (long k = 1; k < 8; k++) {
            set_write_sentinel();
            fail_allocation(k);
            weft_status w = which == 0 ? weft_profiler_write_html(ex, null)
                          : which == 1 ? weft_profiler_write_timeline_svg(ex, null)
                          : which == 2 ? weft_profiler_write_folded(ex, NULL, null)
                                       : weft_profiler_write_flame_svg(ex, NULL, null);
            fail_allocation(0);
            if (w == WEFT_OK) break; /* past the writer's last allocation */
            ASSERT_STATUS(w, WEFT_ENOMEM);
            seen++;
            bad += !message_names(fns[which], "");
        }
    }
    ASSERT_GT(seen, 3);
    ASSERT_EQ(bad, 0);
    fclose(null);
    weft_taskflow_destroy(tf);
    weft_executor_destroy(ex);
    weft_set_allocator(NULL);
}
/* flow.h: an instance resolves an entry or exit "as the composition named it".
 * A task erased after it was named leaves no task to resolve to (copies made
 * then give the null task), but the erased slot was reused by the next task
 * added to the composition's graph, and the name then silently resolved to
 * that unrelated task in every later copy (set_point refuses an erased task
 * for this very reason). */
TEST(a_composition_entry_on_an_erased_task_never_resolves_to_a_task_added_later) {
    weft_status st;
    weft_composition *c = weft_composition_create("c", &st);
    ASSERT_OK(st);
    weft_taskflow *g = weft_composition_graph(c);
    weft_task p = weft_emplace(g, nop, NULL), q = weft_emplace(g, nop, NULL);
    ASSERT_OK(weft_task_set_name(p, "p"));
    ASSERT_OK(weft_task_set_name(q, "q"));
    ASSERT_OK(weft_precede(p, q));
    ASSERT_OK(weft_composition_set_entry(c, "in", p));
    ASSERT_OK(weft_composition_set_exit(c, "out", q));
    weft_taskflow *dst = weft_taskflow_create("dst", &st);
    weft_instance before;
    ASSERT_OK(weft_composition_instantiate(c, dst, "A", &before));
    ASSERT_OK(weft_task_erase(q));
    weft_task s = weft_emplace(g, nop, NULL); /* unrelated to "out" */
    ASSERT_OK(weft_task_set_name(s, "s"));
    weft_instance after;
    ASSERT_OK(weft_composition_instantiate(c, dst, "B", &after));
    ASSERT_STREQ(weft_task_name(weft_instance_exit(&before, "out")), "A/q");
    ASSERT_STREQ(weft_task_name(weft_instance_entry(&after, "in")), "B/p");
    weft_task out = weft_instance_exit(&after, "out");
    if (!weft_task_is_null(out)) TEST_FAIL_("exit 'out' (task q, erased) resolved to '%s'", weft_task_name(out));
    /* the later task is copied all the same, and the graph still runs */
    ASSERT_EQ(weft_taskflow_num_tasks(dst), 2 + 2);
    weft_executor *ex = mkex(1);
    ASSERT_OK(weft_run_and_wait(ex, dst));
    ASSERT_OK(weft_run_and_wait(ex, g));
    weft_executor_destroy(ex);
    ASSERT_OK(weft_taskflow_destroy(dst));
    ASSERT_OK(weft_composition_destroy(c));
}
/* flow.h: entries and exits survive a clear of the composition's graph and
 * name indices: the task that takes the index when it is rebuilt, or none. */
TEST(composition_entries_after_a_clear_resolve_by_index_as_flow_h_says) {
    weft_status st;
    weft_composition *c = weft_composition_create("c", &st);
    weft_taskflow *g = weft_composition_graph(c);
    weft_task p = weft_emplace(g, nop, NULL), q = weft_emplace(g, nop, NULL);
    (void)p;
    ASSERT_OK(weft_composition_set_entry(c, "in", q));
    ASSERT_OK(weft_taskflow_clear(g));
    ASSERT_OK(weft_task_set_name(weft_emplace(g, nop, NULL), "a"));
    weft_taskflow *dst = weft_taskflow_create("d", &st);
    weft_instance i1, i2;
    ASSERT_OK(weft_composition_instantiate(c, dst, "A", &i1));
    ASSERT_TRUE(weft_task_is_null(weft_instance_entry(&i1, "in")));
    ASSERT_OK(weft_task_set_name(weft_emplace(g, nop, NULL), "b"));
    ASSERT_OK(weft_composition_instantiate(c, dst, "B", &i2));
    ASSERT_STREQ(weft_task_name(weft_instance_entry(&i2, "in")), "B/b");
    ASSERT_TRUE(weft_task_is_null(weft_instance_entry(&i1, "in")));
    ASSERT_OK(weft_taskflow_destroy(dst));
    ASSERT_OK(weft_composition_destroy(c));
}
/* The same for the copy: an instance resolves a name to its copy's task; a
 * task of the copy erased in the destination taskflow left a slot that the
 * next weft_emplace there took, and the instance then named that unrelated
 * task (compose.c meant copies never to name "whatever a later weft_emplace
 * put there"). */
TEST(a_instance_entry_whose_copy_was_erased_never_resolves_to_a_task_added_later) {
    weft_status st;
    weft_composition *c = weft_composition_create("c", &st);
    weft_task p = weft_emplace(weft_composition_graph(c), nop, NULL);
    ASSERT_OK(weft_task_set_name(p, "p"));
    ASSERT_OK(weft_composition_set_entry(c, "in", p));
    weft_taskflow *dst = weft_taskflow_create("d", &st);
    weft_task before = weft_emplace(dst, nop, NULL);
    weft_instance inst;
    ASSERT_OK(weft_composition_instantiate(c, dst, "A", &inst));
    weft_task e = weft_instance_entry(&inst, "in");
    ASSERT_STREQ(weft_task_name(e), "A/p");
    ASSERT_OK(weft_task_erase(e));
    ASSERT_TRUE(weft_task_is_null(weft_instance_entry(&inst, "in")));
    weft_task n = weft_emplace(dst, nop, NULL);
    ASSERT_OK(weft_task_set_name(n, "unrelated"));
    weft_task again = weft_instance_entry(&inst, "in");
    if (!weft_task_is_null(again)) TEST_FAIL_("entry 'in' (its copy erased) resolved to '%s'", weft_task_name(again));
    /* slots outside the copies are reused as before */
    ASSERT_OK(weft_task_erase(before));
    weft_task m = weft_emplace(dst, nop, NULL);
    ASSERT_EQ(weft_task_index(m), 0);
    weft_executor *ex = mkex(1);
    ASSERT_OK(weft_run_and_wait(ex, dst));
    weft_executor_destroy(ex);
    /* a clear forgets the copies: slots are reused again */
    ASSERT_OK(weft_taskflow_clear(dst));
    weft_task x = weft_emplace(dst, nop, NULL);
    (void)weft_emplace(dst, nop, NULL);
    ASSERT_OK(weft_task_erase(x));
    ASSERT_EQ(weft_task_index(weft_emplace(dst, nop, NULL)), 0);
    ASSERT_OK(weft_taskflow_destroy(dst));
    ASSERT_OK(weft_composition_destroy(c));
}
/* Every getter documents what it gives for NULL (or the null task). */
TEST(getters_of_null_give_their_documented_values) {
    ASSERT_EQ(weft_ctx_worker_id(NULL), -1);
    ASSERT_NULL(weft_ctx_executor(NULL));
    ASSERT_FALSE(weft_ctx_cancelled(NULL));
    ASSERT_EQ(weft_ctx_iteration(NULL), 0);
    ASSERT_NULL(weft_ctx_run(NULL));
    ASSERT_TRUE(weft_task_is_null(weft_ctx_task(NULL)));
    ASSERT_STREQ(weft_ctx_cancel_reason(NULL), "");
    ASSERT_NULL(weft_current_ctx());
    ASSERT_EQ(weft_executor_workers(NULL), 0);
    ASSERT_EQ(weft_executor_waiters(NULL), 0);
    ASSERT_EQ(weft_executor_worker_id(NULL), -1);
    ASSERT_FALSE(weft_future_ready(NULL));
    ASSERT_STATUS(weft_future_status(NULL), WEFT_EINVAL);
    ASSERT_EQ(weft_future_id(NULL), 0);
    ASSERT_EQ(weft_taskflow_num_tasks(NULL), 0);
    ASSERT_STREQ(weft_task_name(WEFT_TASK_NULL), "");
    ASSERT_NULL(weft_task_data(WEFT_TASK_NULL));
    ASSERT_EQ(weft_task_index(WEFT_TASK_NULL), SIZE_MAX);
    ASSERT_EQ(weft_task_num_successors(WEFT_TASK_NULL), 0);
    ASSERT_EQ(weft_task_num_dependents(WEFT_TASK_NULL), 0);
    ASSERT_EQ(weft_task_num_weak_dependents(WEFT_TASK_NULL), 0);
    ASSERT_TRUE(weft_task_is_null(weft_task_successor(WEFT_TASK_NULL, 0)));
    ASSERT_EQ(weft_task_get_kind(WEFT_TASK_NULL), WEFT_TASK_STATIC);
    ASSERT_NULL(weft_task_module(WEFT_TASK_NULL));
    ASSERT_EQ(weft_task_get_priority(WEFT_TASK_NULL), WEFT_PRIORITY_NORMAL);
    ASSERT_NULL(weft_subflow_graph(NULL));
    ASSERT_NULL(weft_composition_graph(NULL));
    ASSERT_EQ(weft_pipeflow_token(NULL), 0);
    ASSERT_EQ(weft_pipeflow_line(NULL), 0);
    ASSERT_EQ(weft_pipeflow_stage(NULL), 0);
    ASSERT_NULL(weft_pipeflow_run(NULL));
    ASSERT_EQ(weft_pipeline_num_tokens(NULL), 0);
    ASSERT_EQ(weft_pipeline_num_stages(NULL), 0);
    ASSERT_EQ(weft_pipeline_num_inline_tokens(NULL), 0);
    ASSERT_EQ(weft_semaphore_value(NULL), 0);
    ASSERT_FALSE(weft_cancel_token_is_cancelled(NULL));
    ASSERT_STREQ(weft_cancel_token_reason(NULL), "");
    ASSERT_EQ(weft_cancel_token_cancel_count(NULL), 0);
    ASSERT_EQ(weft_topology_cpu_count(NULL), 0);
    ASSERT_EQ(weft_topology_package_count(NULL), 0);
    ASSERT_STREQ(weft_topology_backend(NULL), "");
    ASSERT_EQ(weft_gpu_stream_pool_size(NULL), 0);
    ASSERT_EQ(weft_gpu_buffer_count(NULL), 0);
    ASSERT_EQ(weft_gpu_buffer_bytes(NULL), 0);
    ASSERT_NOT_NULL(weft_strerror(12345)); ASSERT_STREQ(weft_errname(12345), "WEFT_E?");
    ASSERT_STREQ(weft_errname(WEFT_EDEVICE), "WEFT_EDEVICE");
}
/* async.h: destroy refuses (WEFT_EBUSY, nothing freed) while a task holds a
 * unit, and while a weft_async_acquire task is not yet finished.  (Reset is
 * not tried there: with a holder running it is the caller's error.) */
TEST(semaphore_destroy_is_ebusy_while_a_task_holds_or_waits) {
    weft_executor *ex = mkex(2);
    weft_status st;
    weft_semaphore *s = weft_semaphore_create(1, &st);
    ASSERT_OK(st);
    atomic_store(&gate, 0); atomic_store(&started, 0);
    weft_future *a, *b;
    ASSERT_OK(weft_async_acquire(ex, blocker, NULL, &s, 1, &a));
    while (!atomic_load(&started)) sched_yield();
    ASSERT_EQ(weft_semaphore_value(s), 0);
    ASSERT_STATUS(weft_semaphore_destroy(s), WEFT_EBUSY); /* held */
    ASSERT_OK(weft_async_acquire(ex, nop, NULL, &s, 1, &b));
    ASSERT_STATUS(weft_semaphore_destroy(s), WEFT_EBUSY); /* b: queued or parked */
    ASSERT_EQ(weft_semaphore_value(s), 0);
    ASSERT_FALSE(weft_future_ready(b));
    atomic_store(&gate, 1);
    ASSERT_OK(weft_future_wait(a));
    ASSERT_OK(weft_future_wait(b));
    ASSERT_EQ(weft_semaphore_value(s), 1);
    weft_future_destroy(a); weft_future_destroy(b);
    ASSERT_OK(weft_semaphore_reset(s));
    ASSERT_OK(weft_semaphore_destroy(s));
    weft_executor_destroy(ex);
}
/* observe.h: the observer sees a placeholder (code 0), a condition's call
 * (code 0 for a branch, its negative value as FAILED), a subflow's call and
 * its graph's tasks, a module's body tasks but not the module task itself,
 * and no task skipped by a failed run. */
static atomic_int ob_begin[16], ob_end[16], ob_failed_code;
static void ob_b(void *u, const weft_task_event *e) { (void)u; if (e->outcome == WEFT_TASK_RUNNING && e->name[0] >= 'a' && e->name[0] < 'a' + 16) atomic_fetch_add(&ob_begin[e->name[0] - 'a'], 1); }
static void ob_e(void *u, const weft_task_event *e) {
    (void)u;
    if (e->name[0] >= 'a' && e->name[0] < 'a' + 16) atomic_fetch_add(&ob_end[e->name[0] - 'a'], 1);
    if (e->outcome == WEFT_TASK_FAILED) atomic_store(&ob_failed_code, e->code);
}
static int ob_one(weft_ctx *c, void *a) { (void)c; (void)a; return 1; }
static int ob_neg(weft_ctx *c, void *a) { (void)c; (void)a; return -3; }
static int ob_sub(weft_ctx *c, weft_subflow *sf, void *a) {
    (void)c; (void)a;
    return weft_task_set_name(weft_emplace(weft_subflow_graph(sf), nop, NULL), "f");
}
TEST(observer_sees_each_kind_of_task_as_observe_h_says) {
    weft_status st;
    weft_observer ob = { ob_b, ob_e, NULL };
    weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = 2, .observer = &ob }, &st);
    ASSERT_OK(st);
    weft_taskflow *body = weft_taskflow_create("body", &st);
    ASSERT_OK(weft_task_set_name(weft_emplace(body, nop, NULL), "h"));
    weft_taskflow *tf = weft_taskflow_create("t", &st);
    weft_task a = weft_placeholder(tf), b = weft_emplace_condition(tf, ob_one, NULL);
    weft_task c = weft_emplace(tf, nop, NULL), d = weft_emplace(tf, nop, NULL);
    weft_task e = weft_emplace_subflow(tf, ob_sub, NULL), g = weft_emplace_module(tf, body);
    const char *names[] = {"a", "b", "c", "d", "e", "g"};
    weft_task ts[] = {a, b, c, d, e, g};
    for (int i = 0; i < 6; i++) ASSERT_OK(weft_task_set_name(ts[i], names[i]));
    ASSERT_OK(weft_precede(a, b)); ASSERT_OK(weft_precede(b, c)); ASSERT_OK(weft_precede(b, d));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    int want[16] = {0};
    want['a' - 'a'] = want['b' - 'a'] = want['d' - 'a'] = want['e' - 'a'] = want['f' - 'a'] = want['h' - 'a'] = 1;
    for (int i = 0; i < 16; i++) {
        if (ob_begin[i] != want[i] || ob_end[i] != want[i])
            TEST_FAIL_("task '%c': %d begins, %d ends, want %d", 'a' + i, ob_begin[i], ob_end[i], want[i]);
    }
    weft_taskflow *t2 = weft_taskflow_create("t2", &st);
    weft_task n = weft_emplace_condition(t2, ob_neg, NULL), after = weft_emplace(t2, nop, NULL);
    ASSERT_OK(weft_task_set_name(n, "n")); ASSERT_OK(weft_task_set_name(after, "o"));
    ASSERT_OK(weft_precede(n, after));
    ASSERT_STATUS(weft_run_and_wait(ex, t2), WEFT_ETASK);
    ASSERT_EQ(ob_failed_code, -3);
    ASSERT_EQ(ob_end['o' - 'a'], 0);
    weft_taskflow_destroy(tf); weft_taskflow_destroy(t2); weft_taskflow_destroy(body);
    weft_executor_destroy(ex);
}
/* cancel.h: every token call may run concurrently on one token: of racing
 * cancels exactly one returns WEFT_OK, and the reason is that one's, whole.
 * flow.h: any number of threads may get from one weft_params at once. */
struct race { weft_cancel_token *t; weft_params *p; pthread_barrier_t *bar; int id; weft_status st; int bad; };
static void *racer(void *arg) {
    struct race *r = arg;
    char why[64];
    snprintf(why, sizeof why, "reason of thread %d, long enough to be copied in parts", r->id);
    pthread_barrier_wait(r->bar);
    r->st = weft_cancel_token_cancel_with(r->t, why);
    for (int i = 0; i < 2000; i++) {
        int64_t v = 0; const char *s = NULL; double d = 0;
        if (weft_params_get_int(r->p, "n", &v) != WEFT_OK || v != 42) r->bad++;
        if (weft_params_get_string(r->p, "s", &s) != WEFT_OK || strcmp(s, "text")) r->bad++;
        if (weft_params_get_float(r->p, "s", &d) != WEFT_EINVAL) r->bad++; /* each thread's own message */
        if (!strstr(weft_last_error_message(), "'s'")) r->bad++;
    }
    return NULL;
}
TEST(racing_cancels_let_one_win_whole_and_params_gets_run_at_once) {
    enum { N = 8 };
    for (int rep = 0; rep < 20; rep++) {
        weft_cancel_token *t = weft_cancel_token_create(NULL, NULL);
        weft_params *p = weft_params_create(NULL);
        ASSERT_OK(weft_params_set_int(p, "n", 42));
        ASSERT_OK(weft_params_set_string(p, "s", "text"));
        pthread_barrier_t bar;
        pthread_barrier_init(&bar, NULL, N);
        pthread_t th[N];
        struct race r[N];
        for (int i = 0; i < N; i++) {
            r[i] = (struct race){ t, p, &bar, i, WEFT_EINVAL, 0 };
            ASSERT_EQ(pthread_create(&th[i], NULL, racer, &r[i]), 0);
        }
        int winners = 0, winner = -1;
        for (int i = 0; i < N; i++) {
            pthread_join(th[i], NULL);
            ASSERT_EQ(r[i].bad, 0);
            if (r[i].st == WEFT_OK) winners++, winner = i;
            else ASSERT_STATUS(r[i].st, WEFT_ECANCELED);
        }
        ASSERT_EQ(winners, 1);
        char want[64];
        snprintf(want, sizeof want, "reason of thread %d, long enough to be copied in parts", winner);
        ASSERT_STREQ(weft_cancel_token_reason(t), want);
        ASSERT_EQ(weft_cancel_token_cancel_count(t), 1);
        pthread_barrier_destroy(&bar);
        weft_params_destroy(p);
        weft_cancel_token_destroy(t);
    }
}
/* observe.h: a weft_task_stats entry is "the runs of one task", under its
 * name.  Stats were grouped by (taskflow, index) alone: a task erased
 * between profiled runs and the task that took its slot (graph.h: the next
 * one added takes the index) were one entry, under the first one's name,
 * with both tasks' runs. */
TEST(a_profile_keeps_a_task_apart_from_the_task_that_took_its_erased_slot) {
    weft_status st;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = 1 }, &st);
    ASSERT_OK(st);
    weft_taskflow *tf = weft_taskflow_create("t", &st);
    weft_task a = weft_emplace(tf, nop, NULL);
    ASSERT_OK(weft_task_set_name(a, "first"));
    ASSERT_OK(weft_profiler_start(ex));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_OK(weft_task_erase(a));
    weft_task b = weft_emplace(tf, nop, NULL);
    ASSERT_EQ(weft_task_index(b), 0);
    ASSERT_OK(weft_task_set_name(b, "second"));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_OK(weft_profiler_stop(ex));
    ASSERT_OK(weft_executor_wait_all(ex));
    weft_profile *p = NULL;
    ASSERT_OK(weft_profile_get(ex, &p));
    uint64_t first = 0, second = 0;
    for (size_t i = 0; i < p->ntasks; i++) {
        if (p->tasks[i].kind != WEFT_PROFILE_TASK) continue;
        if (!strcmp(p->tasks[i].name, "first")) first += p->tasks[i].count;
        else if (!strcmp(p->tasks[i].name, "second")) second += p->tasks[i].count;
    }
    if (first != 1 || second != 2) TEST_FAIL_("'first' %llu runs (want 1), 'second' %llu (want 2)", (unsigned long long)first, (unsigned long long)second);
    weft_profile_free(p);
    weft_taskflow_destroy(tf);
    weft_executor_destroy(ex);
}

/* A config a layer refuses (EINVAL) is reported by the return and the last
 * error message alone: weft_executor_create logged "layer sched failed" at
 * error level as well, a line on stderr for the caller's own mistake (h44-1's
 * doubt).  At debug level the line is still there. */
static _Atomic int config_errors_logged, config_debug_logged;
static void count_config_logs(void *user, weft_log_level level, const char *message) {
    (void)user;
    if (!strstr(message, "layer sched failed")) return;
    if (level <= WEFT_LOG_WARN) atomic_fetch_add(&config_errors_logged, 1);
    else atomic_fetch_add(&config_debug_logged, 1);
}
TEST(a_config_a_layer_refuses_is_returned_not_logged_as_an_error) {
    weft_log_level old = weft_log_get_level();
    weft_log_set_callback(count_config_logs, NULL);
    weft_sched_config sc = { .kind = (weft_sched_kind)999 };
    for (int debug = 0; debug <= 1; debug++) {
        weft_log_set_level(debug ? WEFT_LOG_DEBUG : WEFT_LOG_WARN);
        weft_status st = WEFT_OK;
        weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = 1, .sched = &sc }, &st);
        ASSERT_NULL(ex);
        ASSERT_EQ(st, WEFT_EINVAL);
        ASSERT_TRUE(strstr(weft_last_error_message(), "kind 999") != NULL);
    }
    weft_log_set_callback(NULL, NULL);
    weft_log_set_level(old);
    ASSERT_EQ(atomic_load(&config_errors_logged), 0);
    ASSERT_EQ(atomic_load(&config_debug_logged), 1);
}

/* The future a submission stores through `out` is there before any task of
 * it can start (graph.h, weft_run; async.h): a task may read it where the
 * caller put it.  weft_run and the async calls stored it after the submission,
 * so a task that ran at once read the old value, a race TSan reported
 * (fj_hunt38's nested run cancelling itself). */
typedef struct own_handle {
    weft_future *f;      /* written by the submission through out */
    weft_future *seen;   /* what the task read there */
    _Atomic int ran;
} own_handle;
static int read_own_handle(weft_ctx *c, void *a) {
    (void)c;
    own_handle *h = a;
    h->seen = h->f; /* a plain read: ordered by the submission, or a race */
    if (h->seen) (void)weft_future_cancel(h->seen);
    atomic_fetch_add(&h->ran, 1);
    return 0;
}
static int read_own_handle_dep(weft_ctx *c, void *a) { return read_own_handle(c, a); }
TEST(a_task_reads_its_own_future_where_the_submission_stored_it) {
    for (unsigned workers = 1; workers <= 2; workers++) {
        weft_executor *ex = mkex(workers);
        weft_taskflow *tf = weft_taskflow_create("own", NULL);
        own_handle h = { 0 };
        ASSERT_FALSE(weft_task_is_null(weft_emplace(tf, read_own_handle, &h)));
        for (int i = 0; i < 200; i++) {
            for (int kind = 0; kind < 4; kind++) {
                h.f = NULL;
                h.seen = NULL;
                atomic_store(&h.ran, 0);
                weft_future *dep = NULL;
                switch (kind) {
                case 0: ASSERT_OK(weft_run(ex, tf, &h.f)); break;
                case 1: ASSERT_OK(weft_run_n_parallel(ex, tf, 1, &h.f)); break;
                case 2: ASSERT_OK(weft_async(ex, read_own_handle, &h, &h.f)); break;
                case 3:
                    ASSERT_OK(weft_async(ex, nop, NULL, &dep));
                    ASSERT_OK(weft_dependent_async(ex, read_own_handle_dep, &h, &dep, 1, &h.f));
                    break;
                }
                weft_future *mine = h.f;
                weft_status st = weft_future_wait(mine);
                ASSERT_TRUE(st == WEFT_OK || st == WEFT_ECANCELED);
                ASSERT_EQ(atomic_load(&h.ran), 1);
                if (h.seen != mine) TEST_FAIL_("kind %d, %u workers: the task read %p, the caller got %p", kind,
                                               workers, (void *)h.seen, (void *)mine);
                weft_future_destroy(mine);
                if (dep) weft_future_destroy(dep);
            }
        }
        ASSERT_OK(weft_taskflow_destroy(tf));
        weft_executor_destroy(ex);
    }
}

/* WEFT_FORK_JOIN_FRAMES is "1 to 2^24" (README, core.h): 0 was taken as the
 * default without the warning a bad value gets (h44-4's doubt), and the
 * warning said "from 0". */
static char fj_env_warning[512];
static void keep_fj_warning(void *user, weft_log_level level, const char *message) {
    (void)user;
    if (level == WEFT_LOG_WARN && strstr(message, "WEFT_FORK_JOIN_FRAMES"))
        snprintf(fj_env_warning, sizeof fj_env_warning, "%s", message);
}
TEST(a_zero_fork_join_frames_in_the_environment_is_warned_about_and_the_default_used) {
    weft_log_level old = weft_log_get_level();
    weft_log_set_level(WEFT_LOG_WARN);
    weft_log_set_callback(keep_fj_warning, NULL);
    setenv("WEFT_FORK_JOIN_FRAMES", "0", 1);
    weft_executor *ex = mkex(1);
    unsetenv("WEFT_FORK_JOIN_FRAMES");
    weft_log_set_callback(NULL, NULL);
    weft_log_set_level(old);
    weft_executor_destroy(ex);
    ASSERT_TRUE(strstr(fj_env_warning, "from 1 to 16777216") != NULL);
    ASSERT_TRUE(strstr(fj_env_warning, "using 65536") != NULL);
}

/* An emplaced algorithm task queues its chunks at its task's priority
 * (algo.h), also in a weft_run_n_parallel instance: there the context's task
 * is the instance's shadow of the node, which task.c read as the node (a
 * garbage priority, read at a garbage address: UBSan in tfport_hunt44). */
static _Atomic int prio_wrong, prio_calls;
static void prio_body(size_t lo, size_t hi, void *arg) {
    (void)lo, (void)hi, (void)arg;
    atomic_fetch_add(&prio_calls, 1);
    if (weft_algo_priority() != WEFT_PRIORITY_HIGH) atomic_fetch_add(&prio_wrong, 1);
}
TEST(an_emplaced_loop_in_run_n_parallel_instances_runs_at_its_tasks_priority) {
    weft_executor *ex = mkex(2);
    weft_taskflow *tf = weft_taskflow_create("prio", NULL);
    weft_for_desc d = { .first = 0, .last = 64, .step = 1, .body = prio_body, .config = { .chunk = 1 } };
    weft_task t = weft_emplace_for(tf, &d);
    ASSERT_FALSE(weft_task_is_null(t));
    ASSERT_OK(weft_task_set_priority(t, WEFT_PRIORITY_HIGH));
    for (int parallel = 0; parallel <= 1; parallel++) {
        atomic_store(&prio_wrong, 0);
        atomic_store(&prio_calls, 0);
        weft_future *f = NULL;
        if (parallel) ASSERT_OK(weft_run_n_parallel(ex, tf, 8, &f));
        else ASSERT_OK(weft_run_n(ex, tf, 8, &f));
        ASSERT_OK(weft_future_wait(f));
        weft_future_destroy(f);
        ASSERT_EQ(atomic_load(&prio_calls), 8 * 64);
        if (atomic_load(&prio_wrong) != 0)
            TEST_FAIL_("%s: %d of %d chunks ran below the task's HIGH", parallel ? "run_n_parallel" : "run_n",
                       atomic_load(&prio_wrong), 8 * 64);
    }
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}
