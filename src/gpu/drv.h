/* The CUDA driver API and the HIP runtime share one backend (drv.c): HIP's
 * module API mirrors CUDA's, so one table of CUDA-shaped entry points serves
 * both; cuda.c fills it through cuGetProcAddress, hip.c through dlsym with a
 * few adapters.  Internal. */
#ifndef WEFT_GPU_DRV_H
#define WEFT_GPU_DRV_H

#include "gpu/backend.h"

typedef int drv_res; /* CUresult / hipError_t: 0 success, 2 out of memory, 600 not ready */
#define DRV_OUT_OF_MEMORY 2
#define DRV_NOT_READY 600

typedef struct weft__drv weft__drv;

typedef struct weft__drv_api {
    drv_res (*init)(unsigned flags);
    drv_res (*device_count)(int *n);
    drv_res (*device_get)(int *dev, int ordinal);
    drv_res (*device_name)(char *name, int len, int dev);
    drv_res (*mem_alloc)(uint64_t *p, size_t bytes);
    drv_res (*mem_alloc_managed)(uint64_t *p, size_t bytes, unsigned flags);
    drv_res (*mem_free)(uint64_t p);
    drv_res (*host_alloc)(void **p, size_t bytes);
    drv_res (*host_free)(void *p);
    drv_res (*htod)(uint64_t dst, const void *src, size_t n);
    drv_res (*dtoh)(void *dst, uint64_t src, size_t n);
    drv_res (*htod_async)(uint64_t dst, const void *src, size_t n, void *stream);
    drv_res (*dtoh_async)(void *dst, uint64_t src, size_t n, void *stream);
    drv_res (*stream_create)(void **s, unsigned flags);
    drv_res (*stream_destroy)(void *s);
    drv_res (*stream_sync)(void *s);
    drv_res (*event_create)(void **e, unsigned flags);
    drv_res (*event_record)(void *e, void *s);
    drv_res (*event_query)(void *e);
    drv_res (*event_sync)(void *e);
    drv_res (*event_destroy)(void *e);
    drv_res (*module_load)(void **m, const void *image);
    drv_res (*module_unload)(void *m);
    drv_res (*module_function)(void **f, void *m, const char *name);
    drv_res (*launch)(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                      unsigned shared, void *stream, void **params, void **extra);
    drv_res (*mem_info)(size_t *free_b, size_t *total_b);
    /* Adapters written by cuda.c / hip.c. */
    void (*describe)(weft__drv *d, drv_res r, char *buf, size_t len); /* "NAME: text" */
    drv_res (*make_current)(weft__drv *d);                             /* on the calling thread */
    void (*release)(weft__drv *d);                                     /* the device's context */
} weft__drv_api;

typedef struct drv_module {
    struct drv_module *next;
    const void *image;
    void *module;
} drv_module;

struct weft__drv {
    const char *prefix; /* "cuda" or "hip", for messages */
    void *lib;
    weft__drv_api api;
    int device;
    void *context; /* CUDA: the primary context */
    weft__mutex lock; /* modules */
    drv_module *modules; /* loaded images, by address */
};

/* 0 for success; else the weft status for r, with the message
 * "<prefix>: <call>: NAME: text" set. */
int weft__drv_fail(weft__drv *d, drv_res r, const char *call);
/* The shared part of open: allocates the weft__drv, calls load (which loads
 * the library and fills api), then init, finds device cfg->index, and names
 * it.  On failure everything is released. */
int weft__drv_open(weft_gpu_device *dev, const weft_gpu_config *cfg, const char *prefix,
                   int (*load)(weft__drv *d), int (*attach)(weft__drv *d));

#endif
