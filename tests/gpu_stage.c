/* GPU work as a pipeline stage (weft_gpu_stage_run): a read / GPU / sum
 * pipeline against a serial oracle, spread and inline, on the emulator and
 * OpenCL; a failing kernel fails the pipeline's task. */
#include <stdatomic.h>
#include <string.h>

#include "gpu_test.h"

enum { LINES = 4, TOKENS = 24, LEN = 2048 };

struct line {
    weft_gpu_buffer *buf;
    float host[LEN];
    uint64_t token;
};

struct pipe_state {
    weft_gpu_kernel *scale;
    struct line lines[LINES];
    double sum;
};

static int make(weft_pipeflow *pf, void *arg) {
    struct pipe_state *p = arg;
    uint64_t t = weft_pipeflow_token(pf);
    if (t == TOKENS) return weft_pipeflow_stop(pf), 0;
    struct line *l = &p->lines[weft_pipeflow_line(pf)];
    l->token = t;
    for (unsigned i = 0; i < LEN; i++) l->host[i] = (float)((t * 13 + i) % 89);
    return 0;
}

static int on_gpu(weft_pipeflow *pf, weft_gpu_stream *s, void *arg) {
    struct pipe_state *p = arg;
    struct line *l = &p->lines[weft_pipeflow_line(pf)];
    unsigned n = LEN;
    float a = 2.0f;
    weft_gpu_arg args[] = {WEFT_GPU_ARG_BUFFER(l->buf), WEFT_GPU_ARG_VALUE(a), WEFT_GPU_ARG_VALUE(n)};
    int st = weft_gpu_copy_to_device_async(s, l->buf, 0, l->host, LEN);
    if (!st) st = weft_gpu_launch(s, p->scale, &(weft_gpu_range){.global = {LEN}}, args, 3);
    if (!st) st = weft_gpu_copy_to_host_async(s, l->buf, 0, l->host, LEN);
    return st;
}

static int sum(weft_pipeflow *pf, void *arg) {
    struct pipe_state *p = arg;
    struct line *l = &p->lines[weft_pipeflow_line(pf)];
    for (unsigned i = 0; i < LEN; i++) p->sum += l->host[i];
    return 0;
}

static double oracle(void) {
    double s = 0;
    for (uint64_t t = 0; t < TOKENS; t++)
        for (unsigned i = 0; i < LEN; i++) s += 2.0f * (float)((t * 13 + i) % 89);
    return s;
}

static void check_stage(weft_gpu_kind kind, weft_pipeline_scheduling how) {
    weft_gpu_device *d = gpu_test_open(kind);
    weft_status st;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 2}, &st);
    ASSERT_OK(st);
    static struct pipe_state p;
    memset(&p, 0, sizeof p);
    p.scale = weft_gpu_kernel_create(d, &gpu_test_scale, &st);
    ASSERT_OK(st);
    for (int i = 0; i < LINES; i++) {
        p.lines[i].buf = weft_gpu_buffer_create(d, sizeof(float), LEN, 0, &st);
        ASSERT_OK(st);
    }
    weft_gpu_stage gs = {.dev = d, .ex = ex, .fn = on_gpu, .arg = &p};
    weft_stage stages[] = {{WEFT_STAGE_SERIAL, make, &p, "make"},
                           {WEFT_STAGE_PARALLEL, weft_gpu_stage_run, &gs, "gpu"},
                           {WEFT_STAGE_SERIAL, sum, &p, "sum"}};
    weft_pipeline *pl = weft_pipeline_create(LINES, stages, 3, &st);
    ASSERT_OK(st);
    ASSERT_OK(weft_pipeline_set_scheduling(pl, how));
    weft_taskflow *tf = weft_taskflow_create("gpu-pipe", &st);
    ASSERT_FALSE(weft_task_is_null(weft_pipeline_emplace(tf, pl)));
    for (int round = 0; round < 2; round++) {
        p.sum = 0;
        ASSERT_OK(weft_pipeline_reset(pl));
        ASSERT_OK(weft_run_and_wait(ex, tf));
        ASSERT_TRUE(p.sum == oracle());
    }
    weft_taskflow_destroy(tf);
    ASSERT_OK(weft_pipeline_destroy(pl));
    weft_executor_destroy(ex);
    for (int i = 0; i < LINES; i++) weft_gpu_buffer_destroy(p.lines[i].buf);
    weft_gpu_kernel_destroy(p.scale);
    weft_gpu_close(d);
}
TEST(emu_gpu_stage_spread_matches_serial_oracle) { check_stage(WEFT_GPU_EMULATOR, WEFT_PIPELINE_SPREAD); }
TEST(emu_gpu_stage_inline_matches_serial_oracle) { check_stage(WEFT_GPU_EMULATOR, WEFT_PIPELINE_INLINE); }
TEST(opencl_gpu_stage_spread_matches_serial_oracle) { check_stage(WEFT_GPU_OPENCL, WEFT_PIPELINE_SPREAD); }
TEST(cuda_gpu_stage_spread_matches_serial_oracle) { check_stage(WEFT_GPU_CUDA, WEFT_PIPELINE_SPREAD); }

static int fails_host(const weft_gpu_range *r, void *const *a) { return 9; }

static int launch_failing(weft_pipeflow *pf, weft_gpu_stream *s, void *arg) {
    return weft_gpu_launch(s, arg, &(weft_gpu_range){.global = {1}}, NULL, 0);
}

static int make_few(weft_pipeflow *pf, void *arg) {
    if (weft_pipeflow_token(pf) == 4) weft_pipeflow_stop(pf);
    return 0;
}

TEST(failing_kernel_in_a_gpu_stage_fails_the_pipeline) {
    weft_gpu_device *d = gpu_test_open(WEFT_GPU_EMULATOR);
    weft_status st;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 2}, &st);
    weft_gpu_kernel *k = weft_gpu_kernel_create(d, &(weft_gpu_kernel_source){.name = "f", .host = fails_host}, &st);
    ASSERT_OK(st);
    weft_gpu_stage gs = {.dev = d, .ex = ex, .fn = launch_failing, .arg = k};
    weft_stage stages[] = {{WEFT_STAGE_SERIAL, make_few, NULL, "make"},
                           {WEFT_STAGE_PARALLEL, weft_gpu_stage_run, &gs, "gpu"}};
    weft_pipeline *pl = weft_pipeline_create(2, stages, 2, &st);
    weft_taskflow *tf = weft_taskflow_create("gpu-pipe-fail", &st);
    ASSERT_FALSE(weft_task_is_null(weft_pipeline_emplace(tf, pl)));
    ASSERT_STATUS(weft_run_and_wait(ex, tf), WEFT_ETASK);
    /* Bad stage descriptions fail too, with WEFT_EINVAL. */
    ASSERT_EQ(weft_gpu_stage_run(NULL, &gs), WEFT_EINVAL);
    weft_taskflow_destroy(tf);
    ASSERT_OK(weft_pipeline_destroy(pl));
    weft_executor_destroy(ex);
    ASSERT_OK(weft_gpu_synchronize(d));
    weft_gpu_kernel_destroy(k);
    weft_gpu_close(d);
}
