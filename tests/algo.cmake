# Parallel algorithms: loops, reductions, scans, sorts, errors and graph tasks,
# checked against serial results on sizes 0, 1, 2, primes and 10^7.
weft_add_test_program(algo_tests
  SOURCES algo_loops.c algo_reduce.c algo_scan.c algo_sort.c algo_errors.c algo_cmp.c
          algo_empty.c algo_hunt38.c
  TIMEOUT 120)
