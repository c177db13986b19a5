# Run and graph API completeness (issue 25): run_many, parallel run_n, graph
# editing, semaphores (graph and async tasks).
weft_add_test_program(graph2_tests
  SOURCES graph_many.c graph_edit.c graph_sem.c
  TIMEOUT 60)
