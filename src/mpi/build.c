/* Distributed flows: inserting tasks (where the data goes, which nodes this
 * rank keeps and how they are ordered) and sealing the graph before a run. */
#include <string.h>

#include "mpi/dist.h"

void weft__mpi_fp(weft_mpi_flow *f, uint64_t v) {
    /* FNV-1a over the 8 bytes of v: every rank mixes the same values in the
     * same order, so equal sequences of calls give equal fingerprints. */
    for (int i = 0; i < 8; i++) {
        f->fingerprint ^= (v >> (8 * i)) & 0xff;
        f->fingerprint *= 0x100000001b3ULL;
    }
}

/* ---- this rank's nodes and their order --------------------------------------- */

/* The callers reserved room (reserve_insert, seal): nothing here fails. */
static uint32_t new_node(weft_mpi_flow *f, int kind, uint32_t ref, int peer, int tag) {
    f->nodes[f->nnodes] = (weft__mpi_node){ .kind = (uint8_t)kind, .ref = ref, .peer = peer, .tag = tag, .flow = f };
    if (kind != WEFT__MPI_COMPUTE) f->nmpi++;
    return f->nnodes++;
}

static void add_edge(weft_mpi_flow *f, int32_t from, uint32_t to) {
    if (from < 0 || (uint32_t)from == to) return;
    f->edges[f->nedges++] = (weft__mpi_edge){ (uint32_t)from, to };
}

/* Node n reads h's buffer: after its last local writer. */
static void local_read(weft_mpi_flow *f, weft__mpi_handle *h, uint32_t n) {
    add_edge(f, h->last_writer, n);
    h->readers[h->nreaders++] = (int32_t)n;
    h->used = true;
}

/* Node n overwrites h's buffer: after its last writer and every read since. */
static void local_write(weft_mpi_flow *f, weft__mpi_handle *h, uint32_t n) {
    add_edge(f, h->last_writer, n);
    for (uint32_t i = 0; i < h->nreaders; i++) add_edge(f, h->readers[i], n);
    h->nreaders = 0;
    h->last_writer = (int32_t)n;
    h->used = true;
}

/* The latest value of handle hi goes from rank src to rank dst.  Every rank
 * numbers the transfer alike (the tag); only src and dst keep a node. */
static void transfer(weft_mpi_flow *f, uint32_t hi, int src, int dst) {
    weft__mpi_handle *h = &f->handles[hi];
    int tag = (int)(f->nxfer++ % (uint64_t)f->tag_ub); /* tag_ub itself is never sent (run.c) */
    if (f->rank == src) local_read(f, h, new_node(f, WEFT__MPI_SEND, hi, dst, tag));
    if (f->rank == dst) local_write(f, h, new_node(f, WEFT__MPI_RECV, hi, src, tag));
    h->valid[dst] = h->version + 1;
}

/* ---- inserting --------------------------------------------------------------- */

static int exec_rank(const weft_mpi_flow *f, const weft_mpi_task_desc *d) {
    if (d->rank_set) return d->rank;
    for (size_t i = 0; i < d->naccess; i++)
        if (d->access[i].mode & WEFT_MPI_W) return f->handles[d->access[i].data.id_ - 1].owner;
    return d->naccess ? f->handles[d->access[0].data.id_ - 1].owner : 0;
}

static bool valid_desc(const weft_mpi_flow *f, const weft_mpi_task_desc *d) {
    if (!d->fn || d->naccess > WEFT__MPI_MAX_ACCESS || (d->naccess && !d->access)) return false;
    if (d->rank_set && (d->rank < 0 || d->rank >= f->size)) return false;
    for (size_t i = 0; i < d->naccess; i++) {
        uint32_t id = d->access[i].data.id_;
        int mode = (int)d->access[i].mode;
        if (id == 0 || id > f->nhandles || mode < WEFT_MPI_R || mode > WEFT_MPI_RW) return false;
    }
    return true;
}

/* Room for everything one insertion may add, so that it adds all or nothing:
 * per access at most one transfer node, and a node's edges from h's last
 * writer and readers; each access may add two readers to its handle. */
static int reserve_insert(weft_mpi_flow *f, const weft_mpi_task_desc *d, bool local) {
    uint64_t edges = f->nedges;
    for (size_t i = 0; i < d->naccess; i++) {
        weft__mpi_handle *h = &f->handles[d->access[i].data.id_ - 1];
        uint32_t extra = 2 * (uint32_t)(d->naccess);
        if (weft__mpi_reserve((void **)&h->readers, &h->capreaders, h->nreaders + extra, sizeof *h->readers))
            return WEFT_ENOMEM;
        edges += 2 * ((uint64_t)h->nreaders + extra + 1);
    }
    if (edges > UINT32_MAX / 2 || f->nnodes > UINT32_MAX / 2) return WEFT_ENOMEM;
    if (weft__mpi_reserve((void **)&f->nodes, &f->capnodes, f->nnodes + 1 + (uint32_t)d->naccess, sizeof *f->nodes) ||
        weft__mpi_reserve((void **)&f->edges, &f->capedges, (uint32_t)edges, sizeof *f->edges))
        return WEFT_ENOMEM;
    if (!local) return 0;
    if (weft__mpi_reserve((void **)&f->tasks, &f->captasks, f->ntasks_local + 1, sizeof *f->tasks) ||
        weft__mpi_reserve((void **)&f->acc, &f->capacc, f->nacc + (uint32_t)d->naccess, sizeof *f->acc))
        return WEFT_ENOMEM;
    return 0;
}

