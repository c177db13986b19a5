/* NVRTC, the CUDA run-time compiler, loaded with dlopen (no build or run
 * dependency): CUDA C++ source to PTX, for weft_gpu_parallel_for on CUDA.
 * Compiling needs no GPU, only the library.  Loaded once per process and
 * kept. */
#include "core/alloc.h"
#include "core/error_detail.h"
#include "gpu/backend.h"
#include "platform/files.h"

#include <string.h>

typedef int nvrtc_res; /* nvrtcResult: 0 success */
typedef void *nvrtc_prog;

static struct nvrtc_api {
    nvrtc_res (*create)(nvrtc_prog *p, const char *src, const char *name, int nh, const char *const *h,
                        const char *const *hn);
    nvrtc_res (*compile)(nvrtc_prog p, int nopt, const char *const *opts);
    nvrtc_res (*ptx_size)(nvrtc_prog p, size_t *n);
    nvrtc_res (*ptx)(nvrtc_prog p, char *out);
    nvrtc_res (*log_size)(nvrtc_prog p, size_t *n);
    nvrtc_res (*log)(nvrtc_prog p, char *out);
    nvrtc_res (*destroy)(nvrtc_prog *p);
    const char *(*error_string)(nvrtc_res r);
} api;
static _Atomic int api_state; /* 0 not tried, 2 loading, 1 loaded, -1 not there */

/* The sonames tried, newest first; WEFT_NVRTC is not read: the plain name
 * follows LD_LIBRARY_PATH. */
static const char *const names[] = {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2"};

static int load(void) {
    void *lib = NULL;
    for (size_t i = 0; i < sizeof names / sizeof *names && !lib; i++) lib = weft__dl_open(names[i]);
    if (!lib) return -1;
    struct {
        const char *sym;
        void **slot;
    } syms[] = {
        {"nvrtcCreateProgram", (void **)&api.create},     {"nvrtcCompileProgram", (void **)&api.compile},
        {"nvrtcGetPTXSize", (void **)&api.ptx_size},      {"nvrtcGetPTX", (void **)&api.ptx},
        {"nvrtcGetProgramLogSize", (void **)&api.log_size}, {"nvrtcGetProgramLog", (void **)&api.log},
        {"nvrtcDestroyProgram", (void **)&api.destroy},   {"nvrtcGetErrorString", (void **)&api.error_string},
    };
    for (size_t i = 0; i < sizeof syms / sizeof *syms; i++) {
        *syms[i].slot = weft__dl_sym(lib, syms[i].sym);
        if (!*syms[i].slot) {
            weft__dl_close(lib);
            return -1;
        }
    }
    return 1; /* the library stays open */
}

static bool loaded(void) {
    int s = atomic_load_explicit(&api_state, memory_order_acquire);
    if (s == 0) {
        int zero = 0;
        if (atomic_compare_exchange_strong_explicit(&api_state, &zero, 2, memory_order_acquire,
                                                    memory_order_relaxed)) {
            s = load();
            atomic_store_explicit(&api_state, s, memory_order_release);
            return s == 1;
        }
    }
    unsigned idle = 0;
    while ((s = atomic_load_explicit(&api_state, memory_order_acquire)) == 2) weft__spin_pause(&idle);
    return s == 1;
}

int weft__gpu_nvrtc_ptx(const char *source, const char *arch, char **ptx, size_t *ptx_bytes) {
    if (!loaded()) {
        weft__set_error_message("cuda: NVRTC (libnvrtc.so) not found: kernels from source need it");
        return WEFT_ENOENT;
    }
    nvrtc_prog p = NULL;
    nvrtc_res r = api.create(&p, source, "weft_for.cu", 0, NULL, NULL);
    if (r) {
        weft__set_error_message("cuda: nvrtcCreateProgram: %s", api.error_string(r));
        return r == 1 ? WEFT_ENOMEM : WEFT_EDEVICE; /* NVRTC_ERROR_OUT_OF_MEMORY */
    }
    char opt[64];
    size_t alen = strlen(arch);
    if (alen > sizeof opt - 24) alen = sizeof opt - 24;
    memcpy(opt, "--gpu-architecture=", 19);
    memcpy(opt + 19, arch, alen);
    opt[19 + alen] = '\0';
    const char *opts[] = {opt, "--std=c++11"};
    int st = WEFT_OK;
    r = api.compile(p, 2, opts);
    if (r) {
        size_t n = 0;
        char buf[1024] = "";
        if (api.log_size(p, &n) == 0 && n > 0) {
            char *log = weft__alloc(n);
            if (log && api.log(p, log) == 0) {
                size_t k = n < sizeof buf ? n : sizeof buf;
                memcpy(buf, log, k);
                buf[k - 1] = '\0';
            }
            if (log) weft__free(log, n);
        }
        weft__set_error_message("cuda: nvrtcCompileProgram: %s: %s", api.error_string(r), buf);
        st = WEFT_EDEVICE;
    } else if ((r = api.ptx_size(p, ptx_bytes)) != 0 || !(*ptx = weft__alloc(*ptx_bytes))) {
        st = r ? WEFT_EDEVICE : WEFT_ENOMEM;
        if (r) weft__set_error_message("cuda: nvrtcGetPTXSize: %s", api.error_string(r));
    } else if ((r = api.ptx(p, *ptx)) != 0) {
        weft__set_error_message("cuda: nvrtcGetPTX: %s", api.error_string(r));
        weft__free(*ptx, *ptx_bytes);
        *ptx = NULL;
        st = WEFT_EDEVICE;
    }
    api.destroy(&p);
    return st;
}
