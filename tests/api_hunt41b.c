/* Contracts of the C headers, part 2 (session 41): weft/algo.h, pipeline.h,
 * sched.h, cancel.h, observe.h and the semaphores of async.h.  Each test
 * checks one promise a header makes, by a call that would see it broken. */
#include "harness.h"

#include <weft.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int item_nop(void *item, size_t index, void *arg) {
    (void)item, (void)index, (void)arg;
    return 0;
}

/* weft/pipeline.h, weft_simple_pipeline_create and _set_items: "count items of
 * item_size bytes from `items` that would run past the end of the address
 * space" are WEFT_EINVAL.  The batch is refused when its last item runs past
 * the end, not only when it starts past it; a batch that ends on the last
 * byte is accepted (nothing is read at creation). */
TEST(a_simple_batch_whose_last_item_runs_past_the_end_of_memory_is_einval) {
    weft_item_stage st = { WEFT_STAGE_SERIAL, item_nop, NULL, "nop" };
    weft_status err = WEFT_OK;
    /* Three items of 8 bytes from 16 bytes before the end: the third starts
     * on the last byte and its other 7 bytes run past it. */
    void *near_end = (void *)(uintptr_t)(UINTPTR_MAX - 16);
    ASSERT_NULL(weft_simple_pipeline_create(1, near_end, 3, 8, &st, 1, &err));
    ASSERT_STATUS(err, WEFT_EINVAL);
    ASSERT_TRUE(strstr(weft_last_error_message(), "do not fit") != NULL);
    /* Items larger than what is left: one item of 32 bytes, 17 left. */
    err = WEFT_OK;
    ASSERT_NULL(weft_simple_pipeline_create(1, near_end, 1, 32, &st, 1, &err));
    ASSERT_STATUS(err, WEFT_EINVAL);
    /* Two items of 8 ending on the last byte fit (and so does the empty batch). */
    void *exact = (void *)(uintptr_t)(UINTPTR_MAX - 15);
    weft_pipeline *p = weft_simple_pipeline_create(1, exact, 2, 8, &st, 1, &err);
    ASSERT_NOT_NULL(p);
    /* set_items checks the same way, with the pipeline's item size. */
    ASSERT_STATUS(weft_simple_pipeline_set_items(p, near_end, 3), WEFT_EINVAL);
    ASSERT_STATUS(weft_simple_pipeline_set_items(p, (void *)(uintptr_t)(UINTPTR_MAX - 6), 1), WEFT_EINVAL);
    ASSERT_OK(weft_simple_pipeline_set_items(p, exact, 2));
    ASSERT_OK(weft_simple_pipeline_set_items(p, near_end, 0));
    ASSERT_OK(weft_pipeline_destroy(p));
}