/* This rank runs the task: a compute node after what its accesses need. */
static void add_local_task(weft_mpi_flow *f, const weft_mpi_task_desc *d, char *name) {
    uint32_t ti = f->ntasks_local++;
    f->tasks[ti] = (weft__mpi_task){ .fn = d->fn, .arg = d->arg, .name = name, .first_acc = f->nacc,
                                     .nacc = (uint32_t)d->naccess, .global_index = f->ntasks };
    uint32_t n = new_node(f, WEFT__MPI_COMPUTE, ti, -1, 0);
    for (size_t i = 0; i < d->naccess; i++) {
        uint32_t hi = d->access[i].data.id_ - 1;
        f->acc[f->nacc++] = hi;
        if (d->access[i].mode & WEFT_MPI_R) local_read(f, &f->handles[hi], n);
    }
    for (size_t i = 0; i < d->naccess; i++)
        if (d->access[i].mode & WEFT_MPI_W) local_write(f, &f->handles[d->access[i].data.id_ - 1], n);
}

/* Whether access i's handle was listed earlier with a mode that has `mode`. */
static bool listed_before(const weft_mpi_task_desc *d, size_t i, int mode) {
    for (size_t j = 0; j < i; j++)
        if (d->access[j].data.id_ == d->access[i].data.id_ && (d->access[j].mode & mode)) return true;
    return false;
}

static weft_status insert_status(weft_mpi_flow *f, weft_status st) {
    f->last_error = st;
    return st;
}

weft_status weft_mpi_insert(weft_mpi_flow *f, const weft_mpi_task_desc *d) {
    if (!f) return WEFT_EINVAL;
    if (f->sealed) return insert_status(f, WEFT_EBUSY);
    if (!d || !valid_desc(f, d)) return insert_status(f, WEFT_EINVAL);
    int r = exec_rank(f, d);
    bool local = r == f->rank;
    char *name = NULL;
    if (local && d->name && !(name = weft__mpi_strdup(d->name))) return insert_status(f, WEFT_ENOMEM);
    if (reserve_insert(f, d, local)) {
        weft__mpi_free_str(name);
        return insert_status(f, WEFT_ENOMEM);
    }
    weft__mpi_fp(f, 0x7a5c ^ ((uint64_t)r << 16) ^ ((uint64_t)d->naccess << 48));
    for (size_t i = 0; i < d->naccess; i++) {
        uint32_t hi = d->access[i].data.id_ - 1;
        weft__mpi_handle *h = &f->handles[hi];
        weft__mpi_fp(f, ((uint64_t)hi << 2) | (uint64_t)d->access[i].mode);
        if ((d->access[i].mode & WEFT_MPI_R) && h->valid[r] != h->version + 1) transfer(f, hi, h->holder, r);
    }
    if (local) add_local_task(f, d, name);
    for (size_t i = 0; i < d->naccess; i++) {
        if (!(d->access[i].mode & WEFT_MPI_W) || listed_before(d, i, WEFT_MPI_W)) continue;
        weft__mpi_handle *h = &f->handles[d->access[i].data.id_ - 1];
        h->version++;
        h->holder = r;
        memset(h->valid, 0, (size_t)f->size * sizeof *h->valid);
        h->valid[r] = h->version + 1;
    }
    f->ntasks++;
    return insert_status(f, WEFT_OK);
}

/* ---- sealing ----------------------------------------------------------------- */

typedef struct seal_mem {
    weft__mpi_node **succ;
    void **bufs;
    MPI_Request *reqs;
    weft__mpi_node **req_node;
    int *req_done;
    uint32_t nsucc, nbufs, nmpi; /* the lengths, to free them */
} seal_mem;

static void free_seal_mem(const seal_mem *m) {
    weft_mem_free(m->succ, (size_t)m->nsucc * sizeof *m->succ);
    weft_mem_free(m->bufs, (size_t)m->nbufs * sizeof *m->bufs);
    weft_mem_free(m->reqs, (size_t)m->nmpi * sizeof *m->reqs);
    weft_mem_free(m->req_node, (size_t)m->nmpi * sizeof *m->req_node);
    weft_mem_free(m->req_done, (size_t)m->nmpi * sizeof *m->req_done);
}

void weft__mpi_free_sealed(weft_mpi_flow *f) {
    free_seal_mem(&(seal_mem){ .succ = f->succ, .bufs = f->bufs, .reqs = f->reqs, .req_node = f->req_node,
                               .req_done = f->req_done, .nsucc = f->capsucc, .nbufs = f->nacc, .nmpi = f->capmpi });
}

