/* Data pipelines (values passed between stages in per-line buffers, checked at
 * creation) and simple pipelines (a batch of items mutated in place). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "test_util.h"

/* ---- data pipelines --------------------------------------------------------------- */

struct reading {
    uint64_t token;
    double value;
    char label[40]; /* makes the value larger than a register */
};

struct sink {
    uint64_t count, stop_at;
    double sum;
    atomic_int bad;
};

static int source(weft_pipeflow *pf, void *in, void *out, void *arg) {
    struct sink *k = arg;
    uint64_t t = weft_pipeflow_token(pf);
    if (t == k->stop_at) return weft_pipeflow_stop(pf), 0;
    if (in != NULL) atomic_fetch_add(&k->bad, 1);
    *(uint64_t *)out = t * 3;
    return 0;
}

static int expand(weft_pipeflow *pf, void *in, void *out, void *arg) {
    uint64_t x = *(uint64_t *)in;
    struct reading *r = out;
    r->token = weft_pipeflow_token(pf);
    r->value = (double)x * 0.5;
    snprintf(r->label, sizeof r->label, "reading %llu", (unsigned long long)x);
    return 0;
}

static int collect(weft_pipeflow *pf, void *in, void *out, void *arg) {
    struct sink *k = arg;
    const struct reading *r = in;
    char want[40];
    snprintf(want, sizeof want, "reading %llu", (unsigned long long)(r->token * 3));
    if (out != NULL || r->token != k->count || r->token != weft_pipeflow_token(pf) || strcmp(r->label, want) != 0)
        atomic_fetch_add(&k->bad, 1);
    k->count++;
    k->sum += r->value;
    return 0;
}

static void pipe_data_stages_pass_values_through_line_buffers_with(weft_pipeline_scheduling how) {
    weft_executor *ex = make_executor(4);
    struct sink k = {.stop_at = test_scale(20000)};
    weft_data_stage st[] = {
        {WEFT_STAGE_SERIAL, source, &k, "source", .WEFT_DATA_OUT(uint64_t)},
        {WEFT_STAGE_PARALLEL, expand, NULL, "expand", .WEFT_DATA_IN(uint64_t), .WEFT_DATA_OUT(struct reading)},
        {WEFT_STAGE_SERIAL, collect, &k, "collect", .WEFT_DATA_IN(struct reading)},
    };
    weft_status err;
    weft_pipeline *p = weft_data_pipeline_create(4, st, 3, &err);
    if (!p) TEST_FAIL_("%s: %s", weft_errname(err), weft_pipeline_error_message());
    ASSERT_STREQ(weft_pipeline_error_message(), "");
    ASSERT_OK(weft_pipeline_set_scheduling(p, how));
    weft_taskflow *tf = make_taskflow("data");
    ASSERT_FALSE(weft_task_is_null(weft_pipeline_emplace(tf, p)));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    uint64_t n = k.stop_at;
    ASSERT_EQ(atomic_load(&k.bad), 0);
    ASSERT_EQ(k.count, n);
    ASSERT_TRUE(k.sum == 1.5 * (double)n * (double)(n - 1) / 2);
    ASSERT_OK(weft_taskflow_destroy(tf));
    ASSERT_OK(weft_pipeline_destroy(p));
    weft_executor_destroy(ex);
}

/* Each scheduling: values pass the same way spread and inline. */
TEST(pipe_data_stages_pass_values_through_line_buffers) {
    pipe_data_stages_pass_values_through_line_buffers_with(WEFT_PIPELINE_AUTO);
    pipe_data_stages_pass_values_through_line_buffers_with(WEFT_PIPELINE_SPREAD);
    pipe_data_stages_pass_values_through_line_buffers_with(WEFT_PIPELINE_INLINE);
}

static int nop_data(weft_pipeflow *pf, void *in, void *out, void *arg) { return 0; }

/* Creates and expects WEFT_EINVAL with a message containing `want`. */
static void expect_rejected(const weft_data_stage *st, size_t n, const char *want) {
    weft_status err = WEFT_OK;
    weft_pipeline *p = weft_data_pipeline_create(2, st, n, &err);
    ASSERT_NULL(p);
    ASSERT_STATUS(err, WEFT_EINVAL);
    const char *msg = weft_pipeline_error_message();
    if (!strstr(msg, want)) TEST_FAIL_("message \"%s\" does not mention \"%s\"", msg, want);
}

