/* Distributed flows: creation, destruction, handles and queries. */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "mpi/dist.h"

static _Thread_local char create_error[256];

void weft__mpi_set_create_error(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(create_error, sizeof create_error, fmt, ap);
    va_end(ap);
}

int weft__mpi_check_comm(MPI_Comm comm, const char **why) {
    int inter = 0;
    if (comm == MPI_COMM_NULL) {
        *why = "comm is MPI_COMM_NULL";
        return WEFT_EINVAL;
    }
    /* An intercommunicator's ranks are its local group's, but its messages
     * go to the remote group's ranks and its collectives combine the remote
     * group's values: a flow or pool over one would send data to the wrong
     * processes and succeed with wrong results.  Every rank of it says the
     * same, so none is left waiting in MPI_Comm_dup. */
    if (MPI_Comm_test_inter(comm, &inter) == MPI_SUCCESS && inter) {
        *why = "comm is an intercommunicator (use an intracommunicator, e.g. from MPI_Intercomm_merge)";
        return WEFT_EINVAL;
    }
    return WEFT_OK;
}

int weft__mpi_check_thread(const char **why) {
    int inited = 0, finalized = 0, level = MPI_THREAD_SINGLE, is_main = 0;
    MPI_Initialized(&inited);
    MPI_Finalized(&finalized);
    if (!inited || finalized) {
        *why = inited ? "MPI is already finalised" : "MPI is not initialised (call MPI_Init_thread first)";
        return WEFT_EINVAL;
    }
    MPI_Query_thread(&level);
    if (level < MPI_THREAD_FUNNELED) {
        *why = "MPI's thread level is MPI_THREAD_SINGLE: weft's workers are threads; "
               "initialise MPI with MPI_Init_thread at MPI_THREAD_FUNNELED or above";
        return WEFT_EINVAL;
    }
    MPI_Is_thread_main(&is_main);
    if (level == MPI_THREAD_FUNNELED && !is_main) {
        *why = "MPI's thread level is MPI_THREAD_FUNNELED and this thread did not initialise MPI; "
               "call weft_mpi_* from the main thread, or initialise at MPI_THREAD_SERIALIZED or above";
        return WEFT_EINVAL;
    }
    return WEFT_OK;
}

int weft__mpi_reserve(void **arr, uint32_t *cap, uint32_t need, size_t elem) {
    if (need <= *cap) return 0;
    uint64_t ncap = *cap ? (uint64_t)*cap * 2 : 16;
    while (ncap < need) ncap *= 2;
    if (ncap > UINT32_MAX) ncap = UINT32_MAX;
    if (ncap < need || ncap * elem / elem != ncap) return WEFT_ENOMEM;
    void *p = weft_mem_realloc(*arr, (size_t)*cap * elem, (size_t)ncap * elem);
    if (!p) return WEFT_ENOMEM;
    *arr = p;
    *cap = (uint32_t)ncap;
    return 0;
}