/* Everything sealing allocates, before it changes anything. */
static int seal_alloc(weft_mpi_flow *f, seal_mem *m) {
    uint64_t edges = f->nedges, nodes = f->nnodes, nmpi = f->nmpi;
    for (uint32_t i = 0; i < f->nhandles; i++) {
        weft__mpi_handle *h = &f->handles[i];
        if (h->holder == h->owner || (f->rank != h->holder && f->rank != h->owner)) continue;
        edges += h->nreaders + 1;
        nodes++;
        nmpi++;
        if (weft__mpi_reserve((void **)&h->readers, &h->capreaders, h->nreaders + 1, sizeof *h->readers))
            return WEFT_ENOMEM;
    }
    if (edges > UINT32_MAX || nodes > UINT32_MAX || nmpi > INT32_MAX) return WEFT_ENOMEM;
    if (weft__mpi_reserve((void **)&f->nodes, &f->capnodes, (uint32_t)nodes, sizeof *f->nodes) ||
        weft__mpi_reserve((void **)&f->edges, &f->capedges, (uint32_t)edges, sizeof *f->edges))
        return WEFT_ENOMEM;
    /* Zero lengths too get a block (weft_mem_alloc takes 0 as 1): NULL means
     * failure only. */
    *m = (seal_mem){ .nsucc = (uint32_t)edges, .nbufs = f->nacc, .nmpi = (uint32_t)nmpi };
    m->succ = weft_mem_alloc(m->nsucc * sizeof *m->succ);
    m->bufs = weft_mem_alloc(m->nbufs * sizeof *m->bufs);
    m->reqs = weft_mem_alloc(m->nmpi * sizeof *m->reqs);
    m->req_node = weft_mem_alloc(m->nmpi * sizeof *m->req_node);
    m->req_done = weft_mem_alloc(m->nmpi * sizeof *m->req_done);
    return m->succ && m->bufs && m->reqs && m->req_node && m->req_done ? 0 : WEFT_ENOMEM;
}

/* Buffers for copies on ranks that registered none.  On failure those
 * allocated are freed again. */
static int alloc_copies(weft_mpi_flow *f) {
    for (uint32_t i = 0; i < f->nhandles; i++) {
        weft__mpi_handle *h = &f->handles[i];
        if (!h->used || h->buf) continue; /* the owner always registered one */
        if (!(h->buf = weft_mem_alloc((size_t)h->size))) {
            for (uint32_t j = 0; j < i; j++)
                if (f->handles[j].own_buf) {
                    weft_mem_free(f->handles[j].buf, (size_t)f->handles[j].size);
                    f->handles[j].buf = NULL;
                    f->handles[j].own_buf = false;
                }
            return WEFT_ENOMEM;
        }
        h->own_buf = true;
    }
    return 0;
}

/* Successor lists (one array, a slice per node) and predecessor counts. */
static void build_succ(weft_mpi_flow *f) {
    for (uint32_t i = 0; i < f->nnodes; i++) f->nodes[i].nsucc = f->nodes[i].npred = 0;
    for (uint32_t e = 0; e < f->nedges; e++) {
        f->nodes[f->edges[e].from].nsucc++;
        f->nodes[f->edges[e].to].npred++;
    }
    uint32_t at = 0;
    for (uint32_t i = 0; i < f->nnodes; i++) {
        f->nodes[i].succ_first = at;
        at += f->nodes[i].nsucc;
        f->nodes[i].nsucc = 0;
    }
    for (uint32_t e = 0; e < f->nedges; e++) {
        weft__mpi_node *from = &f->nodes[f->edges[e].from];
        f->succ[from->succ_first + from->nsucc++] = &f->nodes[f->edges[e].to];
    }
}

int weft__mpi_seal(weft_mpi_flow *f) {
    seal_mem m = { 0 };
    if (seal_alloc(f, &m) || alloc_copies(f)) {
        free_seal_mem(&m);
        return WEFT_ENOMEM;
    }
    /* A value last written away from its owner goes home at the end of the
     * run, so that each run starts (and ends) with the owners' buffers. */
    for (uint32_t i = 0; i < f->nhandles; i++) {
        weft__mpi_handle *h = &f->handles[i];
        if (h->holder != h->owner) transfer(f, i, h->holder, h->owner);
    }
    f->succ = m.succ;
    f->bufs = m.bufs;
    f->reqs = m.reqs;
    f->req_node = m.req_node;
    f->req_done = m.req_done;
    f->capsucc = m.nsucc;
    f->capmpi = m.nmpi;
    build_succ(f);
    for (uint32_t i = 0; i < f->nacc; i++) f->bufs[i] = f->handles[f->acc[i]].buf;
    for (uint32_t i = 0; i < f->nhandles; i++) {
        weft_mem_free(f->handles[i].readers, (size_t)f->handles[i].capreaders * sizeof *f->handles[i].readers);
        f->handles[i].readers = NULL;
        f->handles[i].nreaders = f->handles[i].capreaders = 0;
    }
    weft_mem_free(f->edges, (size_t)f->capedges * sizeof *f->edges);
    f->edges = NULL;
    f->nedges = f->capedges = 0;
    f->sealed = true;
    return 0;
}