TEST(pipe_data_mismatched_stages_are_rejected_at_creation) {
    /* Sizes differ. */
    expect_rejected((weft_data_stage[]){
                        {WEFT_STAGE_SERIAL, nop_data, NULL, "parse", .out_size = 8},
                        {WEFT_STAGE_SERIAL, nop_data, NULL, "sum", .in_size = 4},
                    },
                    2, "stage 0 'parse' gives 8 bytes ('untyped') but stage 1 'sum' takes 4 bytes ('untyped')");
    /* Same size, different tags. */
    expect_rejected((weft_data_stage[]){
                        {WEFT_STAGE_SERIAL, nop_data, NULL, "make", .WEFT_DATA_OUT(double)},
                        {WEFT_STAGE_PARALLEL, nop_data, NULL, "use", .WEFT_DATA_IN(uint64_t)},
                    },
                    2, "'double'");
    expect_rejected((weft_data_stage[]){
                        {WEFT_STAGE_SERIAL, nop_data, NULL, "a", .WEFT_DATA_OUT(int)},
                        {WEFT_STAGE_PARALLEL, nop_data, NULL, "b", .WEFT_DATA_IN(int), .WEFT_DATA_OUT(float)},
                        {WEFT_STAGE_SERIAL, nop_data, NULL, "c", .WEFT_DATA_IN(int)},
                    },
                    3, "stage 1 'b' gives 4 bytes ('float') but stage 2 'c' takes 4 bytes ('int')");
    /* The ends. */
    expect_rejected((weft_data_stage[]){{WEFT_STAGE_SERIAL, nop_data, NULL, "first", .in_size = 4}}, 1,
                    "stage 0 'first' is the first stage");
    expect_rejected((weft_data_stage[]){
                        {WEFT_STAGE_SERIAL, nop_data, NULL, NULL, .out_size = 4},
                        {WEFT_STAGE_SERIAL, nop_data, NULL, NULL, .in_size = 4, .out_size = 4},
                    },
                    2, "stage 1 is the last stage");
    expect_rejected((weft_data_stage[]){{WEFT_STAGE_PARALLEL, nop_data, NULL, "gen", .in_size = 0}}, 1, "must be serial");
    expect_rejected((weft_data_stage[]){{WEFT_STAGE_SERIAL, NULL, NULL, "gen", .in_size = 0}}, 1, "has no function");
    /* A tag on one side only is fine when the sizes agree. */
    weft_status err;
    weft_pipeline *p = weft_data_pipeline_create(2,
                                                 (weft_data_stage[]){
                                                     {WEFT_STAGE_SERIAL, nop_data, NULL, "a", .WEFT_DATA_OUT(int)},
                                                     {WEFT_STAGE_SERIAL, nop_data, NULL, "b", .in_size = sizeof(int)},
                                                 },
                                                 2, &err);
    ASSERT_NOT_NULL(p);
    ASSERT_OK(err);
    ASSERT_OK(weft_pipeline_destroy(p));
}

/* ---- simple pipelines ------------------------------------------------------------------ */

struct order {
    size_t next;
    atomic_int bad;
};

static int add_one(void *item, size_t index, void *arg) {
    *(int64_t *)item += 1;
    return 0;
}

static int twice_in_order(void *item, size_t index, void *arg) {
    struct order *o = arg;
    if (index != o->next) atomic_fetch_add(&o->bad, 1);
    o->next = index + 1;
    *(int64_t *)item *= 2;
    return 0;
}

static int minus_index(void *item, size_t index, void *arg) {
    *(int64_t *)item -= (int64_t)index;
    return 0;
}

