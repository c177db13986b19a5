# Topology layer: sysfs on fake trees (topo_fixture.c writes them), hwloc
# against sysfs and lstopo on this machine, placement and steal tiers.
weft_add_test_program(topo_tests SOURCES topo_fixture.c topo_sysfs.c topo_hwloc.c topo_place.c topo_layer.c topo_numa.c topo_steal.c topo_algo.c topo_hold.c
          topo_hunt39.c topo_hunt41.c topo_hunt46.c
  TIMEOUT 60)
