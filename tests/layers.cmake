# Architecture: no file includes a header of a layer above its own
# (scripts/check-layers.sh holds the order and the named exceptions).
add_test(NAME layers.includes_never_run_up_the_layers
         COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/check-layers.sh ${PROJECT_SOURCE_DIR})