static void pipe_simple_pipeline_mutates_every_item_in_place_with(weft_pipeline_scheduling how) {
    weft_executor *ex = make_executor(3);
    size_t n = test_scale(10000);
    int64_t *items = malloc(n * sizeof *items);
    ASSERT_NOT_NULL(items);
    for (size_t i = 0; i < n; i++) items[i] = (int64_t)i;
    struct order o = {0};
    weft_item_stage st[] = {{WEFT_STAGE_PARALLEL, add_one, NULL, "add"},
                            {WEFT_STAGE_SERIAL, twice_in_order, &o, "twice"},
                            {WEFT_STAGE_PARALLEL, minus_index, NULL, "minus"}};
    weft_status err;
    weft_pipeline *p = weft_simple_pipeline_create(4, items, n, sizeof *items, st, 3, &err);
    ASSERT_NOT_NULL(p);
    ASSERT_OK(weft_pipeline_set_scheduling(p, how));
    ASSERT_EQ(weft_pipeline_num_stages(p), 3);
    weft_taskflow *tf = make_taskflow("simple");
    ASSERT_FALSE(weft_task_is_null(weft_pipeline_emplace(tf, p)));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    for (size_t i = 0; i < n; i++) ASSERT_EQ(items[i], (int64_t)i + 2); /* 2(i + 1) - i */
    ASSERT_EQ(o.next, n);
    /* Each run processes the whole batch again, from index 0. */
    o.next = 0;
    ASSERT_OK(weft_run_and_wait(ex, tf));
    for (size_t i = 0; i < n; i++) ASSERT_EQ(items[i], (int64_t)i + 6); /* 2(i + 3) - i */
    /* Another batch; an empty batch does nothing. */
    int64_t few[3] = {10, 20, 30};
    o.next = 0;
    ASSERT_OK(weft_simple_pipeline_set_items(p, few, 3));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(few[0], 22);
    ASSERT_EQ(few[2], 60);
    ASSERT_OK(weft_simple_pipeline_set_items(p, NULL, 0));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(weft_pipeline_num_tokens(p), 0);
    ASSERT_EQ(atomic_load(&o.bad), 0);
    ASSERT_OK(weft_taskflow_destroy(tf));
    ASSERT_OK(weft_pipeline_destroy(p));
    free(items);
    weft_executor_destroy(ex);
}

/* Each scheduling: a parallel first stage is spread or inline like any other. */
TEST(pipe_simple_pipeline_mutates_every_item_in_place) {
    pipe_simple_pipeline_mutates_every_item_in_place_with(WEFT_PIPELINE_AUTO);
    pipe_simple_pipeline_mutates_every_item_in_place_with(WEFT_PIPELINE_SPREAD);
    pipe_simple_pipeline_mutates_every_item_in_place_with(WEFT_PIPELINE_INLINE);
}

/* A batch whose count times item_size runs past the end of the address space
 * (the product wraps) is refused at creation and by set_items, with a message
 * naming the sizes; a run would otherwise hand stages wrapped addresses. */
TEST(pipe_simple_pipeline_refuses_a_batch_larger_than_memory) {
    static int64_t items[4];
    weft_item_stage st[] = {{WEFT_STAGE_SERIAL, minus_index, NULL, "minus"}};
    weft_status err = WEFT_OK;
    size_t huge = SIZE_MAX / 8 + 2; /* * 8 wraps to 8 */
    ASSERT_NULL(weft_simple_pipeline_create(2, items, huge, sizeof *items, st, 1, &err));
    ASSERT_STATUS(err, WEFT_EINVAL);
    ASSERT_NOT_NULL(strstr(weft_last_error_message(), "do not fit in memory"));
    weft_pipeline *p = weft_simple_pipeline_create(2, items, 4, sizeof *items, st, 1, &err);
    ASSERT_NOT_NULL(p);
    ASSERT_STATUS(weft_simple_pipeline_set_items(p, items, huge), WEFT_EINVAL);
    ASSERT_NOT_NULL(strstr(weft_last_error_message(), "do not fit in memory"));
    /* The largest batch that does fit from this address is taken. */
    size_t fits = (UINTPTR_MAX - (uintptr_t)items) / sizeof *items + 1;
    ASSERT_OK(weft_simple_pipeline_set_items(p, items, fits));
    ASSERT_STATUS(weft_simple_pipeline_set_items(p, items, fits + 1), WEFT_EINVAL);
    ASSERT_OK(weft_simple_pipeline_set_items(p, items, 4));
    ASSERT_OK(weft_pipeline_destroy(p));
}
