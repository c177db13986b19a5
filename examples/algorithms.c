/* Parallel algorithms in a few lines: fill an array in parallel, sum it, sort
 * it, take its prefix sums, and find an element; each result is checked against
 * a plain loop.  SPDX-License-Identifier: MIT
 *
 * The typed calls (weft_double_sort, weft_double_sum_reduce, ...) come from
 * <weft/algo_typed.h>, which generates them with the comparison or the addition
 * inlined; the weft_parallel_* calls are the generic, function-pointer forms that
 * work on any element type. */
#include <stdio.h>
#include <stdlib.h>

#include <weft.h>
#include <weft/algo_typed.h>

enum { N = 1000003 };

/* The body of a parallel loop gets a sub-range and loops over it itself. */
static void fill(size_t lo, size_t hi, void *arg) {
    double *v = arg;
    for (size_t i = lo; i < hi; i++) v[i] = (double)((i * 7919) % N) * 0.5;
}

static bool is_big(const void *elem, void *arg) { return *(const double *)elem > *(const double *)arg; }

static int check(const char *what, weft_status st) {
    if (st == WEFT_OK) return 0;
    fprintf(stderr, "algorithms: %s: %s\n", what, weft_strerror(st));
    return 1;
}

int main(void) {
    weft_status st;
    weft_executor *ex = weft_executor_create(NULL, &st);
    if (!ex) return check("weft_executor_create", st);
    double *v = malloc(N * sizeof *v), *prefix = malloc(N * sizeof *v);
    int bad = !v || !prefix;

    bad |= check("for_range", weft_parallel_for_range(ex, 0, N, 1, fill, v, NULL));
    double sum = 0, want = 0;
    for (size_t i = 0; i < N && !bad; i++) want += v[i];
    bad |= check("sum", weft_double_sum_reduce(ex, v, N, &sum, NULL));
    printf("sum          %.1f (a plain loop: %.1f)\n", sum, want);

    /* Dynamic chunks of 1000 elements, taken one at a time by idle workers. */
    weft_algo_config dyn = { .partitioner = WEFT_PARTITION_DYNAMIC, .chunk = 1000 };
    double limit = 499990.0;
    size_t at = 0;
    bad |= check("find_if", weft_parallel_find_if(ex, v, N, sizeof *v, is_big, &limit, &at, &dyn));
    printf("find_if      first element > %.0f is v[%zu] = %.1f\n", limit, at, at < N ? v[at] : 0.0);

    bad |= check("sort", weft_double_sort(ex, v, N, NULL));
    bad |= check("scan", weft_double_sum_inclusive_scan(ex, v, prefix, N, NULL, NULL));
    for (size_t i = 1; i < N && !bad; i++) bad |= v[i - 1] > v[i];
    printf("sort         v[0] = %.1f, v[N/2] = %.1f, v[N-1] = %.1f\n", v[0], v[N / 2], v[N - 1]);
    printf("scan         prefix[N-1] = %.1f\n", prefix[N - 1]);
    bad |= sum < want * (1 - 1e-12) || sum > want * (1 + 1e-12);

    free(v), free(prefix);
    weft_executor_destroy(ex);
    printf("%s\n", bad ? "algorithms: FAILED" : "algorithms: all results match the plain loops");
    return bad;
}
