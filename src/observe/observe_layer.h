/* The observe layer as an executor is built with it (core/layer.h): its init
 * reads the config, WEFT_PROFILE and WEFT_LOG; its fini saves WEFT_PROFILE and
 * frees the state.  Internal. */
#ifndef WEFT_OBSERVE_OBSERVE_LAYER_H
#define WEFT_OBSERVE_OBSERVE_LAYER_H

#include "core/layer.h"

extern weft__layer weft__observe_layer; /* lifetime.c */

#endif
