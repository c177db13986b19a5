/* The OpenCL backend, through the ICD loader (libOpenCL.so.1) loaded with
 * dlopen: no OpenCL header or library is needed to build weft.  OpenCL 1.2
 * calls only.  A stream is an in-order command queue, flushed after each
 * enqueue so polled events make progress; an event is a marker.  Programs are
 * built once per device and source text (a list under the device's lock). */
#include "core/alloc.h"
#include "core/error_detail.h"
#include "gpu/backend.h"
#include "platform/files.h"

#include <stdio.h>
#include <string.h>

typedef int32_t cl_int;
typedef uint32_t cl_uint;
typedef uint64_t cl_ulong;
typedef struct cl_opaque *cl_platform_id, *cl_device_id, *cl_context, *cl_command_queue, *cl_mem, *cl_program,
    *cl_kernel, *cl_event;

enum {
    CL_DEVICE_TYPE_GPU = 1 << 2,
    CL_DEVICE_MAX_MEM_ALLOC_SIZE = 0x1010,
    CL_DEVICE_GLOBAL_MEM_SIZE = 0x101F,
    CL_DEVICE_NAME = 0x102B,
    CL_MEM_READ_WRITE = 1 << 0,
    CL_PROGRAM_BUILD_LOG = 0x1183,
    CL_KERNEL_NUM_ARGS = 0x1191,
    CL_EVENT_COMMAND_EXECUTION_STATUS = 0x11D3,
    CL_MEM_OBJECT_ALLOCATION_FAILURE = -4,
    CL_OUT_OF_RESOURCES = -5,
    CL_OUT_OF_HOST_MEMORY = -6,
    CL_BUILD_PROGRAM_FAILURE = -11,
    CL_INVALID_KERNEL_NAME = -46,
    CL_INVALID_WORK_GROUP_SIZE = -54,
    CL_INVALID_BUFFER_SIZE = -61,
};
#define CL_DEVICE_TYPE_ALL 0xFFFFFFFFull

/* The entry points, as X(name, return type, parameters). */
#define CL_FUNCTIONS(X)                                                                                     \
    X(GetPlatformIDs, cl_int, (cl_uint, cl_platform_id *, cl_uint *))                                       \
    X(GetDeviceIDs, cl_int, (cl_platform_id, cl_ulong, cl_uint, cl_device_id *, cl_uint *))                 \
    X(GetDeviceInfo, cl_int, (cl_device_id, cl_uint, size_t, void *, size_t *))                             \
    X(CreateContext, cl_context, (const intptr_t *, cl_uint, const cl_device_id *, void *, void *, cl_int *)) \
    X(ReleaseContext, cl_int, (cl_context))                                                                 \
    X(CreateCommandQueue, cl_command_queue, (cl_context, cl_device_id, cl_ulong, cl_int *))                 \
    X(ReleaseCommandQueue, cl_int, (cl_command_queue))                                                      \
    X(CreateBuffer, cl_mem, (cl_context, cl_ulong, size_t, void *, cl_int *))                               \
    X(ReleaseMemObject, cl_int, (cl_mem))                                                                   \
    X(EnqueueWriteBuffer, cl_int,                                                                           \
      (cl_command_queue, cl_mem, cl_uint, size_t, size_t, const void *, cl_uint, const cl_event *, cl_event *)) \
    X(EnqueueReadBuffer, cl_int,                                                                            \
      (cl_command_queue, cl_mem, cl_uint, size_t, size_t, void *, cl_uint, const cl_event *, cl_event *))   \
    X(Flush, cl_int, (cl_command_queue))                                                                    \
    X(Finish, cl_int, (cl_command_queue))                                                                   \
    X(EnqueueMarkerWithWaitList, cl_int, (cl_command_queue, cl_uint, const cl_event *, cl_event *))         \
    X(GetEventInfo, cl_int, (cl_event, cl_uint, size_t, void *, size_t *))                                  \
    X(WaitForEvents, cl_int, (cl_uint, const cl_event *))                                                   \
    X(ReleaseEvent, cl_int, (cl_event))                                                                     \
    X(CreateProgramWithSource, cl_program, (cl_context, cl_uint, const char **, const size_t *, cl_int *))  \
    X(BuildProgram, cl_int, (cl_program, cl_uint, const cl_device_id *, const char *, void *, void *))      \
    X(GetProgramBuildInfo, cl_int, (cl_program, cl_device_id, cl_uint, size_t, void *, size_t *))           \
    X(ReleaseProgram, cl_int, (cl_program))                                                                 \
    X(CreateKernel, cl_kernel, (cl_program, const char *, cl_int *))                                        \
    X(ReleaseKernel, cl_int, (cl_kernel))                                                                   \
    X(GetKernelInfo, cl_int, (cl_kernel, cl_uint, size_t, void *, size_t *))                                \
    X(SetKernelArg, cl_int, (cl_kernel, cl_uint, size_t, const void *))                                     \
    X(EnqueueNDRangeKernel, cl_int,                                                                         \
      (cl_command_queue, cl_kernel, cl_uint, const size_t *, const size_t *, const size_t *, cl_uint,      \
       const cl_event *, cl_event *))

