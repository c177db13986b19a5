/* Distributed flows over MPI: what flow.c, build.c and run.c share.  Internal.
 *
 * Every rank replays the same sequence of registrations and insertions.  For
 * each handle all ranks track, identically, which version is the latest, which
 * rank holds it and which ranks hold a valid copy; a task that reads a handle
 * on a rank without a valid copy adds a transfer (a send node on the holder, a
 * receive node on the reader, the same tag on both).  Each rank keeps only its
 * own nodes: its tasks, its sends and its receives, ordered by the local
 * hazards on its one buffer per handle (read after write, write after read,
 * write after write), exactly as a shared-memory task graph would be.  The
 * messages order the ranks against each other.  docs/guide-mpi.md ("How it
 * works") has the whole argument. */
#ifndef WEFT_MPI_DIST_H
#define WEFT_MPI_DIST_H

#include <stdatomic.h>
#include <stdint.h>

#include "weft/mpi.h"

enum { WEFT__MPI_COMPUTE = 0, WEFT__MPI_SEND = 1, WEFT__MPI_RECV = 2 };
enum { WEFT__MPI_MAX_ACCESS = 64 };

typedef struct weft__mpi_handle {
    void *buf;    /* this rank's buffer: the user's, or allocated at seal */
    bool own_buf; /* buf was allocated by weft */
    bool used;    /* some local node uses it (a buffer is needed) */
    int size;
    int owner;
    /* Global state, identical on every rank while building. */
    int holder;       /* rank that holds the latest version */
    uint32_t version; /* of the latest value */
    uint32_t *valid;  /* [nranks]: version + 1 held by that rank, 0 for none */
    /* This rank's hazards on buf, while building. */
    int32_t last_writer; /* local node, or -1 */
    int32_t *readers;    /* local nodes that read since then */
    uint32_t nreaders, capreaders;
} weft__mpi_handle;

typedef struct weft__mpi_task {
    weft_mpi_task_fn fn;
    void *arg;
    char *name;
    uint32_t first_acc, nacc; /* into flow.acc / flow.bufs */
    uint64_t global_index;    /* position in the sequence all ranks share */
} weft__mpi_task;

typedef struct weft__mpi_node {
    _Atomic int32_t pending; /* predecessors not yet done in this run */
    int32_t npred;
    uint8_t kind; /* WEFT__MPI_* */
    uint32_t ref; /* task index (compute) or handle index (send, receive) */
    int peer, tag;
    uint32_t succ_first, nsucc; /* into flow.succ, after seal */
    struct weft__mpi_node *qnext; /* the progress queue's link */
    weft_mpi_flow *flow;
} weft__mpi_node;

typedef struct weft__mpi_edge {
    uint32_t from, to;
} weft__mpi_edge;

/* Grows *arr (element size `elem`, capacity *cap) to hold `need` elements.
 * 0 or WEFT_ENOMEM (nothing changed).  Free the array with weft_mem_free and
 * *cap * elem bytes: all of weft::mpi's memory goes through weft's allocator
 * hook, which is told each block's size. */
int weft__mpi_reserve(void **arr, uint32_t *cap, uint32_t need, size_t elem);
/* A copy of s from weft's allocator (NULL for NULL), freed with
 * weft__mpi_free_str. */
char *weft__mpi_strdup(const char *s);
void weft__mpi_free_str(char *s);

struct weft_mpi_flow {
    MPI_Comm comm; /* a duplicate of the user's: weft's tags are its own */
    int rank, size;
    int tag_ub;
    char *name;
    weft_status last_error;
    bool sealed;
    uint64_t fingerprint; /* of the sequence of calls, compared at each run */
    uint64_t ntasks;      /* tasks inserted, all ranks' */
    uint64_t nxfer;       /* transfers derived, all ranks' (the next tag) */

    weft__mpi_handle *handles;
    uint32_t nhandles, caphandles;
    weft__mpi_task *tasks; /* this rank's */
    uint32_t ntasks_local, captasks;
    uint32_t *acc; /* handle index of each access of this rank's tasks */
    uint32_t nacc, capacc;
    void **bufs;   /* after seal: acc resolved to buffers [nacc] */
    weft__mpi_node *nodes;
    uint32_t nnodes, capnodes;
    weft__mpi_edge *edges; /* while building */
    uint32_t nedges, capedges;
    weft__mpi_node **succ; /* after seal: successors, by node */
    uint32_t nmpi;         /* send and receive nodes */
    /* After seal, the lengths succ and reqs, req_node, req_done were
     * allocated with (the bounds seal computed), to free them. */
    uint32_t capsucc, capmpi;