/* core/alloc.c's weft__strdup again: libweft.so hides that one. */
char *weft__mpi_strdup(const char *s) {
    if (!s) return NULL;
    size_t n = strlen(s) + 1;
    char *d = weft_mem_alloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

void weft__mpi_free_str(char *s) {
    if (s) weft_mem_free(s, strlen(s) + 1);
}

static weft_mpi_flow *fail_create(weft_mpi_flow *f, weft_status *err, weft_status st) {
    if (f) {
        weft__mpi_free_str(f->name);
        weft_mem_free(f, sizeof *f);
    }
    if (err) *err = st;
    return NULL;
}

weft_mpi_flow *weft_mpi_flow_create(MPI_Comm comm, const char *name, weft_status *err) {
    const char *why = NULL;
    create_error[0] = '\0';
    if (weft__mpi_check_thread(&why) != WEFT_OK) {
        weft__mpi_set_create_error("weft_mpi_flow_create: %s", why);
        return fail_create(NULL, err, WEFT_EINVAL);
    }
    if (weft__mpi_check_comm(comm, &why) != WEFT_OK) {
        weft__mpi_set_create_error("weft_mpi_flow_create: %s", why);
        return fail_create(NULL, err, WEFT_EINVAL);
    }
    weft_mpi_flow *f = weft_mem_calloc(sizeof *f);
    if (!f || (name && !(f->name = weft__mpi_strdup(name)))) {
        weft__mpi_set_create_error("weft_mpi_flow_create: out of memory");
        return fail_create(f, err, WEFT_ENOMEM);
    }
    /* Collective: a rank that failed above leaves the others waiting here,
     * which is MPI's usual contract for a collective call. */
    if (MPI_Comm_dup(comm, &f->comm) != MPI_SUCCESS) {
        weft__mpi_set_create_error("weft_mpi_flow_create: MPI_Comm_dup failed");
        return fail_create(f, err, WEFT_ESYS);
    }
    MPI_Comm_set_errhandler(f->comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(f->comm, &f->rank);
    MPI_Comm_size(f->comm, &f->size);
    int *ub = NULL, flag = 0;
    MPI_Comm_get_attr(f->comm, MPI_TAG_UB, &ub, &flag);
    f->tag_ub = flag && ub ? *ub : 32767;
    f->fingerprint = 0xcbf29ce484222325ULL;
    weft__mpi_fp(f, (uint64_t)f->size);
    if (err) *err = WEFT_OK;
    return f;
}

weft_status weft_mpi_flow_destroy(weft_mpi_flow *f) {
    if (!f) return WEFT_OK;
    for (uint32_t i = 0; i < f->nhandles; i++) {
        weft__mpi_handle *h = &f->handles[i];
        if (h->own_buf) weft_mem_free(h->buf, (size_t)h->size);
        weft_mem_free(h->valid, (size_t)f->size * sizeof *h->valid);
        weft_mem_free(h->readers, (size_t)h->capreaders * sizeof *h->readers);
    }
    for (uint32_t i = 0; i < f->ntasks_local; i++) weft__mpi_free_str(f->tasks[i].name);
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Comm_free(&f->comm);
    weft_mem_free(f->handles, (size_t)f->caphandles * sizeof *f->handles);
    weft_mem_free(f->tasks, (size_t)f->captasks * sizeof *f->tasks);
    weft_mem_free(f->acc, (size_t)f->capacc * sizeof *f->acc);
    weft_mem_free(f->nodes, (size_t)f->capnodes * sizeof *f->nodes);
    weft_mem_free(f->edges, (size_t)f->capedges * sizeof *f->edges);
    weft__mpi_free_sealed(f);
    weft__mpi_free_str(f->name);
    weft_mem_free(f, sizeof *f);
    return WEFT_OK;
}

int weft_mpi_flow_rank(const weft_mpi_flow *f) { return f ? f->rank : -1; }
int weft_mpi_flow_size(const weft_mpi_flow *f) { return f ? f->size : 0; }
size_t weft_mpi_flow_num_tasks(const weft_mpi_flow *f) { return f ? (size_t)f->ntasks : 0; }
weft_status weft_mpi_flow_last_error(const weft_mpi_flow *f) { return f ? f->last_error : WEFT_EINVAL; }

const char *weft_mpi_flow_error_message(const weft_mpi_flow *f) { return f ? f->errmsg : create_error; }

weft_status weft_mpi_flow_stats(const weft_mpi_flow *f, weft_mpi_stats *out) {
    if (!f || !out) return WEFT_EINVAL;
    *out = f->stats;
    return WEFT_OK;
}

static const weft__mpi_handle *handle_of(const weft_mpi_flow *f, weft_mpi_data d) {
    if (!f || d.id_ == 0 || d.id_ > f->nhandles) return NULL;
    return &f->handles[d.id_ - 1];
}

void *weft_mpi_data_ptr(const weft_mpi_flow *f, weft_mpi_data d) {
    const weft__mpi_handle *h = handle_of(f, d);
    return h ? h->buf : NULL;
}

int weft_mpi_data_owner(const weft_mpi_flow *f, weft_mpi_data d) {
    const weft__mpi_handle *h = handle_of(f, d);
    return h ? h->owner : -1;
}

static weft_mpi_data register_fail(weft_mpi_flow *f, weft_status st) {
    if (f) f->last_error = st;
    return WEFT_MPI_DATA_NULL;
}

weft_mpi_data weft_mpi_data_register(weft_mpi_flow *f, void *buf, size_t size, int owner) {
    if (!f) return register_fail(f, WEFT_EINVAL);
    if (f->sealed) return register_fail(f, WEFT_EBUSY);
    if (size == 0 || size > INT_MAX || owner < 0 || owner >= f->size || (owner == f->rank && !buf))
        return register_fail(f, WEFT_EINVAL);
    if (f->nhandles == UINT32_MAX - 1 ||
        weft__mpi_reserve((void **)&f->handles, &f->caphandles, f->nhandles + 1, sizeof *f->handles))
        return register_fail(f, WEFT_ENOMEM);
    uint32_t *valid = weft_mem_calloc((size_t)f->size * sizeof *valid);
    if (!valid) return register_fail(f, WEFT_ENOMEM);
    valid[owner] = 1; /* version 0, on its owner */
    f->handles[f->nhandles] = (weft__mpi_handle){
        .buf = buf, .size = (int)size, .owner = owner, .holder = owner, .valid = valid, .last_writer = -1,
    };
    weft__mpi_fp(f, 0x4a11 ^ ((uint64_t)size << 20) ^ (uint64_t)owner);
    f->last_error = WEFT_OK;
    return (weft_mpi_data){ ++f->nhandles };
}