typedef struct cl_api {
#define CL_FIELD(name, ret, params) ret(*name) params;
    CL_FUNCTIONS(CL_FIELD)
#undef CL_FIELD
} cl_api;

typedef struct cl_prog {
    struct cl_prog *next;
    char *source;
    cl_program program;
} cl_prog;

typedef struct cl_dev {
    void *lib;
    cl_api cl;
    cl_device_id device;
    cl_context context;
    cl_command_queue sync_queue; /* for synchronous copies */
    cl_ulong max_alloc, global_mem;
    weft__mutex lock; /* programs */
    cl_prog *programs;
} cl_dev;

typedef struct cl_kern {
    cl_kernel kernel;
    cl_uint nargs;    /* the kernel's parameters (CL_KERNEL_NUM_ARGS) */
    weft__mutex lock; /* clSetKernelArg is not thread-safe on one kernel */
} cl_kern;

static const char *cl_error_name(cl_int e) {
    switch (e) {
    case -1: return "CL_DEVICE_NOT_FOUND";
    case -4: return "CL_MEM_OBJECT_ALLOCATION_FAILURE";
    case -5: return "CL_OUT_OF_RESOURCES";
    case -6: return "CL_OUT_OF_HOST_MEMORY";
    case -11: return "CL_BUILD_PROGRAM_FAILURE";
    case -30: return "CL_INVALID_VALUE";
    case -38: return "CL_INVALID_MEM_OBJECT";
    case -46: return "CL_INVALID_KERNEL_NAME";
    case -48: return "CL_INVALID_KERNEL";
    case -49: return "CL_INVALID_ARG_INDEX";
    case -50: return "CL_INVALID_ARG_VALUE";
    case -51: return "CL_INVALID_ARG_SIZE";
    case -52: return "CL_INVALID_KERNEL_ARGS";
    case -54: return "CL_INVALID_WORK_GROUP_SIZE";
    case -55: return "CL_INVALID_WORK_ITEM_SIZE";
    case -61: return "CL_INVALID_BUFFER_SIZE";
    case -63: return "CL_INVALID_GLOBAL_WORK_SIZE";
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";
    default: return "an OpenCL error";
    }
}

/* 0 for CL_SUCCESS; else the weft status for e, with the message set. */
static int cl_fail(cl_int e, const char *call) {
    if (e == 0) return 0;
    weft__set_error_message("opencl: cl%s: %s (%d)", call, cl_error_name(e), (int)e);
    switch (e) {
    case CL_MEM_OBJECT_ALLOCATION_FAILURE:
    case CL_OUT_OF_RESOURCES:
    case CL_OUT_OF_HOST_MEMORY:
    case CL_INVALID_BUFFER_SIZE: return WEFT_ENOMEM;
    case CL_INVALID_KERNEL_NAME: return WEFT_ENOENT;
    default: return WEFT_EDEVICE;
    }
}