    /* One run's state. */
    weft_executor *ex;
    _Atomic(weft__mpi_node *) queue; /* nodes for the progress thread (MPSC stack) */
    _Atomic uint32_t done;           /* nodes finished */
    /* What the progress thread sleeps on (run.c, "Sleeping"): bit 0 is set
     * when the last node finished; the rest counts wake-ups. */
    _Atomic uint32_t signal;
    _Atomic int sleeping; /* the progress thread is in (or about to enter) its wait */
    /* Idle sleeps (no request in flight) that ran their whole bound: each is a
     * wake-up that never came, or a worker stalled that long.  The progress
     * thread's own; read by tests/mpi_progress.c, which a lost end-of-run
     * wake-up fails deterministically (one per run) where a time would not. */
    uint64_t idle_timeouts;
    _Atomic int failed;              /* a local task failed */
    int fail_code;
    uint32_t fail_task;
    _Atomic uint64_t tasks_run;
    MPI_Request *reqs; /* requests in flight, with their nodes */
    weft__mpi_node **req_node;
    int *req_done; /* MPI_Testsome's output indices */
    int nreq;
    weft_mpi_stats stats;
    char errmsg[256];
};

/* build.c: fixes the graph before its first run (write-backs, buffers,
 * successor lists).  0 or WEFT_ENOMEM (the flow stays unsealed and usable). */
int weft__mpi_seal(weft_mpi_flow *f);
/* Frees what sealing allocated (nothing before the seal). */
void weft__mpi_free_sealed(weft_mpi_flow *f);
/* Mixes v into the flow's fingerprint. */
void weft__mpi_fp(weft_mpi_flow *f, uint64_t v);

/* run.c: waiting like the progress thread, shared with pool.c.  After the
 * last event a waiter polls, yielding the CPU, for WEFT__MPI_POLL_S, then naps
 * for weft__mpi_nap_ns(naps) with naps counting up (run.c, "Sleeping"). */
#define WEFT__MPI_POLL_S 5e-3
uint64_t weft__mpi_nap_ns(unsigned naps);
/* Completes r (a collective, or any request) by polling and napping on
 * `word` (any word nobody else waits on).  0 or WEFT_ESYS. */
int weft__mpi_wait(MPI_Request *r, _Atomic uint32_t *word);
/* MPI_Iallreduce with MPI_MIN over comm, waited by weft__mpi_wait.  0 or
 * WEFT_ESYS. */
int weft__mpi_allreduce_min(MPI_Comm comm, const void *in, void *out, int n, MPI_Datatype type,
                            _Atomic uint32_t *word);
/* The end of a run, collective over comm: every rank learns the failure
 * message of the lowest rank that has one (`fail`: this rank's, or NULL) and
 * whether MPI failed anywhere (local_err).  Returns WEFT_ETASK with that
 * message in errmsg (cap bytes), WEFT_ESYS (errmsg untouched), or WEFT_OK. */
int weft__mpi_agree_outcome(MPI_Comm comm, int rank, const char *fail, int local_err, char *errmsg,
                            size_t cap, _Atomic uint32_t *word);

/* run.c: checks that the caller of `fn` (weft_mpi_run, weft_mpi_pool_run) may
 * drive MPI for ex: WEFT_OK, or WEFT_EINVAL / WEFT_EDEADLK with a message. */
int weft__mpi_check_caller(weft_executor *ex, const char *fn, char *errmsg, size_t cap);

/* flow.c: formats the calling thread's creation error message. */
void weft__mpi_set_create_error(const char *fmt, ...);
/* Checks that MPI can be used from this thread by weft: 0 or WEFT_EINVAL with
 * a message in *why (a static string). */
int weft__mpi_check_thread(const char **why);
/* Checks that weft can work over comm (not MPI_COMM_NULL, not an
 * intercommunicator): 0 or WEFT_EINVAL with a message in *why (static). */
int weft__mpi_check_comm(MPI_Comm comm, const char **why);

#endif
