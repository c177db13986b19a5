# Control-flow tests: condition tasks and loops, subflows, modules, composition,
# out of memory on the new allocation sites.
weft_add_test_program(flow_tests
  SOURCES flow_cond.c flow_subflow.c flow_module.c flow_compose.c flow_oom.c flow_mixed.c flow_nested_wait.c
    flow_module_body_busy.c flow_hunt38.c flow_hunt40.c flow_hunt45.c flow_hunt47.c
  TIMEOUT 120)