#define API(dev) (&((cl_dev *)(dev)->impl)->cl)
#define CL_CALL(dev, name, ...) cl_fail(API(dev)->name(__VA_ARGS__), #name)

static int load_api(cl_dev *cd) {
    cd->lib = weft__dl_open("libOpenCL.so.1");
    if (!cd->lib) {
        weft__set_error_message("opencl: libOpenCL.so.1 not found (or not loadable)");
        return WEFT_ENOENT;
    }
#define CL_LOAD(name, ret, params)                                                                  \
    if (!(*(void **)&cd->cl.name = weft__dl_sym(cd->lib, "cl" #name))) {                            \
        weft__set_error_message("opencl: libOpenCL.so.1 lacks cl" #name " (OpenCL 1.2 is needed)"); \
        return WEFT_ENOENT;                                                                         \
    }
    CL_FUNCTIONS(CL_LOAD)
#undef CL_LOAD
    return 0;
}

/* Device number `index`, counting GPUs of every platform first, then the
 * other devices (a CPU through PoCL, for instance). */
static int find_device(cl_dev *cd, unsigned index) {
    cl_platform_id plats[16];
    cl_uint np = 0;
    if (cd->cl.GetPlatformIDs(16, plats, &np) != 0 || np == 0) {
        weft__set_error_message("opencl: no platform (is an ICD such as pocl-opencl-icd installed?)");
        return WEFT_ENOENT;
    }
    if (np > 16) np = 16;
    for (int pass = 0; pass < 2; pass++) {
        for (cl_uint p = 0; p < np; p++) {
            cl_device_id devs[16];
            cl_uint nd = 0;
            cl_ulong type = pass == 0 ? CL_DEVICE_TYPE_GPU : CL_DEVICE_TYPE_ALL & ~(cl_ulong)CL_DEVICE_TYPE_GPU;
            if (cd->cl.GetDeviceIDs(plats[p], type, 16, devs, &nd) != 0) continue;
            if (nd > 16) nd = 16;
            if (index < nd) {
                cd->device = devs[index];
                return 0;
            }
            index -= nd;
        }
    }
    weft__set_error_message("opencl: no device at that index");
    return WEFT_ENOENT;
}

static int start_device(weft_gpu_device *dev, cl_dev *cd) {
    cl_int e = 0;
    cd->cl.GetDeviceInfo(cd->device, CL_DEVICE_NAME, sizeof dev->name - 1, dev->name, NULL);
    cd->cl.GetDeviceInfo(cd->device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof cd->max_alloc, &cd->max_alloc, NULL);
    cd->cl.GetDeviceInfo(cd->device, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof cd->global_mem, &cd->global_mem, NULL);
    cd->context = cd->cl.CreateContext(NULL, 1, &cd->device, NULL, NULL, &e);
    if (e) return cl_fail(e, "CreateContext");
    cd->sync_queue = cd->cl.CreateCommandQueue(cd->context, cd->device, 0, &e);
    return cl_fail(e, "CreateCommandQueue");
}

static void cl_close(weft_gpu_device *dev) {
    cl_dev *cd = dev->impl;
    for (cl_prog *p = cd->programs, *next; p; p = next) {
        next = p->next;
        cd->cl.ReleaseProgram(p->program);
        weft__free_str(p->source);
        weft__free(p, sizeof *p);
    }
    if (cd->sync_queue) cd->cl.ReleaseCommandQueue(cd->sync_queue);
    if (cd->context) cd->cl.ReleaseContext(cd->context);
    /* The ICD loader stays loaded (cd->lib is not closed; dlopen counts the
     * references, so nothing grows): vendor ICDs such as PoCL keep state past
     * clReleaseContext and run exit handlers from their own code, which must
     * still be mapped at exit.  Unloading them is what OpenCL programs never
     * do, and it turned their allocations into leaks of an "unknown module"
     * that no LeakSanitizer suppression can name (tests/gpu-lsan.supp). */
    weft__mutex_destroy(&cd->lock);
    weft__free(cd, sizeof *cd);
}

static int cl_open(weft_gpu_device *dev, const weft_gpu_config *cfg) {
    cl_dev *cd = weft__calloc(sizeof *cd);
    if (!cd) return weft__fail("opencl", WEFT_ENOMEM, "no host memory for the device");
    if (weft__mutex_init(&cd->lock) != 0) {
        weft__free(cd, sizeof *cd);
        return weft__fail("opencl", WEFT_ENOMEM, "the device's lock could not be made");
    }
    dev->impl = cd;
    int st = load_api(cd);
    if (!st) st = find_device(cd, cfg->index);
    if (!st) st = start_device(dev, cd);
    if (st) cl_close(dev);
    return st;
}

static int cl_mem_info(weft_gpu_device *dev, size_t *free_b, size_t *total_b) {
    cl_dev *cd = dev->impl;
    *free_b = *total_b = (size_t)cd->global_mem; /* OpenCL cannot tell free memory */
    return 0;
}

static int cl_alloc(weft_gpu_device *dev, size_t bytes, unsigned flags, uint64_t *h, void **host) {
    cl_dev *cd = dev->impl;
    if (flags & WEFT_GPU_MANAGED) {
        weft__set_error_message("opencl: managed memory is not supported");
        return WEFT_ENOENT;
    }
    if (bytes > cd->max_alloc) {
        weft__set_error_message("opencl: out of device memory (%zu bytes asked; one buffer may have %llu)", bytes,
                                (unsigned long long)cd->max_alloc);
        return WEFT_ENOMEM;
    }
    cl_int e = 0;
    cl_mem m = cd->cl.CreateBuffer(cd->context, CL_MEM_READ_WRITE, bytes, NULL, &e);
    if (e) return cl_fail(e, "CreateBuffer");
    *h = (uint64_t)(uintptr_t)m;
    *host = NULL;
    return 0;
}

static void cl_free(weft_gpu_device *dev, uint64_t h, size_t bytes, unsigned flags) {
    API(dev)->ReleaseMemObject((cl_mem)(uintptr_t)h);
}

static cl_command_queue queue_of(weft_gpu_device *dev, void *stream) {
    return stream ? stream : ((cl_dev *)dev->impl)->sync_queue;
}

static int cl_upload(weft_gpu_device *dev, void *stream, uint64_t dst, size_t off, const void *src, size_t n) {
    cl_command_queue q = queue_of(dev, stream);
    int st = CL_CALL(dev, EnqueueWriteBuffer, q, (cl_mem)(uintptr_t)dst, !stream, off, n, src, 0, NULL, NULL);
    return st ? st : CL_CALL(dev, Flush, q);
}

static int cl_download(weft_gpu_device *dev, void *stream, void *dst, uint64_t src, size_t off, size_t n) {
    cl_command_queue q = queue_of(dev, stream);
    int st = CL_CALL(dev, EnqueueReadBuffer, q, (cl_mem)(uintptr_t)src, !stream, off, n, dst, 0, NULL, NULL);
    return st ? st : CL_CALL(dev, Flush, q);
}

static int cl_stream_create(weft_gpu_device *dev, void **stream) {
    cl_dev *cd = dev->impl;
    cl_int e = 0;
    *stream = cd->cl.CreateCommandQueue(cd->context, cd->device, 0, &e);
    return cl_fail(e, "CreateCommandQueue");
}

static void cl_stream_destroy(weft_gpu_device *dev, void *stream) { API(dev)->ReleaseCommandQueue(stream); }

static int cl_event_record(weft_gpu_device *dev, void *stream, void **event);
static int cl_event_sync(weft_gpu_device *dev, void *event);

/* A marker waited for, rather than clFinish: its status tells whether the
 * work before it failed.  Without a marker, clFinish all the same (as the
 * emulator waits): weft_gpu_stream_destroy relies on the wait, and its caller
 * may free the host memory of queued copies once it returns. */
static int cl_stream_sync(weft_gpu_device *dev, void *stream) {
    void *e;
    int st = cl_event_record(dev, stream, &e);
    if (st) {
        (void)API(dev)->Finish(stream);
        return st;
    }
    st = cl_event_sync(dev, e);
    API(dev)->ReleaseEvent(e);
    return st;
}

static int cl_event_record(weft_gpu_device *dev, void *stream, void **event) {
    int st = CL_CALL(dev, EnqueueMarkerWithWaitList, stream, 0, NULL, (cl_event *)event);
    return st ? st : CL_CALL(dev, Flush, stream);
}

static int cl_event_query(weft_gpu_device *dev, void *event) {
    cl_int status = 0;
    int st = CL_CALL(dev, GetEventInfo, event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL);
    if (st) return st;
    if (status > 0) return WEFT_EAGAIN; /* queued, submitted or running */
    return cl_fail(status, "EnqueueMarkerWithWaitList (work before it failed)");
}

static int cl_event_sync(weft_gpu_device *dev, void *event) {
    cl_event e = event;
    int st = CL_CALL(dev, WaitForEvents, 1, &e);
    return st ? st : cl_event_query(dev, event);
}

static void cl_event_destroy(weft_gpu_device *dev, void *event) { API(dev)->ReleaseEvent(event); }

/* The build log of a failed build, into the error message. */
static int build_failed(cl_dev *cd, cl_program prog, cl_int e) {
    char log[200] = "";
    cd->cl.GetProgramBuildInfo(prog, cd->device, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
    log[sizeof log - 1] = '\0';
    weft__set_error_message("opencl: build failed (%s): %s", cl_error_name(e), log);
    return WEFT_EDEVICE;
}

/* The program built from `source`, from the cache or built now.  Under cd->lock. */
static int get_program(cl_dev *cd, const char *source, cl_program *out) {
    for (cl_prog *p = cd->programs; p; p = p->next) {
        if (strcmp(p->source, source) == 0) {
            *out = p->program;
            return 0;
        }
    }
    cl_int e = 0;
    cl_program prog = cd->cl.CreateProgramWithSource(cd->context, 1, &source, NULL, &e);
    if (e) return cl_fail(e, "CreateProgramWithSource");
    e = cd->cl.BuildProgram(prog, 1, &cd->device, "", NULL, NULL);
    cl_prog *p = e ? NULL : weft__calloc(sizeof *p);
    if (p) p->source = weft__strdup(source);
    if (!p || !p->source) {
        int st = e ? build_failed(cd, prog, e) : weft__fail("opencl", WEFT_ENOMEM, "no host memory for a program");
        if (p) weft__free(p, sizeof *p);
        cd->cl.ReleaseProgram(prog);
        return st;
    }
    p->program = prog;
    p->next = cd->programs;
    cd->programs = p;
    *out = prog;
    return 0;
}

static int cl_kernel_create(weft_gpu_device *dev, const weft_gpu_kernel_source *src, void **kernel) {
    cl_dev *cd = dev->impl;
    if (!src->opencl) {
        weft__set_error_message("opencl: kernel %s has no OpenCL source", src->name);
        return WEFT_ENOENT;
    }
    cl_kern *k = weft__calloc(sizeof *k);
    if (!k || weft__mutex_init(&k->lock) != 0) {
        if (k) weft__free(k, sizeof *k);
        return weft__fail("opencl", WEFT_ENOMEM, "no host memory for a kernel");
    }
    cl_program prog = NULL;
    weft__mutex_lock(&cd->lock);
    int st = get_program(cd, src->opencl, &prog);
    weft__mutex_unlock(&cd->lock);
    cl_int e = 0;
    if (!st) k->kernel = cd->cl.CreateKernel(prog, src->name, &e);
    if (!st) st = cl_fail(e, "CreateKernel");
    if (!st) st = cl_fail(cd->cl.GetKernelInfo(k->kernel, CL_KERNEL_NUM_ARGS, sizeof k->nargs, &k->nargs, NULL),
                          "GetKernelInfo");
    if (st && k->kernel) cd->cl.ReleaseKernel(k->kernel);
    if (st) {
        weft__mutex_destroy(&k->lock);
        weft__free(k, sizeof *k);
        return st;
    }
    *kernel = k;
    return 0;
}

static void cl_kernel_destroy(weft_gpu_device *dev, void *kernel) {
    cl_kern *k = kernel;
    API(dev)->ReleaseKernel(k->kernel);
    weft__mutex_destroy(&k->lock);
    weft__free(k, sizeof *k);
}

static int set_args(weft_gpu_device *dev, cl_kernel k, const weft_gpu_arg *args, size_t nargs) {
    for (size_t i = 0; i < nargs; i++) {
        cl_mem m = args[i].buffer ? (cl_mem)(uintptr_t)args[i].buffer->h : NULL;
        int st = args[i].buffer ? CL_CALL(dev, SetKernelArg, k, (cl_uint)i, sizeof m, &m)
                                : CL_CALL(dev, SetKernelArg, k, (cl_uint)i, args[i].size, args[i].value);
        if (st) return st;
    }
    return 0;
}

static int cl_launch(weft_gpu_device *dev, void *stream, void *kernel, const weft_gpu_range *range,
                     const weft_gpu_arg *args, size_t nargs) {
    cl_kern *k = kernel;
    unsigned dims = weft__gpu_range_dims(range);
    bool local = range->local[0] || range->local[1] || range->local[2];
    size_t lws[3];
    for (unsigned i = 0; i < 3; i++) lws[i] = range->local[i] ? range->local[i] : 1;
    /* A kernel keeps the arguments of its last launch: a launch given fewer
     * ran with the previous launch's values for the rest (only the first
     * launch was refused, CL_INVALID_KERNEL_ARGS).  Refused every time, as the
     * driver refuses that first one. */
    if (nargs != k->nargs) {
        weft__set_error_message("opencl: launch refused: the kernel takes %u arguments, %zu given", (unsigned)k->nargs,
                                nargs);
        return WEFT_EDEVICE;
    }
    /* The arguments are captured at enqueue: hold the kernel until then. */
    weft__mutex_lock(&k->lock);
    int st = set_args(dev, k->kernel, args, nargs);
    if (!st)
        st = CL_CALL(dev, EnqueueNDRangeKernel, stream, k->kernel, dims, NULL, range->global, local ? lws : NULL, 0,
                     NULL, NULL);
    weft__mutex_unlock(&k->lock);
    if (st == WEFT_ENOMEM) st = WEFT_EDEVICE; /* out of resources for a launch: refused, not out of memory */
    return st ? st : CL_CALL(dev, Flush, stream);
}

const weft__gpu_ops weft__gpu_opencl_ops = {
    .kind = WEFT_GPU_OPENCL,
    .open = cl_open,
    .close = cl_close,
    .mem_info = cl_mem_info,
    .alloc = cl_alloc,
    .free = cl_free,
    .host_alloc = weft__gpu_plain_host_alloc,
    .host_free = weft__gpu_plain_host_free,
    .upload = cl_upload,
    .download = cl_download,
    .stream_create = cl_stream_create,
    .stream_destroy = cl_stream_destroy,
    .stream_sync = cl_stream_sync,
    .event_record = cl_event_record,
    .event_query = cl_event_query,
    .event_sync = cl_event_sync,
    .event_destroy = cl_event_destroy,
    .kernel_create = cl_kernel_create,
    .kernel_destroy = cl_kernel_destroy,
    .launch = cl_launch,
};
