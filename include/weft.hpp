/* weft — task-parallel runtime for C11.  SPDX-License-Identifier: MIT
 *
 * weft.hpp: a header-only C++17 layer over the C API, for programs written the
 * way Taskflow's are:
 *
 *     weft::executor executor;
 *     weft::taskflow taskflow("simple");
 *     auto A = taskflow.emplace([&] { std::puts("A"); }).name("A");
 *     auto B = taskflow.emplace([&] { std::puts("B"); }).name("B");
 *     A.precede(B);
 *     executor.run(taskflow).wait();
 *
 * What it adds to the C API:
 *  - lambdas with captures as tasks, stored in memory the taskflow owns (one
 *    bump allocation in a per-taskflow arena and a static trampoline per lambda
 *    type: no std::function, no malloc per task);
 *  - exceptions: a throw in a task, a condition, a subflow, a pipeline stage,
 *    an async task, a fork-join child or a parallel algorithm's body is caught
 *    (it never crosses the C frames) and rethrown from future::get() / wait(),
 *    task_group::wait(), spawned::sync() or the algorithm call; the task
 *    returns weft::task_threw to weft, so the run fails and skips what had not
 *    started;
 *  - weft::error, thrown for every failing weft_status, carrying the status and
 *    weft_last_error_message()'s text;
 *  - RAII for every handle; handles are move-only where copying makes no sense.
 *
 * Thread-safety follows the C API: a taskflow is built by one thread at a time;
 * executors, futures (one thread per future object) and the algorithms may be
 * used from any thread.  docs/guide-cpp.md is the guide, with a table from
 * Taskflow's names to these.
 */
#ifndef WEFT_HPP
#define WEFT_HPP

#if !defined(__cplusplus) || __cplusplus < 201703L
#  error "weft.hpp needs C++17 or later (the C API is weft.h)"
#endif

#include "weft.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace weft {

class executor;
class taskflow;
class subflow;
class task_group;
class semaphore;
template <class T> class future;

/* What a task returns to weft when it threw: the run fails with WEFT_ETASK and
 * this task_code (negative, so a condition task fails too). */
constexpr int task_threw = -0x5743;

/* ---- errors ------------------------------------------------------------------ */

/* Thrown for a failing weft_status.  what() reads "<call>: <strerror>" and,
 * when weft had more to say, ": <detail>". */
class error : public std::runtime_error {
public:
    error(weft_status st, const std::string &call, const std::string &detail)
        : std::runtime_error(compose(st, call, detail)), status_(st), detail_(detail) {}
    /* The C status (negative WEFT_E* code). */
    weft_status status() const noexcept { return status_; }
    /* weft_last_error_message() or the run's failure detail at the time of the throw. */
    const std::string &detail() const noexcept { return detail_; }

private:
    static std::string compose(weft_status st, const std::string &call, const std::string &detail) {
        std::string s = call + ": " + weft_strerror(st) + " (" + weft_errname(st) + ")";
        if (!detail.empty()) s += ": " + detail;
        return s;
    }
    weft_status status_;
    std::string detail_;
};

namespace detail {

/* Throws weft::error for a failing status, with the calling thread's message. */
inline void check(weft_status st, const char *call) {
    if (st != WEFT_OK) throw error(st, call, weft_last_error_message());
}

/* ~taskflow from a task of one of the taskflow's own runs: see class taskflow. */
[[noreturn]] inline void own_run_destroyed(weft_taskflow *tf) {
    const char *name = weft_taskflow_name(tf);
    std::fprintf(stderr,
                 "weft::taskflow '%s' destroyed by a task of its own run: the destructor would wait for "
                 "that task; destroy the taskflow after the run (its future) instead\n",
                 name);
    std::terminate();
}

/* The handle of an object that may have been moved from: weft::error
 * (WEFT_EINVAL) for a moved-from one (never a NULL handle to the C API, which
 * would crash, or pick the default executor). */
template <class H>
H *live(H *h, const char *call) {
    if (!h) throw error(WEFT_EINVAL, call, "the object was moved from");
    return h;
}

/* ---- the running task's context ----------------------------------------------
 * task_group and spawn find the running task the way Taskflow's
 * executor.task_group() does, from the thread: weft_current_ctx() is the
 * worker's innermost task, which weft keeps up to date around every task and
 * wait, so a task costs nothing for it. */
inline weft_ctx *current_ctx(const char *call) {
    weft_ctx *ctx = weft_current_ctx();
    if (!ctx) throw error(WEFT_EINVAL, call, "only inside a task of a weft executor");
    return ctx;
}

/* A run as exceptions are keyed by: its future and the future's id.  The
 * address alone is not enough: runs of a taskflow submitted through the C API
 * (weft_run on native()) are never harvested here, and a later run's future
 * may reuse a finished one's address; it then took the old run's exception
 * (and its own was dropped as a second one).  Ids are unique per executor. */
struct run_key {
    const weft_future *f = nullptr;
    std::uint64_t id = 0;
    friend bool operator==(const run_key &a, const run_key &b) noexcept { return a.f == b.f && a.id == b.id; }
};
/* run's key (read while the run is alive: a task of it, or its callback). */
inline run_key key_of(const weft_future *run) noexcept { return run_key{run, run ? weft_future_id(run) : 0}; }

/* Ids are unique per executor only, so a key is not unique either: a run
 * through the C API on executor A (its exception kept, never harvested), its
 * future freed, and the next executor's first run, whose future took that
 * memory, had the same address and the same id 1; failing, it rethrew the
 * stale exception.  So each kept exception is stamped from this process-wide
 * clock, and a run (executor::run*) reads the clock before it is submitted
 * ("born"): an entry of its key stamped no later is an earlier run's, and
 * is dropped, not taken.  (Only a stale run that threw while the new one was
 * being submitted, on another thread, and whose future was freed in that
 * same moment, could still pass for the new run.) */
inline std::atomic<std::uint64_t> capture_clock{0};
inline std::uint64_t capture_stamp() noexcept { return capture_clock.fetch_add(1, std::memory_order_seq_cst) + 1; }
inline std::uint64_t capture_now() noexcept { return capture_clock.load(std::memory_order_seq_cst); }

/* ---- exception sinks -----------------------------------------------------------
 * Where the tasks of one taskflow (or pipeline) put the first exception they
 * throw.  The run's completion callback takes it (with those of the module
 * bodies and pipelines the taskflow runs, its children).  Capture is first-wins
 * through a flag; the exception itself is read only after the run has ended,
 * which the run's completion orders after every task. */
/* Exceptions of packed tasks (see packable_v below), which have no holder and so
 * no sink: kept here with their task's node until the completion callback of the
 * failed run walks its graph for them.  Only a failed run looks (a node address
 * may be reused by a later graph), and a taskflow purges its own entries before
 * it is cleared or destroyed. */
class orphanage {
public:
    static orphanage &get() {
        static orphanage *o = new orphanage; /* never destroyed: tasks may throw during exit */
        return *o;
    }
    /* Records the current exception for the task running in ctx.  by_run: the
     * task may be in any graph of its run (task::work's callables, which know
     * no sink: a subflow's task too), so a failed run takes it by its run
     * alone, not by walking its graph's tasks. */
    void add(weft_ctx *ctx, bool by_run = false) noexcept {
        try {
            std::lock_guard<std::mutex> lock(mu_);
            list_.push_back(entry{weft_ctx_task(ctx).node_, key_of(weft_ctx_run(ctx)), std::current_exception(), by_run,
                                  capture_stamp()});
            count_.store(list_.size(), std::memory_order_release);
        } catch (...) {
            /* No memory to keep it: the run still fails, and get() throws weft::error. */
        }
    }
    bool empty() const noexcept { return count_.load(std::memory_order_acquire) == 0; }
    /* The earliest entry of `run` stamped after `born` (see take), left in
     * place (subflow::join rethrows it, and the run's end still takes it). */
    std::exception_ptr peek(const weft_future *run, std::uint64_t born = 0) noexcept {
        if (!run || empty()) return nullptr;
        run_key k = key_of(run);
        std::lock_guard<std::mutex> lock(mu_);
        for (const entry &e : list_)
            if (e.run == k && e.stamp > born) return e.ex;
        return nullptr;
    }
    /* Removes the entries of g's tasks of `run` (NULL: of every run) and
     * returns the earliest stamped after `born` (capture_now() before the
     * run was submitted: older ones of its key are an earlier run's)
     * (O(tasks of g)). */
    std::exception_ptr take(weft_taskflow *g, const weft_future *run = nullptr, std::uint64_t born = 0) noexcept {
        std::lock_guard<std::mutex> lock(mu_);
        if (list_.empty() || !g) return nullptr;
        struct walk {
            std::vector<entry> *list;
            std::size_t first;
            std::vector<bool> hit;
            run_key run;
            std::uint64_t born;
        } w{&list_, list_.size(), std::vector<bool>(list_.size(), false), key_of(run), born};
        (void)weft_taskflow_for_each_task(g, [](weft_task t, void *arg) -> bool {
            auto *ww = static_cast<walk *>(arg);
            for (std::size_t i = 0; i < ww->list->size(); ++i)
                if ((*ww->list)[i].node == t.node_ && (!ww->run.f || (*ww->list)[i].run == ww->run)) {
                    ww->hit[i] = true;
                    if ((*ww->list)[i].stamp > ww->born) ww->first = std::min(ww->first, i);
                }
            return true;
        }, &w);
        if (w.run.f)
            for (std::size_t i = 0; i < list_.size(); ++i)
                if (list_[i].by_run && list_[i].run == w.run) {
                    w.hit[i] = true;
                    if (list_[i].stamp > born) w.first = std::min(w.first, i);
                }
        std::exception_ptr e = w.first < list_.size() ? list_[w.first].ex : nullptr;
        std::size_t keep = 0;
        for (std::size_t i = 0; i < list_.size(); ++i)
            if (!w.hit[i]) list_[keep++] = std::move(list_[i]);
        list_.resize(keep);
        count_.store(keep, std::memory_order_release);
        return e;
    }
    /* The nodes of g's tasks, sorted: what drop() takes, read before g is
     * cleared (a cleared graph has no tasks left to walk). */
    static std::vector<const void *> nodes_of(weft_taskflow *g) {
        std::vector<const void *> nodes;
        (void)weft_taskflow_for_each_task(g, [](weft_task t, void *arg) -> bool {
            static_cast<std::vector<const void *> *>(arg)->push_back(t.node_);
            return true;
        }, &nodes);
        std::sort(nodes.begin(), nodes.end());
        return nodes;
    }
    /* Removes the entries of those nodes (sorted), of every run. */
    void drop(const std::vector<const void *> &nodes) noexcept {
        std::lock_guard<std::mutex> lock(mu_);
        std::size_t keep = 0;
        for (std::size_t i = 0; i < list_.size(); ++i)
            if (!std::binary_search(nodes.begin(), nodes.end(), list_[i].node)) list_[keep++] = std::move(list_[i]);
        list_.resize(keep);
        count_.store(keep, std::memory_order_release);
    }

private:
    struct entry {
        const void *node;
        run_key run; /* of weft_ctx_run of the task that threw */
        std::exception_ptr ex;
        bool by_run;
        std::uint64_t stamp; /* capture_stamp() when kept */
    };
    std::mutex mu_;
    std::vector<entry> list_;
    std::atomic<std::size_t> count_{0};
};

struct sink {
    /* The first exception of each run of the graph that threw (weft_ctx_run: a
     * taskflow's runs queue, but the next may start before the last one's
     * completion callback has taken its exception).  Guarded by mu. */
    struct caught {
        run_key run;
        std::exception_ptr ex;
        std::uint64_t stamp; /* capture_stamp() when kept */
    };
    std::vector<caught> caught_;
    std::atomic<std::size_t> ncaught{0};
    weft_taskflow *graph = nullptr; /* the taskflow whose packed tasks' orphans are ours */
    std::mutex mu; /* guards the lists: subflows may add to them from several workers */
    /* Module bodies and pipelines of the graph itself (composed_of on a taskflow):
     * kept until the taskflow is cleared. */
    std::vector<sink *> children;
    /* Those a subflow composed while it ran, with that run: walked and dropped
     * by the take at the end of that run only, as the bodies need only
     * outlive it.  (Every take dropped them all: a run of another taskflow
     * that reached this one as a module body, ending while this taskflow's
     * own run went on, took the pipeline its subflow had composed out of
     * reach, and that run's get() threw weft::error WEFT_ETASK instead of
     * the stage's exception.)  Those of a run that is never taken (through
     * the C API) go with the first take of a run submitted after them. */
    struct held {
        sink *s;
        run_key run;
        std::uint64_t stamp; /* capture_stamp() when added */
    };
    std::vector<held> transient;

    /* Keeps the current exception as run's first (NULL: no run known). */
    void capture(const weft_future *run = nullptr) noexcept {
        try {
            run_key k = key_of(run);
            std::lock_guard<std::mutex> lock(mu);
            /* Every one is kept, in order: the first of its key may be a
             * stale one of an earlier run (see capture_clock), which the run's
             * end skips for the first stamped after its submission, and drops
             * with the rest.  (A run fails at its first exception, so it adds
             * only those of the tasks already running then.) */
            /* One of an earlier run whose future had this address (a run
             * through the C API, never harvested): no run will take it now. */
            caught_.erase(std::remove_if(caught_.begin(), caught_.end(),
                                         [&](const caught &c) { return run && c.run.f == run && !(c.run == k); }),
                          caught_.end());
            caught_.push_back(caught{k, std::current_exception(), capture_stamp()});
            ncaught.store(caught_.size(), std::memory_order_release);
        } catch (...) {
            /* No memory to keep it: the run still fails, and get() throws weft::error. */
        }
    }
    /* The first exception of `run` kept here or in a sink reachable from here
     * (module bodies and pipelines), else an orphan of that run, left in place
     * for the run's end to take: what subflow::join rethrows.  Only those
     * stamped after `born` (the run's, as the run's end reads them: an older
     * entry of its key is an earlier run's, see capture_clock). */
    std::exception_ptr peek(const weft_future *run, std::uint64_t born = 0) noexcept {
        if (!run) return nullptr;
        try {
            run_key k = key_of(run);
            std::vector<sink *> seen{this}, todo{this};
            while (!todo.empty()) {
                sink *s = todo.back();
                todo.pop_back();
                {
                    std::lock_guard<std::mutex> lock(s->mu);
                    for (const caught &c : s->caught_)
                        if (c.run == k && c.stamp > born) return c.ex;
                }
                std::vector<sink *> next = s->next_for(k);
                for (sink *n : next)
                    if (std::find(seen.begin(), seen.end(), n) == seen.end()) {
                        seen.push_back(n);
                        todo.push_back(n);
                    }
            }
        } catch (...) {
            /* No memory for the walk: join returns, and the run's end still reports the failure. */
        }
        return orphanage::get().peek(run, born);
    }
    void add_child(sink *c) {
        std::lock_guard<std::mutex> lock(mu);
        if (c != this && std::find(children.begin(), children.end(), c) == children.end()) children.push_back(c);
    }
    void add_transient(sink *c, const weft_future *run) {
        run_key k = key_of(run);
        std::lock_guard<std::mutex> lock(mu);
        if (c == this) return;
        for (const held &h : transient)
            if (h.s == c && h.run == k) return;
        transient.push_back(held{c, k, capture_stamp()});
    }
    /* The sinks to visit after this one for `run`: its children, and what
     * the subflows of that run composed (NULL run: of every run). */
    std::vector<sink *> next_for(const run_key &k) {
        std::lock_guard<std::mutex> lock(mu);
        std::vector<sink *> next = children;
        for (const held &h : transient)
            if (!k.f || h.run == k) next.push_back(h.s);
        return next;
    }

    /* At the end of a run of this sink's taskflow: drops the run's entries
     * (and older ones) of the transient lists of every sink reachable from
     * here, and, for a failed run only, takes the
     * first exception found (this sink's own first, then its children's, and
     * orphans of their graphs).  A run that succeeded threw nothing, so it
     * takes nothing: an exception in a module body it shares with another
     * taskflow belongs to that taskflow's failing run.  Module graphs may form
     * a cycle (the run fails with WEFT_EDEADLK): each sink is visited once,
     * and no lock is held while another sink is visited. */
    std::exception_ptr take(bool failed, const weft_future *run = nullptr, std::uint64_t born = 0) noexcept {
        std::exception_ptr e;
        try {
            run_key k = key_of(run);
            std::vector<sink *> seen{this}, todo{this};
            while (!todo.empty()) {
                sink *s = todo.back();
                todo.pop_back();
                /* The exceptions of this run (weft_ctx_run: the top-level run,
                 * also for tasks of module bodies and subflows; pipeline
                 * stages: weft_pipeflow_run), or kept with no run. */
                std::exception_ptr se = failed ? s->take_own(run, born) : nullptr;
                if (!e) e = std::move(se);
                std::vector<sink *> next = s->next_for(k);
                {
                    std::lock_guard<std::mutex> lock(s->mu);
                    s->transient.erase(std::remove_if(s->transient.begin(), s->transient.end(),
                                                      [&](const held &h) {
                                                          return !k.f || h.run == k || h.stamp <= born;
                                                      }),
                                       s->transient.end());
                }
                for (auto it = next.rbegin(); it != next.rend(); ++it)
                    if (std::find(seen.begin(), seen.end(), *it) == seen.end()) {
                        seen.push_back(*it);
                        todo.push_back(*it);
                    }
            }
        } catch (...) {
            /* No memory for the walk: the run still reports its failure (weft::error). */
        }
        return e;
    }

private:
    /* This sink's exception of `run` (NULL: its first of any run), else the
     * first orphan of its graph (of that run, if any); of those stamped after
     * `born` (see capture_clock).  The others of that key go too. */
    std::exception_ptr take_own(const weft_future *run, std::uint64_t born) noexcept {
        std::exception_ptr e;
        if (ncaught.load(std::memory_order_acquire)) {
            run_key k = key_of(run);
            std::lock_guard<std::mutex> lock(mu);
            if (!run) {
                if (!caught_.empty()) {
                    e = std::move(caught_.front().ex);
                    caught_.erase(caught_.begin());
                }
            } else {
                std::size_t keep = 0;
                for (std::size_t i = 0; i < caught_.size(); ++i) {
                    caught &c = caught_[i];
                    if (c.run == k || !c.run.f) {
                        if (!e && c.stamp > born) e = std::move(c.ex);
                    } else {
                        caught_[keep++] = std::move(c);
                    }
                }
                caught_.resize(keep);
            }
            ncaught.store(caught_.size(), std::memory_order_release);
        }
        if (graph && !orphanage::get().empty()) {
            std::exception_ptr oe = orphanage::get().take(graph, run, born);
            if (!e) e = std::move(oe);
        }
        return e;
    }
};

/* ---- chunks of callables, and a process-wide cache of the big ones -------------
 * A taskflow of a million lambdas needs megabytes for them; fresh memory costs a
 * page fault per 4 KiB, more than the task itself (a build of 1M tasks went
 * from 26 to 42 ns per task).  So arenas give their 1 MiB chunks back to a
 * cache (up to 64 MiB, kept for the process's life, like the C library's block
 * cache) and take them from there. */
struct chunk {
    chunk *next;
    std::size_t cap, used;
    unsigned char *data() { return reinterpret_cast<unsigned char *>(this) + header(); }
    static constexpr std::size_t header() {
        return (sizeof(chunk) + alignof(std::max_align_t) - 1) & ~(alignof(std::max_align_t) - 1);
    }
};

class chunk_cache {
public:
    static constexpr std::size_t big = std::size_t(1) << 20;
    static constexpr std::size_t max_chunks = 64;

    static chunk_cache &get() {
        static chunk_cache *c = new chunk_cache; /* never destroyed: arenas may outlive statics */
        return *c;
    }
    chunk *take() {
        std::lock_guard<std::mutex> lock(mu_);
        chunk *c = free_;
        if (c) {
            free_ = c->next;
            --count_;
        }
        return c;
    }
    /* Keeps c if it is a big chunk and there is room, else frees it. */
    void give(chunk *c) {
        if (c->cap == big) {
            std::lock_guard<std::mutex> lock(mu_);
            if (count_ < max_chunks) {
                c->next = free_;
                free_ = c;
                ++count_;
                return;
            }
        }
        ::operator delete(c);
    }

private:
    std::mutex mu_;
    chunk *free_ = nullptr;
    std::size_t count_ = 0;
};

/* ---- arena: the memory that holds a taskflow's callables ---------------------
 * A bump allocator over chunks (doubling from 4 KiB to 1 MiB) plus a list of the
 * destructors to run; trivially destructible callables register none.  clear()
 * destroys every object and keeps the chunks for reuse. */
class arena {
public:
    arena() noexcept = default;
    /* Uses buf[0..n) (aligned for max_align_t) before any chunk. */
    arena(void *buf, std::size_t n) noexcept : inline_(static_cast<unsigned char *>(buf)), inline_cap_(n) {}
    ~arena() {
        clear();
        while (chunks_) {
            chunk *next = chunks_->next;
            chunk_cache::get().give(chunks_);
            chunks_ = next;
        }
    }
    arena(const arena &) = delete;
    arena &operator=(const arena &) = delete;

    template <class T, class... A>
    T *make(A &&...args) {
        void *p = allocate(sizeof(T), alignof(T));
        T *obj = ::new (p) T(std::forward<A>(args)...);
        if constexpr (!std::is_trivially_destructible_v<T>) {
            try {
                dtor *d = static_cast<dtor *>(allocate(sizeof(dtor), alignof(dtor)));
                *d = dtor{[](void *o) { static_cast<T *>(o)->~T(); }, obj, dtors_};
                dtors_ = d;
            } catch (...) {
                obj->~T();
                throw;
            }
        }
        return obj;
    }

    /* Destroys every object, newest first, and rewinds to the first byte. */
    void clear() noexcept {
        while (dtors_) {
            dtor *d = dtors_;
            dtors_ = d->next;
            d->fn(d->obj);
        }
        inline_used_ = 0;
        for (chunk *c = chunks_; c; c = c->next) c->used = 0;
        cur_ = chunks_;
    }

private:
    struct dtor {
        void (*fn)(void *);
        void *obj;
        dtor *next;
    };
    /* The offset at or after `used` in base[] where an object aligned to
     * `align` may start: by address, so over-aligned callables (alignas(64)
     * captures) work although the buffers are only max_align_t-aligned. */
    static std::size_t align_at(const unsigned char *base, std::size_t used, std::size_t align) {
        std::uintptr_t a = reinterpret_cast<std::uintptr_t>(base) + used;
        return used + static_cast<std::size_t>(((a + align - 1) & ~(std::uintptr_t(align) - 1)) - a);
    }

    void *allocate(std::size_t size, std::size_t align) {
        if (inline_) {
            std::size_t at = align_at(inline_, inline_used_, align);
            if (at + size <= inline_cap_) {
                inline_used_ = at + size;
                return inline_ + at;
            }
        }
        for (; cur_; cur_ = cur_->next) {
            std::size_t at = align_at(cur_->data(), cur_->used, align);
            if (at + size <= cur_->cap) {
                cur_->used = at + size;
                return cur_->data() + at;
            }
            if (!cur_->next) break;
        }
        std::size_t cap = next_cap_;
        if (next_cap_ < chunk_cache::big) next_cap_ *= 2;
        chunk *c = nullptr;
        if (cap == chunk_cache::big && size + align <= cap) c = chunk_cache::get().take();
        if (!c) {
            if (cap < size + align) cap = size + align;
            c = static_cast<chunk *>(::operator new(chunk::header() + cap));
        }
        c->next = nullptr;
        c->cap = cap;
        std::size_t at = align_at(c->data(), 0, align); /* < align: cap >= size + align */
        c->used = at + size;
        if (cur_) cur_->next = c;
        else chunks_ = c;
        cur_ = c;
        return c->data() + at;
    }

    unsigned char *inline_ = nullptr;
    std::size_t inline_cap_ = 0, inline_used_ = 0;
    chunk *chunks_ = nullptr, *cur_ = nullptr;
    std::size_t next_cap_ = 4096;
    dtor *dtors_ = nullptr;
};

/* An iterator over weft::future<T>s (a range of dependencies). */
template <class T>
struct is_future : std::false_type {};
template <class T>
struct is_future<future<T>> : std::true_type {};
template <class It, class = void>
struct is_future_iterator : std::false_type {};
template <class It>
struct is_future_iterator<It, std::void_t<decltype(*std::declval<It &>()), decltype(++std::declval<It &>()),
                                          decltype(std::declval<It &>() != std::declval<It &>())>>
    : is_future<std::remove_cv_t<std::remove_reference_t<decltype(*std::declval<It &>())>>> {};

template <class T, class = void>
struct is_range : std::false_type {};
template <class T>
struct is_range<T, std::void_t<decltype(std::begin(std::declval<T &>())), decltype(std::end(std::declval<T &>()))>>
    : std::true_type {};

} // namespace detail

/* ---- what a running task may ask ------------------------------------------------
 * A task lambda taking (weft::runtime&) receives it: the context of the call,
 * valid only during that call, as the weft_ctx it wraps (weft/core.h): a copy
 * kept after the task returns (captured by an async task it launched, stored
 * in an object) names a context that is gone; pass what it says (worker_id(),
 * native_executor()) instead. */
class runtime {
public:
    explicit runtime(weft_ctx *ctx) noexcept : ctx_(ctx) {}
    weft_ctx *native() const noexcept { return ctx_; }
    /* The executor running the task (a non-owning view). */
    weft_executor *native_executor() const noexcept { return weft_ctx_executor(ctx_); }
    int worker_id() const noexcept { return weft_ctx_worker_id(ctx_); }
    /* True once the task's run was cancelled or has failed. */
    bool cancelled() const noexcept { return weft_ctx_cancelled(ctx_); }

private:
    weft_ctx *ctx_;
};

/* The context of the task running on this thread, or nullptr outside tasks. */
inline weft_ctx *this_task_context() noexcept { return weft_current_ctx(); }

namespace detail {

/* What a callable that is not a task gives: its call sites have already
 * failed a static_assert saying so, and this keeps them from adding pages of
 * follow-on errors. */
struct not_a_task {};

/* A callable weft can run as a task: f() or f(weft::runtime&). */
template <class F>
inline constexpr bool task_callable_v = std::is_invocable_v<F &> || std::is_invocable_v<F &, runtime &>;

#define WEFT_HPP_TASK_CALLABLE_(F, call)                                                                   \
    static_assert(::weft::detail::task_callable_v<F>,                                                      \
                  call ": the callable must be invocable as f() or f(weft::runtime&), as a non-const "   \
                  "lvalue (a lambda taking other arguments, or only callable as an rvalue, is not a task)")

/* A run_until predicate: pred() gives what converts to bool. */
template <class P>
constexpr bool predicate_v() {
    if constexpr (std::is_invocable_v<P &>) return std::is_constructible_v<bool, std::invoke_result_t<P &>>;
    else return false;
}

/* f(a...) as std::invoke calls it, as the traits that pick the kind of task
 * (std::is_invocable) and Taskflow's std::function do: a member pointer such
 * as &weft::runtime::worker_id is a callable too (called as f(rt), it failed
 * to compile inside this header although the traits had accepted it).  A
 * member pointer goes through a call that is not inlined: inlined, GCC 12's
 * -Wmaybe-uninitialized took the object (a local weft::runtime) for
 * uninitialized. */
template <class F, class... A>
[[gnu::noinline]] decltype(auto) invoke_member(F &f, A &...a) {
    return std::invoke(f, a...);
}
template <class F, class... A>
decltype(auto) call(F &f, A &...a) {
    if constexpr (std::is_member_pointer_v<F>) return detail::invoke_member(f, a...);
    else return f(a...);
}

/* Calls f, passing a runtime when it takes one. */
template <class F>
decltype(auto) invoke_task(F &f, weft_ctx *ctx) {
    if constexpr (std::is_invocable_v<F &, runtime &>) {
        runtime rt(ctx);
        return detail::call(f, rt);
    } else if constexpr (std::is_invocable_v<F &>) {
        return detail::call(f);
    } else {
        (void)f, (void)ctx;
        return not_a_task{};
    }
}

template <class F>
using task_result_t = std::conditional_t<
    std::is_invocable_v<F &, runtime &>, std::invoke_result<F &, runtime &>,
    std::conditional_t<std::is_invocable_v<F &>, std::invoke_result<F &>, std::enable_if<true, not_a_task>>>;

/* ---- shared state of futures -------------------------------------------------- */
struct state_base {
    /* References (low 16 bits) and callbacks still to harvest (the bits
     * above): one word, so that the last callback gives up its reference in
     * the same step that tells a waiter it is done.  A waiter that saw the
     * work harvested then always holds the last reference, and the exception
     * it rethrew is freed on its own thread, after its catch handler (freed
     * by a callback thread instead, the exception's count lives in
     * libstdc++, which TSan cannot see: it reported a race in CI). */
    static constexpr int ref_mask = (1 << 16) - 1;
    static constexpr int one_harvest = 1 << 16;
    std::atomic<int> refs;
    std::atomic<bool> started{false};
    std::exception_ptr ex;
    /* A run's weft_future, owned here (not by the future object) so that the
     * taskflow's destructor can wait on it too, whoever dropped the future. */
    weft_future *run_f = nullptr;
    /* r references; runs start with one harvest due (their completion
     * callback takes the run's exception), async states with none. */
    state_base(int r, bool h) noexcept : refs(r + (h ? 0 : one_harvest)) {}
    virtual ~state_base() {
        if (run_f) weft_future_destroy(run_f);
    }
    /* The run's callbacks have run (weft makes a future ready just before
     * it calls them, so a waiter waits for this too). */
    bool harvested() const noexcept { return (refs.load(std::memory_order_acquire) & ~ref_mask) == 0; }
    void retain() noexcept { refs.fetch_add(1, std::memory_order_relaxed); }
    /* A callback that will harvest, with a reference of its own. */
    void retain_harvest() noexcept { refs.fetch_add(one_harvest + 1, std::memory_order_relaxed); }
    void release() noexcept {
        if ((refs.fetch_sub(1, std::memory_order_acq_rel) & ref_mask) == 1) delete this;
    }
    /* A callback is done: harvested and released in one step. */
    void harvest_and_release() noexcept {
        if ((refs.fetch_sub(one_harvest + 1, std::memory_order_acq_rel) & ref_mask) == 1) delete this;
    }
};

template <class T>
struct value_state : state_base {
    static_assert(!std::is_reference_v<T>, "weft: an async task, run_root or spawn callable returning a reference is "
                                           "not supported: return a pointer or a std::reference_wrapper");
    using stored = std::conditional_t<std::is_void_v<T>, char, T>;
    std::optional<stored> value;
    using state_base::state_base;
};

} // namespace detail

/* ---- futures ------------------------------------------------------------------
 * The result of executor::run / run_n / run_until (future<void>) and of
 * executor::async (future<T>).  Move-only; destroying it detaches the work,
 * which still completes.  wait() and get() rethrow the first exception a task
 * threw; otherwise a failed or cancelled run throws weft::error. */
template <class T>
class future {
public:
    future() noexcept = default;
    future(weft_future *f, detail::value_state<T> *st) noexcept : f_(f), st_(st) {}
    future(future &&o) noexcept
        : f_(std::exchange(o.f_, nullptr)), st_(std::exchange(o.st_, nullptr)), is_run_(o.is_run_) {}
    future &operator=(future &&o) noexcept {
        if (this != &o) {
            reset();
            f_ = std::exchange(o.f_, nullptr);
            st_ = std::exchange(o.st_, nullptr);
            is_run_ = o.is_run_;
        }
        return *this;
    }
    future(const future &) = delete;
    future &operator=(const future &) = delete;
    ~future() { reset(); }

    bool valid() const noexcept { return f_ != nullptr; }
    /* True once the work has finished (never blocks). */
    bool ready() const noexcept {
        return f_ && weft_future_ready(f_) && st_->harvested();
    }

    /* Waits until the work has finished; rethrows its exception or throws
     * weft::error for a failed or cancelled run (WEFT_EDEADLK: a task waiting
     * for a run of its own taskflow).  May be called again: it throws again. */
    void wait() const {
        if (!f_) throw error(WEFT_EINVAL, "weft::future::wait", "the future has no state");
        weft_status st = weft_future_wait(f_);
        finish(st, "weft::future::wait");
    }

    /* Waits at most `d`; true if the work finished (then as wait()). */
    template <class Rep, class Period>
    bool wait_for(std::chrono::duration<Rep, Period> d) const {
        if (!f_) throw error(WEFT_EINVAL, "weft::future::wait_for", "the future has no state");
        weft_status st = weft_future_wait_for(f_, timeout_ns(d));
        if (st == WEFT_ETIMEDOUT) return false;
        finish(st, "weft::future::wait_for");
        return true;
    }

    /* wait(), then the value (moved out: call get() once for a value). */
    T get() {
        wait();
        if constexpr (!std::is_void_v<T>) return std::move(*st_->value);
    }

    /* Asks the work to stop (weft_future_cancel).  True if it was still going:
     * then wait() and get() throw weft::error WEFT_ECANCELED, also when the
     * cancel came while an async task's function ran (it is not interrupted:
     * it runs to its end, once, sees runtime::cancelled(), and its value is
     * dropped; an exception it throws is rethrown instead).  So a true here
     * does not mean the function did not run: have it record that if it
     * matters.  For a run: no task starts after this call (running ones end). */
    bool cancel() {
        if (!f_) return false;
        if (is_run_) return weft_future_cancel(f_) == WEFT_OK;
        /* An async task: if it never starts, its trampoline never releases its
         * reference; a callback does then (with a reference of its own). */
        st_->retain_harvest();
        if (weft_future_then(f_, &future::on_cancelled_done, st_) != WEFT_OK) st_->harvest_and_release();
        return weft_future_cancel(f_) == WEFT_OK;
    }

    /* Details of the finished run (status, failing task and its code, skipped).
     * weft::error (WEFT_EINVAL) without a state, as wait(): a zeroed record
     * would read as a run that succeeded (status WEFT_OK).  Does not wait
     * (status WEFT_EAGAIN while the work goes on).  failed_task points into
     * this future: valid while it lives (copy it to keep it; the record of
     * a temporary's info(), ex.run(tf).info(), dangles at once). */
    weft_run_info info() const {
        if (!f_) throw error(WEFT_EINVAL, "weft::future::info", "the future has no state");
        weft_run_info ri{};
        detail::check(weft_future_info(f_, &ri), "weft_future_info");
        return ri;
    }
    weft_future *native() const noexcept { return f_; }

    /* Private: marks a run's future (its exception comes through a callback). */
    void mark_run_() noexcept { is_run_ = true; }
    /* Private: wait(), its errors naming `call` (executor::corun's). */
    void wait_as_(const char *call) const {
        if (!f_) throw error(WEFT_EINVAL, call, "the future has no state");
        finish(weft_future_wait(f_), call);
    }

private:
    /* d in nanoseconds, saturated: negative is 0 (a poll), and anything past
     * what int64 nanoseconds hold (292 years) is UINT64_MAX (never elapses).
     * A floating NaN is a poll too: `d <= 0` is false for it, and converting
     * it to integer nanoseconds is undefined (x86 gave 2^63 ns). */
    template <class Rep, class Period>
    static uint64_t timeout_ns(std::chrono::duration<Rep, Period> d) noexcept {
        if (!(d > d.zero())) return 0;
        std::chrono::duration<long double, std::nano> f = d;
        if (f.count() >= static_cast<long double>(INT64_MAX)) return UINT64_MAX;
        return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(d).count());
    }
    static void on_cancelled_done(weft_future *, weft_status, void *arg) {
        auto *st = static_cast<detail::value_state<T> *>(arg);
        if (!st->started.load(std::memory_order_acquire)) st->release(); /* the task's reference */
        st->harvest_and_release();
    }

    void finish(weft_status st, const char *call) const {
        /* Not finished (WEFT_EDEADLK: a task waiting for a run of its own
         * taskflow; WEFT_EFORKED): nothing to take. */
        if (!weft_future_ready(f_)) throw error(st, call, weft_last_error_message());
        /* The callback that takes a run's exception runs right after the future
         * became ready, on the thread that completed it: a short wait. */
        while (!st_->harvested()) std::this_thread::yield();
        if (st_->ex) std::rethrow_exception(st_->ex);
        if (st == WEFT_OK) return;
        std::string detail;
        weft_run_info ri{};
        if (st == WEFT_ETASK && weft_future_info(f_, &ri) == WEFT_OK)
            detail = std::string("task '") + ri.failed_task + "' returned " + std::to_string(ri.task_code);
        else if (st != WEFT_ECANCELED)
            detail = weft_last_error_message();
        throw error(st, call, detail);
    }

    void reset() noexcept {
        /* An async task that has not started may never start: cancelled
         * through the C handle (weft_cancel_attach on native(), a scheduler
         * handle), its trampoline never releases the task's reference, and
         * the state and its captures leaked.  The callback cancel() uses
         * releases it once the work is done, if it never started; it is
         * registered here unless one already is (cancel()'s: EBUSY). */
        if (f_ && !is_run_ && !st_->started.load(std::memory_order_acquire)) {
            st_->retain_harvest();
            if (weft_future_then(f_, &future::on_cancelled_done, st_) != WEFT_OK) st_->harvest_and_release();
        }
        if (f_ && !is_run_) weft_future_destroy(f_); /* a run's: its state owns it */
        if (st_) st_->release();
        f_ = nullptr;
        st_ = nullptr;
    }

    weft_future *f_ = nullptr;
    detail::value_state<T> *st_ = nullptr;
    bool is_run_ = false;
};

/* ---- task handles -------------------------------------------------------------
 * A small value naming one task of a taskflow (or subflow), valid while its
 * graph is not cleared or destroyed.  Builders throw weft::error on failure. */
/* A task's priority (weft/sched.h's weft_priority; Taskflow's TaskPriority,
 * whose HIGH, NORMAL and LOW are high, normal and low; critical is weft's). */
enum class task_priority {
    low = WEFT_PRIORITY_LOW,
    normal = WEFT_PRIORITY_NORMAL,
    high = WEFT_PRIORITY_HIGH,
    critical = WEFT_PRIORITY_CRITICAL
};

/* What a task does (weft/flow.h's weft_task_kind; Taskflow's TaskType).
 * Taskflow's PLACEHOLDER, STATIC and RUNTIME are all `plain` here (a
 * placeholder is a plain task with no work yet, and a lambda taking
 * weft::runtime& is a plain task); graph tasks are never ASYNC. */
enum class task_type {
    plain = WEFT_TASK_STATIC,
    condition = WEFT_TASK_CONDITION,
    multi_condition = WEFT_TASK_MULTI_CONDITION,
    subflow = WEFT_TASK_SUBFLOW,
    module = WEFT_TASK_MODULE
};

class task {
public:
    task() noexcept = default;
    explicit task(weft_task t) noexcept : t_(t) {}

    /* Adds this -> t for each t (Taskflow's precede); all or nothing. */
    template <class... Ts>
    task &precede(const Ts &...ts) {
        return link(weft_precede, weft_precede_many, "weft::task::precede", ts...);
    }
    /* Adds t -> this for each t; all or nothing. */
    template <class... Ts>
    task &succeed(const Ts &...ts) {
        return link(weft_succeed, weft_succeed_many, "weft::task::succeed", ts...);
    }
    task &name(const std::string &n) {
        detail::check(weft_task_set_name(t_, n.c_str()), "weft::task::name");
        return *this;
    }
    std::string name() const { return weft_task_name(t_); }
    /* Replaces the task's work (Taskflow's work()): a placeholder's, or a
     * plain task's (emplaced with f() or f(weft::runtime&), or a pipeline's
     * task, which then runs f instead), by f() or f(weft::runtime&) returning
     * void.  f is moved (or copied) to the heap and owned by the task, which
     * destroys it once: when its work is replaced again (then at once), the
     * task erased, or the taskflow (or subflow graph) cleared or destroyed.
     * A callable the task was emplaced with lives in the taskflow's arena: it
     * stays, unused, until the taskflow is cleared or destroyed.  A
     * condition's, multi-condition's, subflow's or module's work cannot be
     * replaced (unlike Taskflow, a task keeps its kind): a callable returning
     * other than void does not compile, and such a task throws weft::error
     * WEFT_EINVAL.  Builder rules: weft::error WEFT_EBUSY while the taskflow
     * (or one it is a module of) runs, WEFT_EINVAL for an empty handle; an
     * exception copying f, or any error, leaves the task's work as it was.
     * f's exceptions reach the run's future as any task's. */
    template <class F>
    task &work(F &&f);
    /* The task's user pointer (Taskflow's data()); nullptr if none was set. */
    void *data() const noexcept { return weft_task_data(t_); }
    /* Attaches a user pointer (Taskflow's data(void*)); weft never touches it.
     * Allowed while the taskflow runs (reading it in a task of that run is
     * then the caller's to order).  weft::error WEFT_EINVAL for an empty handle. */
    task &data(void *d) {
        detail::check(weft_task_set_data(t_, d), "weft::task::data");
        return *this;
    }
    std::size_t num_successors() const noexcept { return weft_task_num_successors(t_); }
    std::size_t num_dependents() const noexcept { return weft_task_num_dependents(t_); }
    std::size_t num_weak_dependents() const noexcept { return weft_task_num_weak_dependents(t_); }
    /* Taskflow's names: every edge in, the strong ones (not from a condition). */
    std::size_t num_predecessors() const noexcept { return num_dependents(); }
    std::size_t num_strong_dependents() const noexcept { return num_dependents() - num_weak_dependents(); }
    /* Calls f(weft::task) for each successor, in the order the edges were added. */
    template <class F>
    void for_each_successor(F &&f) const {
        static_assert(std::is_invocable_v<F &, task>,
                      "weft::task::for_each_successor: the visitor must be invocable as f(weft::task)");
        for (std::size_t i = 0, n = num_successors(); i < n; i++) f(task(weft_task_successor(t_, i)));
    }
    /* Sets the task's priority (weft_task_set_priority; Taskflow's
     * priority(p)).  weft::error WEFT_EINVAL for an empty handle, WEFT_EBUSY
     * while a run of its taskflow is queued or going. */
    task &priority(task_priority p) {
        detail::check(weft_task_set_priority(t_, static_cast<weft_priority>(p)), "weft::task::priority");
        return *this;
    }
    /* The task's own priority: the last one set, normal if none was (or for
     * an empty handle).  A run's priority (weft_run_with_priority) is not
     * reported here. */
    task_priority priority() const noexcept { return static_cast<task_priority>(weft_task_get_priority(t_)); }
    /* What the task does (Taskflow's type()); plain for an empty handle. */
    task_type type() const noexcept { return static_cast<task_type>(weft_task_get_kind(t_)); }
    /* Removes the edges this -> t for each t (Taskflow's remove_successors):
     * every copy of a doubled edge.  As in Taskflow, a t that is not a
     * successor is skipped.  Not all or nothing: on an error (weft::error
     * WEFT_EINVAL for an empty handle or a task of another taskflow,
     * WEFT_EBUSY while the taskflow runs) the edges to the ts before the
     * failing one are already gone. */
    template <class... Ts>
    task &remove_successors(const Ts &...ts) {
        (unlink(t_, as_native(ts), "weft::task::remove_successors"), ...);
        return *this;
    }
    /* Removes the edges t -> this for each t (Taskflow's
     * remove_predecessors); as remove_successors. */
    template <class... Ts>
    task &remove_predecessors(const Ts &...ts) {
        (unlink(as_native(ts), t_, "weft::task::remove_predecessors"), ...);
        return *this;
    }
    /* Makes the task acquire one unit of `s` before it starts, and release
     * one when its function returns (Taskflow's acquire / release; the C
     * weft_task_acquire / weft_task_release of weft/graph.h, whose rules
     * hold: a task that finds no unit free is parked, using no worker;
     * acquiring one semaphore twice counts once; the releasing task may
     * differ from the acquiring one).  s must outlive every run of the
     * taskflow (see class semaphore).  Builder rules: weft::error
     * WEFT_EBUSY while the taskflow runs, WEFT_EINVAL for an empty handle
     * or a moved-from semaphore. */
    task &acquire(semaphore &s);
    task &release(semaphore &s);
    /* How many distinct semaphores the task acquires, and how many
     * releases it makes (weft_task_num_acquires / _releases). */
    std::size_t num_acquires() const noexcept { return weft_task_num_acquires(t_); }
    std::size_t num_releases() const noexcept { return weft_task_num_releases(t_); }
    std::size_t index() const noexcept { return weft_task_index(t_); }
    bool empty() const noexcept { return weft_task_is_null(t_); }
    explicit operator bool() const noexcept { return !empty(); }
    weft_task native() const noexcept { return t_; }
    friend bool operator==(const task &a, const task &b) noexcept { return a.t_.node_ == b.t_.node_; }
    friend bool operator!=(const task &a, const task &b) noexcept { return !(a == b); }

private:
    /* One edge with `one`, several with `many` (one call: all or nothing). */
    template <class... Ts>
    task &link(weft_status (*one)(weft_task, weft_task),
               weft_status (*many)(weft_task, const weft_task *, std::size_t), const char *call,
               const Ts &...ts) {
        if constexpr (sizeof...(Ts) == 1) {
            (void)many;
            detail::check(one(t_, as_native(ts)...), call);
        } else if constexpr (sizeof...(Ts) > 1) {
            (void)one;
            const weft_task other[] = {as_native(ts)...};
            detail::check(many(t_, other, sizeof...(Ts)), call);
        } else {
            (void)one, (void)many, (void)call;
        }
        return *this;
    }
    /* weft_edge_remove, with a missing edge skipped (Taskflow's). */
    static void unlink(weft_task from, weft_task to, const char *call) {
        weft_status st = weft_edge_remove(from, to);
        if (st != WEFT_ENOENT) detail::check(st, call);
    }
    static weft_task as_native(const task &t) noexcept { return t.t_; }
    static weft_task as_native(weft_task t) noexcept { return t; }
    weft_task t_{};
};

/* ---- semaphores ---------------------------------------------------------------
 * A counting semaphore for graph tasks (Taskflow's tf::Semaphore; the C
 * weft_semaphore of weft/async.h): at most max_value() of the tasks that
 * acquire it run at once.
 *
 *     weft::semaphore disk(2);                 // two at a time
 *     auto t = taskflow.emplace([&] { write(); });
 *     t.acquire(disk).release(disk);
 *
 * Move-only (a moved-from one throws weft::error WEFT_EINVAL from every call,
 * task::acquire and release included; native() is NULL).  It may serve tasks
 * of several taskflows and executors at once.  The destructor waits while a
 * task holds a unit or is parked on it, or a run (queued or going) of a
 * taskflow naming it may still acquire or release it, as ~taskflow waits for
 * its runs: declare it before the taskflows that use it, or wait for their
 * runs first.  Inside a task it cannot wait (that would hold the worker those
 * runs may need): destroyed there while in use, it prints what happened to
 * stderr and calls std::terminate.  A pipeline stage or an algorithm's chunk
 * that a worker took from its queue runs with no task around it
 * (weft_current_ctx() is NULL there): destroyed there while in use, it waits
 * like off the workers, holding that worker (with one worker, for ever).
 * After it is gone, a taskflow that still names it must not run (clear or
 * destroy it), as in C. */
class semaphore {
public:
    explicit semaphore(std::size_t max_value) {
        weft_status st = WEFT_OK;
        s_ = weft_semaphore_create(max_value, &st);
        if (!s_) throw error(st, "weft::semaphore", weft_last_error_message());
    }
    semaphore(semaphore &&o) noexcept : s_(std::exchange(o.s_, nullptr)) {}
    semaphore &operator=(semaphore &&o) noexcept {
        if (this != &o) {
            destroy();
            s_ = std::exchange(o.s_, nullptr);
        }
        return *this;
    }
    semaphore(const semaphore &) = delete;
    semaphore &operator=(const semaphore &) = delete;
    ~semaphore() { destroy(); }

    /* Units free now: a snapshot (Taskflow's value()). */
    std::size_t value() const { return weft_semaphore_value(live("weft::semaphore::value")); }
    /* The units it was made with (Taskflow's max_value()). */
    std::size_t max_value() const { return weft_semaphore_max(live("weft::semaphore::max_value")); }
    /* Makes every unit free again (Taskflow's reset()), e.g. after a run was
     * cancelled between an acquiring and a releasing task.  weft::error
     * WEFT_EBUSY (nothing changed) while a task is parked on it; only while
     * no task holding it runs (weft_semaphore_reset's rule). */
    void reset() { detail::check(weft_semaphore_reset(live("weft::semaphore::reset")), "weft::semaphore::reset"); }
    weft_semaphore *native() const noexcept { return s_; }
    /* Private: the handle, or weft::error for a moved-from semaphore. */
    weft_semaphore *live(const char *call) const { return detail::live(s_, call); }

private:
    void destroy() noexcept {
        if (!s_) return;
        for (unsigned spins = 0; weft_semaphore_destroy(s_) == WEFT_EBUSY; ++spins) {
            if (weft_current_ctx()) {
                std::fprintf(stderr,
                             "weft::semaphore destroyed inside a task while in use (%s): it cannot wait there "
                             "without holding a worker its users may need; destroy it after their runs\n",
                             weft_last_error_message());
                std::terminate();
            }
            if (spins < 64) std::this_thread::yield();
            else std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
        s_ = nullptr;
    }
    weft_semaphore *s_ = nullptr;
};

inline task &task::acquire(semaphore &s) {
    detail::check(weft_task_acquire(t_, s.live("weft::task::acquire")), "weft::task::acquire");
    return *this;
}
inline task &task::release(semaphore &s) {
    detail::check(weft_task_release(t_, s.live("weft::task::release")), "weft::task::release");
    return *this;
}

/* ---- partitioners for the algorithms -------------------------------------------- */
struct partitioner {
    weft_partitioner kind = WEFT_PARTITION_AUTO;
    std::size_t chunk = 0;
    weft_algo_config config() const noexcept {
        weft_algo_config c{};
        c.partitioner = kind;
        c.chunk = chunk;
        return c;
    }
};
struct static_partitioner : partitioner {
    explicit static_partitioner(std::size_t c = 0) noexcept : partitioner{WEFT_PARTITION_STATIC, c} {}
};
struct dynamic_partitioner : partitioner {
    explicit dynamic_partitioner(std::size_t c = 0) noexcept : partitioner{WEFT_PARTITION_DYNAMIC, c} {}
};
struct guided_partitioner : partitioner {
    explicit guided_partitioner(std::size_t c = 0) noexcept : partitioner{WEFT_PARTITION_GUIDED, c} {}
};

/* An index range first, first + step, ... up to but excluding last; step may be
 * negative (then first > last).  Taskflow's IndexRange. */
template <class I>
class index_range {
public:
    index_range() = default;
    index_range(I first, I last, I step) : begin_(first), end_(last), step_(step) {
        if (step == I(0)) throw error(WEFT_EINVAL, "weft::index_range", "step 0");
    }
    I begin() const noexcept { return begin_; }
    I end() const noexcept { return end_; }
    I step_size() const noexcept { return step_; }
    /* The number of indices in the range.  Computed in unsigned 64-bit
     * arithmetic, so no bounds overflow (INT_MIN to INT_MAX, 0 to SIZE_MAX). */
    std::size_t size() const noexcept {
        static_assert(std::is_integral_v<I>, "weft::index_range needs an integral type");
        using U = unsigned long long;
        if (step_ > I(0)) return begin_ < end_ ? static_cast<std::size_t>((U(end_) - U(begin_) - 1) / U(step_) + 1) : 0;
        if constexpr (std::is_signed_v<I>)
            return begin_ > end_ ? static_cast<std::size_t>((U(begin_) - U(end_) - 1) / (U(0) - U(step_)) + 1) : 0;
        return 0;
    }
    /* The k-th index, begin + k * step (wrapping arithmetic: exact for every
     * index of the range). */
    I at(std::size_t k) const noexcept {
        using U = unsigned long long;
        return static_cast<I>(U(begin_) + U(k) * U(step_));
    }
    /* The sub-range of the k-th to the (m-1)-th index (m past size() reads
     * as size()).  Its end is at(m), the index after its last, for the last
     * sub-range too (Taskflow's), so that consecutive sub-ranges meet and a
     * loop `i != end()` stops; where at(m) lies past I's range, the range's
     * own end stands for it (the sub-range's size is right either way). */
    index_range sub(std::size_t k, std::size_t m) const noexcept {
        std::size_t n = size();
        if (m > n) m = n;
        index_range r;
        r.begin_ = at(k);
        r.end_ = m < n || aligned_end_fits(n) ? at(m) : end_;
        r.step_ = step_;
        return r;
    }

private:
    /* at(n) for n = size() > 0 is in I's range: the last index plus a step
     * does not overflow.  (An empty range's at(0) is begin.) */
    bool aligned_end_fits(std::size_t n) const noexcept {
        if (n == 0) return true;
        I last = at(n - 1);
        if (step_ > I(0)) return last <= std::numeric_limits<I>::max() - step_;
        return last >= std::numeric_limits<I>::min() - step_;
    }

public:

private:
    I begin_{}, end_{}, step_{1};
};

/* ---- parallel algorithms (free functions over an executor) --------------------
 * Each runs on `ex` and returns when done (from a task of ex it runs other work
 * meanwhile).  Iterators must be random access.  A throw in a body stops the
 * chunks that have not started and is rethrown here; a failing weft call throws
 * weft::error.  An empty range does nothing (a reduction returns init).  One
 * body (predicate, operator, comparator) object is called by every worker at
 * once, not copied per worker as Taskflow's are: a mutable body, or one that
 * changes its members, races (keep such state per thread). */
namespace detail {
/* The C futures of a range of weft::futures, for weft_dependent_async: n of
 * them, then a NULL, so that data() is never empty. */
template <class It>
std::vector<weft_future *> native_futures(It first, It last) {
    std::vector<weft_future *> d;
    for (; first != last; ++first) d.push_back((*first).native());
    d.push_back(nullptr);
    return d;
}

/* first, last or step of for_each_index as the common index type I: a negative
 * value of a signed argument is refused when I is unsigned (for_each_index(10,
 * 0u, -1) made I unsigned, the step a huge positive one, and ran nothing). */
template <class I, class T>
I index_arg(T v) {
    if constexpr (std::is_signed<T>::value && std::is_unsigned<I>::value) {
        if (v < 0)
            throw error(WEFT_EINVAL, "weft::for_each_index",
                        "a negative argument with an unsigned index type (the common type of first, last and "
                        "step): it would wrap; give all three the same signed type");
    }
    return static_cast<I>(v);
}
} // namespace detail

namespace detail {

struct algo_sink {
    std::atomic<bool> failed{false};
    std::exception_ptr ex;
    void capture() noexcept {
        bool expected = false;
        if (failed.compare_exchange_strong(expected, true, std::memory_order_acq_rel)) ex = std::current_exception();
    }
    bool stop() const noexcept { return failed.load(std::memory_order_relaxed); }
    void rethrow() {
        if (failed.load(std::memory_order_acquire)) std::rethrow_exception(ex);
    }
};

/* body(lo, hi) over [0, n), through weft_parallel_for_range. */
template <class B>
void for_range(weft_executor *ex, std::size_t n, B &body, const weft_algo_config *cfg, const char *call) {
    struct ctx_t {
        B *body;
        algo_sink sink;
    } c{&body, {}};
    weft_range_fn fn = [](std::size_t lo, std::size_t hi, void *arg) {
        auto *cc = static_cast<ctx_t *>(arg);
        if (cc->sink.stop()) return;
        try {
            (*cc->body)(lo, hi);
        } catch (...) {
            cc->sink.capture();
        }
    };
    check(weft_parallel_for_range(ex, 0, n, 1, fn, &c, cfg), call);
    c.sink.rethrow();
}

/* How many chunks a chunked algorithm (reduce, scan, sort) makes of n elements. */
inline std::size_t chunk_count(weft_executor *ex, std::size_t n, std::size_t min_chunk) {
    unsigned w = weft_executor_workers(ex);
    if (w == 0) w = 1;
    std::size_t k = static_cast<std::size_t>(w) * 4;
    std::size_t by_size = (n + min_chunk - 1) / min_chunk;
    return std::max<std::size_t>(1, std::min(k, by_size));
}

/* fn(chunk, lo, hi) for each of k chunks of [0, n), one task per chunk. */
template <class F>
void for_chunks(weft_executor *ex, std::size_t n, std::size_t k, F &&fn, const char *call) {
    auto body = [&](std::size_t lo, std::size_t hi) {
        for (std::size_t c = lo; c < hi; ++c) fn(c, n * c / k, n * (c + 1) / k);
    };
    weft_algo_config cfg{};
    cfg.partitioner = WEFT_PARTITION_DYNAMIC;
    cfg.chunk = 1;
    for_range(ex, k, body, &cfg, call);
}

template <class It>
void require_random_access() {
    static_assert(std::is_base_of_v<std::random_access_iterator_tag,
                                    typename std::iterator_traits<It>::iterator_category>,
                  "weft algorithms need random-access iterators");
}

/* it + i for an index i of the range: the conversion to the iterator's
 * difference_type spelled out, so that users building with -Wconversion
 * (clang) or -Wsign-conversion get no warning from this header. */
template <class It>
It iter_at(It it, std::size_t i) {
    return it + static_cast<typename std::iterator_traits<It>::difference_type>(i);
}

template <class It, class F>
void for_each(weft_executor *ex, It first, It last, F &f, const weft_algo_config *cfg) {
    require_random_access<It>();
    auto n = static_cast<std::size_t>(last - first);
    auto body = [&](std::size_t lo, std::size_t hi) {
        for (std::size_t i = lo; i < hi; ++i) f(*detail::iter_at(first, i));
    };
    for_range(ex, n, body, cfg, "weft::for_each");
}

template <class I, class F>
void for_each_index(weft_executor *ex, index_range<I> r, F &f, const weft_algo_config *cfg) {
    auto body = [&](std::size_t lo, std::size_t hi) {
        for (std::size_t k = lo; k < hi; ++k) f(r.at(k));
    };
    for_range(ex, r.size(), body, cfg, "weft::for_each_index");
}

template <class I, class F>
void for_each_by_index(weft_executor *ex, index_range<I> r, F &f, const weft_algo_config *cfg) {
    auto body = [&](std::size_t lo, std::size_t hi) { f(r.sub(lo, hi)); };
    for_range(ex, r.size(), body, cfg, "weft::for_each_by_index");
}

template <class It, class Out, class F>
void transform(weft_executor *ex, It first, It last, Out d_first, F &op) {
    require_random_access<It>();
    require_random_access<Out>();
    auto n = static_cast<std::size_t>(last - first);
    auto body = [&](std::size_t lo, std::size_t hi) {
        for (std::size_t i = lo; i < hi; ++i) *detail::iter_at(d_first, i) = op(*detail::iter_at(first, i));
    };
    for_range(ex, n, body, nullptr, "weft::transform");
}

template <class It1, class It2, class Out, class F>
void transform2(weft_executor *ex, It1 first1, It1 last1, It2 first2, Out d_first, F &op) {
    require_random_access<It1>();
    require_random_access<It2>();
    require_random_access<Out>();
    auto n = static_cast<std::size_t>(last1 - first1);
    auto body = [&](std::size_t lo, std::size_t hi) {
        for (std::size_t i = lo; i < hi; ++i) *detail::iter_at(d_first, i) = op(*detail::iter_at(first1, i), *detail::iter_at(first2, i));
    };
    for_range(ex, n, body, nullptr, "weft::transform");
}

/* init bop uop(x0) bop uop(x1) ..., in order (bop associative). */
template <class It, class T, class BOp, class UOp>
T transform_reduce(weft_executor *ex, It first, It last, T init, BOp &bop, UOp &uop) {
    require_random_access<It>();
    auto n = static_cast<std::size_t>(last - first);
    if (n == 0) return init;
    std::size_t k = chunk_count(ex, n, 1024);
    std::vector<std::optional<T>> part(k);
    /* The accumulator moves into bop when bop takes it by value or rvalue
     * (strings: no copy per element); as an lvalue otherwise, as Taskflow
     * passes it, so a bop taking `T&` (Taskflow's own reduce example) works. */
    auto step = [&bop](T &acc, auto &&x) -> T {
        if constexpr (std::is_invocable_v<BOp &, T &&, decltype(x)>)
            return bop(std::move(acc), std::forward<decltype(x)>(x));
        else
            return bop(acc, std::forward<decltype(x)>(x));
    };
    for_chunks(ex, n, k, [&](std::size_t c, std::size_t lo, std::size_t hi) {
        if (lo == hi) return;
        T acc = uop(*detail::iter_at(first, lo));
        for (std::size_t i = lo + 1; i < hi; ++i) acc = step(acc, uop(*detail::iter_at(first, i)));
        part[c].emplace(std::move(acc));
    }, "weft::reduce");
    for (auto &p : part)
        if (p) init = step(init, std::move(*p));
    return init;
}

/* out[i] = init op in[0] op ... op in[i] (inclusive) or ... in[i-1] (exclusive). */
template <class It, class Out, class T, class Op>
void scan(weft_executor *ex, It first, It last, Out d_first, std::optional<T> init, Op &op, bool exclusive) {
    require_random_access<It>();
    require_random_access<Out>();
    auto n = static_cast<std::size_t>(last - first);
    if (n == 0) return;
    std::size_t k = chunk_count(ex, n, 4096);
    std::vector<std::optional<T>> part(k);
    /* Pass 1: each chunk's sum (the last chunk's is never needed). */
    for_chunks(ex, n, k, [&](std::size_t c, std::size_t lo, std::size_t hi) {
        if (lo == hi || c + 1 == k) return;
        T acc = *detail::iter_at(first, lo);
        for (std::size_t i = lo + 1; i < hi; ++i) acc = op(std::move(acc), *detail::iter_at(first, i));
        part[c].emplace(std::move(acc));
    }, "weft::scan");
    /* The prefix before each chunk, serially (k is small). */
    std::vector<std::optional<T>> before(k);
    std::optional<T> run = init;
    for (std::size_t c = 0; c < k; ++c) {
        before[c] = run;
        if (part[c]) run = run ? std::optional<T>(op(std::move(*run), std::move(*part[c]))) : std::move(part[c]);
    }
    /* Pass 2: each chunk from its prefix (reads in[i] before writing out[i]: in-place works). */
    for_chunks(ex, n, k, [&](std::size_t c, std::size_t lo, std::size_t hi) {
        std::optional<T> acc = before[c];
        for (std::size_t i = lo; i < hi; ++i) {
            T x = *detail::iter_at(first, i);
            if (exclusive) {
                *detail::iter_at(d_first, i) = *acc; /* exclusive scans always have an init */
                acc = op(std::move(*acc), std::move(x));
            } else {
                acc = acc ? std::optional<T>(op(std::move(*acc), std::move(x))) : std::optional<T>(std::move(x));
                *detail::iter_at(d_first, i) = *acc;
            }
        }
    }, "weft::scan");
}

/* Blocks sorted in parallel, then merged in parallel rounds, with std::sort and
 * std::inplace_merge: cmp must be a strict weak order, as for std::sort (with
 * one that is not, e.g. <=, std::sort may read out of bounds).  Unlike the C
 * sorts (weft/algo.h), which guard any comparator, this is the C++ rule. */
template <class It, class Cmp>
void sort(weft_executor *ex, It first, It last, Cmp &cmp) {
    require_random_access<It>();
    auto n = static_cast<std::size_t>(last - first);
    if (n < 2) return;
    std::size_t k = 1;
    std::size_t want = chunk_count(ex, n, 2048);
    while (k < want) k *= 2;
    for_chunks(ex, n, k, [&](std::size_t, std::size_t lo, std::size_t hi) {
        /* std::ref: std::sort and std::inplace_merge take the comparator by
         * value and copy it; a move-only one (a lambda holding a
         * std::unique_ptr) did not compile, and each chunk copied a big one. */
        std::sort(detail::iter_at(first, lo), detail::iter_at(first, hi), std::ref(cmp));
    }, "weft::sort");
    for (std::size_t width = 1; width < k; width *= 2) {
        std::size_t pairs = k / (2 * width);
        for_chunks(ex, pairs, pairs, [&](std::size_t p, std::size_t, std::size_t) {
            std::size_t lo = n * (2 * p * width) / k, mid = n * ((2 * p + 1) * width) / k,
                        hi = n * ((2 * p + 2) * width) / k;
            std::inplace_merge(detail::iter_at(first, lo), detail::iter_at(first, mid), detail::iter_at(first, hi), std::ref(cmp));
        }, "weft::sort");
    }
}

/* The index of the first element x of [first, first + n) with pred(x) ==
 * want, or n.  Chunks run in parallel, each from its start; a match found
 * replaces the best one only when it comes earlier, and a chunk stops (or
 * never starts) once a match before its position is known, so the answer is
 * always the first, as std::find_if's. */
template <class It, class P>
std::size_t find_first(weft_executor *ex, It first, It last, P &pred, bool want, const char *call) {
    require_random_access<It>();
    auto n = static_cast<std::size_t>(last - first);
    if (n == 0) return 0;
    std::atomic<std::size_t> best{n};
    for_chunks(ex, n, chunk_count(ex, n, 1024), [&](std::size_t, std::size_t lo, std::size_t hi) {
        for (std::size_t i = lo; i < hi; ++i) {
            if ((i - lo) % 64 == 0 && best.load(std::memory_order_relaxed) < i) return;
            if (static_cast<bool>(pred(*detail::iter_at(first, i))) == want) {
                std::size_t cur = best.load(std::memory_order_relaxed);
                while (i < cur && !best.compare_exchange_weak(cur, i, std::memory_order_relaxed)) {
                }
                return;
            }
        }
    }, call);
    return best.load(std::memory_order_relaxed); /* the call's end ordered every store before this */
}

/* The index of the first smallest (max: first largest) element by cmp, or n
 * for an empty range: std::min_element's and std::max_element's answer.
 * Each chunk finds its own, then the chunks' are compared in order. */
template <class It, class Cmp>
std::size_t extreme(weft_executor *ex, It first, It last, Cmp &cmp, bool max, const char *call) {
    require_random_access<It>();
    auto n = static_cast<std::size_t>(last - first);
    if (n == 0) return 0;
    /* i replaces b only when strictly better, so the first of equals stays. */
    auto better = [&](std::size_t i, std::size_t b) -> bool {
        return max ? static_cast<bool>(cmp(*detail::iter_at(first, b), *detail::iter_at(first, i)))
                   : static_cast<bool>(cmp(*detail::iter_at(first, i), *detail::iter_at(first, b)));
    };
    std::size_t k = chunk_count(ex, n, 1024);
    std::vector<std::size_t> part(k, n);
    for_chunks(ex, n, k, [&](std::size_t c, std::size_t lo, std::size_t hi) {
        if (lo == hi) return;
        std::size_t b = lo;
        for (std::size_t i = lo + 1; i < hi; ++i)
            if (better(i, b)) b = i;
        part[c] = b;
    }, call);
    std::size_t b = n;
    for (std::size_t c = 0; c < k; ++c)
        if (part[c] != n && (b == n || better(part[c], b))) b = part[c];
    return b;
}

} // namespace detail

/* ---- executor ----------------------------------------------------------------------
 * Owns a pool of workers (weft_executor).  Move-only; the destructor waits for
 * every run submitted to it.  weft::executor(4) has 4 workers; 0 (the default)
 * means WEFT_WORKERS or the CPUs this process may use.  Destroy it from a
 * thread that is not one of its own workers (any other thread, or a task of
 * another executor, may): from one of its own tasks the wait would be for
 * that task itself, so weft_executor_destroy refuses it (a warning on stderr,
 * nothing done) and the pool, its threads and queued work are left running,
 * never freed, while the object is gone. */
/* A worker of an executor as executor::this_worker() gives it (Taskflow's
 * tf::Worker, its id() only). */
class worker {
public:
    /* The worker's index in its executor, 0 to num_workers() - 1. */
    std::size_t id() const noexcept { return static_cast<std::size_t>(id_); }

private:
    friend class executor;
    int id_ = -1;
};

class executor {
public:
    explicit executor(unsigned workers = 0) {
        weft_executor_config cfg{};
        cfg.workers = workers;
        create(cfg);
    }
    explicit executor(const weft_executor_config &cfg) { create(cfg); }
    ~executor() {
        if (owned_) weft_executor_destroy(ex_);
    }
    /* A move takes the pool from an owning executor (which is then empty:
     * weft::error EINVAL).  A handle that owns nothing (default_executor())
     * stays as it was: moving from the shared default left it empty for the
     * rest of the program. */
    executor(executor &&o) noexcept : ex_(take(o)), owned_(o.owned_) {}
    executor &operator=(executor &&o) noexcept {
        if (this != &o) {
            if (owned_) weft_executor_destroy(ex_);
            owned_ = o.owned_;
            ex_ = take(o);
        }
        return *this;
    }
    executor(const executor &) = delete;
    executor &operator=(const executor &) = delete;

    /* The process-wide default executor (weft_default_executor), shared by every
     * library of the program; never destroyed by this object. */
    static executor &default_executor() {
        weft_executor *ex = weft_default_executor(); /* the same one, or NULL; a new one after fork() */
        if (!ex) throw error(WEFT_ENOMEM, "weft_default_executor", weft_last_error_message());
        /* One handle per default executor.  A child process made by fork()
         * gets a default executor of its own (weft/core.h); a handle made
         * once, in the parent, still named the parent's there, which has no
         * workers in the child: every call on it threw WEFT_EFORKED.  A new
         * handle is made when the C default changes; an earlier one is kept
         * (never freed), so references to it stay valid, naming the
         * executor they named. */
        static std::atomic<executor *> current{nullptr};
        executor *h = current.load(std::memory_order_acquire);
        while (!h || h->ex_ != ex) {
            executor *n = new executor(ex, false);
            if (current.compare_exchange_strong(h, n, std::memory_order_acq_rel, std::memory_order_acquire))
                return *n;
            delete n; /* another thread put one there: h is it now */
        }
        return *h;
    }

    weft_executor *native() const noexcept { return ex_; }
    std::size_t num_workers() const { return weft_executor_workers(exec("weft::executor::num_workers")); }
    /* Workers asleep now (Taskflow's num_waiters()): a snapshot
     * (weft_executor_waiters). */
    std::size_t num_waiters() const { return weft_executor_waiters(exec("weft::executor::num_waiters")); }
    /* This thread's worker index in this executor, or -1. */
    int this_worker_id() const { return weft_executor_worker_id(exec("weft::executor::this_worker_id")); }
    /* This thread's worker of this executor (Taskflow's this_worker(),
     * which returns a tf::Worker*), or nullptr off its workers.  The object
     * is the thread's own: its id() is this_worker_id().  It is written only
     * on a worker of this executor (a thread is a worker of one executor at
     * most): asking another executor, which answers nullptr, once set the
     * shared object's id to -1 under a pointer the task still held. */
    const worker *this_worker() const {
        static thread_local worker w;
        int id = this_worker_id();
        if (id < 0) return nullptr;
        w.id_ = id;
        return &w;
    }

    /* Taskflow-style runs; see the definitions after class taskflow. */
    future<void> run(taskflow &tf);
    future<void> run_n(taskflow &tf, std::uint64_t n);
    /* weft_run_until's rule: pred() is called before every iteration, the
     * first included, on an empty taskflow too (until it returns true; each
     * empty iteration completes at once).  Unlike Taskflow, whose run_until
     * returns at once on an empty taskflow without calling pred. */
    template <class P>
    future<void> run_until(taskflow &tf, P &&pred);
    /* Runs tf and waits (from a task: runs other work meanwhile); rethrows.
     * From a task of tf, or of a graph nested in a run of tf, it throws
     * weft::error WEFT_EDEADLK and runs nothing (as weft_run_and_wait). */
    void corun(taskflow &tf);

    /* Runs f() once on a worker; its value (or exception) comes from the future. */
    template <class F>
    auto async(F &&f) -> future<typename detail::task_result_t<std::decay_t<F>>::type>;
    /* Runs f() once on a worker, with no future (an exception it throws is dropped). */
    template <class F>
    void silent_async(F &&f);
    /* async(f), started only after the async tasks of `deps` have finished
     * (whatever their outcome); deps must be futures of this executor's async
     * tasks (weft::error WEFT_EINVAL otherwise) and may be destroyed at once. */
    template <class F, class... Ds>
    auto dependent_async(F &&f, const future<Ds> &...deps)
        -> future<typename detail::task_result_t<std::decay_t<F>>::type>;
    /* dependent_async(f, deps...) with no future (Taskflow's
     * silent_dependent_async): an exception f throws is dropped, and nothing
     * can wait on it or depend on it (use dependent_async for that). */
    template <class F, class... Ds>
    void silent_dependent_async(F &&f, const future<Ds> &...deps);
    /* The same with the dependencies as a range [first, last) of futures
     * (Taskflow's dependent_async(f, first, last), e.g. a std::vector of
     * them); an empty range has none.  The rules of the forms above apply to
     * each future of the range. */
    template <class F, class It, class = std::enable_if_t<detail::is_future_iterator<It>::value>>
    auto dependent_async(F &&f, It first, It last)
        -> future<typename detail::task_result_t<std::decay_t<F>>::type>;
    template <class F, class It, class = std::enable_if_t<detail::is_future_iterator<It>::value>>
    void silent_dependent_async(F &&f, It first, It last);
    /* Runs f() as a fork-join root on a worker, waits, and returns its value
     * (weft_run_root): f may use task_group and spawn.  Rethrows. */
    template <class F>
    auto run_root(F &&f) -> typename detail::task_result_t<std::decay_t<F>>::type;
    /* A task group of the task running on this thread (Taskflow's
     * executor.task_group()); weft::error outside a task. */
    weft::task_group task_group();

    /* Waits for every run submitted so far (weft_executor_wait_all). */
    void wait_for_all() {
        detail::check(weft_executor_wait_all(exec("weft::executor::wait_for_all")), "weft::executor::wait_for_all");
    }
    /* Private: the handle, or weft::error for a moved-from executor (a NULL
     * executor would be the default one to some C calls). */
    weft_executor *exec(const char *call) const { return detail::live(ex_, call); }

private:
    static weft_executor *take(executor &o) noexcept { return o.owned_ ? std::exchange(o.ex_, nullptr) : o.ex_; }
    executor(weft_executor *ex, bool owned) noexcept : ex_(ex), owned_(owned) {}
    friend class task_group; /* its view() of the executor its task runs on */
    void create(const weft_executor_config &cfg) {
        weft_status st = WEFT_OK;
        ex_ = weft_executor_create(&cfg, &st);
        if (!ex_) throw error(st, "weft_executor_create", weft_last_error_message());
    }
    weft_executor *ex_ = nullptr;
    bool owned_ = true;
};

/* ---- fork-join ----------------------------------------------------------------------
 * The C frame stack is last in, first out: weft_sync joins the most recent
 * unsynced child of the task, whoever spawned it.  Each C++ fork-join object
 * (a spawned, a task_group) joins exactly its own children, in any order: every
 * child frame it pushes is mirrored by an fj_link on a per-thread list (a task
 * never changes threads, and the tasks that run nested on its worker during a
 * wait pop what they push before they return), and joining an object pops links
 * from the top, with weft_sync each, until none of that object's children is
 * left.  A child above it, of another object, is joined on the way: its result
 * or exception is stored in its own object (which each child's trampoline
 * writes to anyway), and that object's sync() or wait() returns or rethrows it
 * later.  So the order of sync() and wait() calls never changes what they
 * return; joining an object that is not the innermost only joins the children
 * above it early.  Do not mix these objects with raw weft_spawn / weft_sync in
 * one task (those frames have no link). */
namespace detail {

struct fj_owner;

/* One child frame of a C++ fork-join object, on this thread's list. */
struct fj_link {
    fj_owner *owner;
    fj_link *prev;
};

/* How many C++ fork-join children (task_group and spawn trampolines) are
 * running on this thread, nested: a child that runs on its parent's worker
 * (in the parent's join) has the parent's weft_ctx, so the context alone does
 * not tell the two tasks apart; the context and this depth do. */
inline thread_local unsigned fj_depth = 0;

/* Counts a child trampoline's call in fj_depth. */
struct fj_child_scope {
    fj_child_scope() noexcept { ++fj_depth; }
    ~fj_child_scope() { --fj_depth; }
    fj_child_scope(const fj_child_scope &) = delete;
    fj_child_scope &operator=(const fj_child_scope &) = delete;
};

/* The running task (its context and fj_depth) and how many of this object's
 * children are not joined yet. */
struct fj_owner {
    weft_ctx *ctx = nullptr;
    std::size_t pending = 0;
    unsigned depth = fj_depth;
};

/* The innermost child frame pushed on this thread through fj_spawn. */
inline thread_local fj_link *fj_top = nullptr;

/* weft_spawn for owner o; link must stay valid until the child is joined. */
inline weft_status fj_spawn(fj_owner &o, fj_link &link, weft_task_fn fn, void *arg) noexcept {
    weft_status st = weft_spawn(o.ctx, fn, arg);
    if (st == WEFT_OK) {
        link.owner = &o;
        link.prev = fj_top;
        fj_top = &link;
        ++o.pending;
    }
    return st;
}

/* Throws weft::error (WEFT_EINVAL) unless the running task is o's: an
 * object's frames are on the stack of the task that made it, on that task's
 * worker, so a child (or any other task) that reached the object by reference
 * and spawned or joined through it would push onto, or pop, another thread's
 * frame list (a NULL link: a crash; or another task's frame). */
inline void fj_check_owner(const fj_owner &o, const char *call) {
    if (weft_current_ctx() != o.ctx || fj_depth != o.depth)
        throw error(WEFT_EINVAL, call, "only from the task that made the object (not from one of its children)");
}

/* Joins every child of o, and the children of other objects spawned after
 * them (into those objects' storage).  The link is popped before weft_sync, as
 * the C frame is: a child run here pushes its own children above o's rest. */
inline void fj_join(fj_owner &o) noexcept {
    while (o.pending > 0) {
        fj_link *l = fj_top;
        fj_top = l->prev;
        --l->owner->pending;
        (void)weft_sync(l->owner->ctx);
    }
}

} // namespace detail

/* task_group: children run(f) in parallel with the task that made the group,
 * until wait() (Taskflow's TaskGroup: silent_async and corun are aliases).  It
 * lives on the task's stack; the callables are kept in the group (the first few
 * hundred bytes inline, no allocation).  wait() waits for this group's children
 * only (see above: groups and spawns of one task are independent, waited in
 * any order) and rethrows the first exception one of them threw; once one
 * has thrown, the group's children that have not started are skipped, as in
 * Taskflow (an async one's future throws weft::error WEFT_ECANCELED), until
 * that wait().  The destructor waits (and drops exceptions) if wait was not
 * called.  Only inside
 * a task (graph task, async task, run_root), and run(), async(),
 * dependent_async() and wait() only from that task: from another one, a child
 * of the group included, they throw weft::error (WEFT_EINVAL); a child adds
 * work with a group of its own (cancel() and is_cancelled() work from any
 * thread).  async() and dependent_async() give a child a future; cancel()
 * skips the children that have not started. */
class task_group {
public:
    explicit task_group(weft_ctx *ctx) : store_(buf_, sizeof buf_) {
        if (!ctx) throw error(WEFT_EINVAL, "weft::task_group", "only inside a task of a weft executor");
        own_.ctx = ctx;
    }
    task_group() : task_group(detail::current_ctx("weft::task_group")) {}
    task_group(const task_group &) = delete;
    task_group &operator=(const task_group &) = delete;
    ~task_group() {
        detail::fj_join(own_);
        wait_tracked();
        store_.clear();
    }

    template <class F>
    void run(F &&f) {
        using Fn = std::decay_t<F>;
        WEFT_HPP_TASK_CALLABLE_(Fn, "weft::task_group::run");
        detail::fj_check_owner(own_, "weft::task_group::run");
        auto *h = store_.make<holder<Fn>>(holder<Fn>{{}, &sink_, std::forward<F>(f)});
        detail::check(detail::fj_spawn(own_, h->link, &holder<Fn>::call, h), "weft::task_group::run");
        ++size_;
    }
    template <class F>
    void silent_async(F &&f) { run(std::forward<F>(f)); }

    /* A group child with a future (Taskflow's TaskGroup::async): f() or
     * f(weft::runtime&) runs as the executor's async task (executor::async),
     * and wait(), corun() and the destructor wait for it too.  Its value or
     * exception goes to the returned weft::future only (wait() does not
     * rethrow it; Taskflow's does not either).  Costs one more async task
     * than executor::async (the group's own wait on it).  Only from the
     * task that made the group, as run(). */
    template <class F>
    auto async(F &&f) -> future<typename detail::task_result_t<std::decay_t<F>>::type> {
        using Fn = std::decay_t<F>;
        WEFT_HPP_TASK_CALLABLE_(Fn, "weft::task_group::async");
        detail::fj_check_owner(own_, "weft::task_group::async");
        executor ex = view();
        make_room(); /* track()'s push_back cannot throw */
        auto fut = ex.async(guarded<Fn>{&sink_, std::forward<F>(f)});
        track(ex, fut.native());
        return fut;
    }
    /* async(f) started only after the async tasks of deps have finished
     * (executor::dependent_async; Taskflow's TaskGroup::dependent_async, with
     * futures for tf::AsyncTask handles): the futures of the group's async
     * or dependent_async children, or of any async task of the executor. */
    template <class F, class... Ds>
    auto dependent_async(F &&f, const future<Ds> &...deps)
        -> future<typename detail::task_result_t<std::decay_t<F>>::type> {
        using Fn = std::decay_t<F>;
        WEFT_HPP_TASK_CALLABLE_(Fn, "weft::task_group::dependent_async");
        detail::fj_check_owner(own_, "weft::task_group::dependent_async");
        executor ex = view();
        make_room();
        auto fut = ex.dependent_async(guarded<Fn>{&sink_, std::forward<F>(f)}, deps...);
        track(ex, fut.native());
        return fut;
    }
    /* The same with the dependencies as a range [first, last) of futures
     * (Taskflow's dependent_async(f, first, last)). */
    template <class F, class It, class = std::enable_if_t<detail::is_future_iterator<It>::value>>
    auto dependent_async(F &&f, It first, It last)
        -> future<typename detail::task_result_t<std::decay_t<F>>::type> {
        using Fn = std::decay_t<F>;
        WEFT_HPP_TASK_CALLABLE_(Fn, "weft::task_group::dependent_async");
        detail::fj_check_owner(own_, "weft::task_group::dependent_async");
        executor ex = view();
        make_room();
        auto fut = ex.dependent_async(guarded<Fn>{&sink_, std::forward<F>(f)}, first, last);
        track(ex, fut.native());
        return fut;
    }

    /* Cancels the group (Taskflow's TaskGroup::cancel): children that have
     * not started yet are skipped (a run() child does nothing; an async one
     * does not call f, and its future throws weft::error WEFT_ECANCELED);
     * children already running are not interrupted (they may poll
     * is_cancelled()).  The group stays cancelled: children added later are
     * skipped too.  Any thread, a child of the group included. */
    void cancel() noexcept { sink_.cancelled.store(true, std::memory_order_release); }
    bool is_cancelled() const noexcept { return sink_.cancelled.load(std::memory_order_acquire); }
    /* The number of children (run, silent_async, async, dependent_async)
     * added since the group was made or last waited for: wait() and corun()
     * set it back to 0. */
    std::size_t size() const noexcept { return size_; }

    /* Waits for this group's children (and joins any child of another object
     * spawned after them); rethrows the first exception a run() child threw
     * (the children that had not started by then were skipped), and the
     * group runs the children added after it again. */
    void wait() {
        detail::fj_check_owner(own_, "weft::task_group::wait");
        detail::fj_join(own_);
        wait_tracked();
        store_.clear();
        size_ = 0;
        sink_.rethrow_and_reset();
    }
    void corun() { wait(); }

private:
    /* A non-owning view of the executor the group's task runs on. */
    executor view() const { return executor(weft_ctx_executor(own_.ctx), false); }
    /* The group's own hold on an async child: a no-op dependent task after
     * it, whose future wait_tracked() waits for (the caller's future is the
     * caller's, and may be gone first).  Where that cannot be queued (out of
     * memory), the child is waited for here. */
    void track(executor &ex, weft_future *child) noexcept {
        ++size_;
        weft_future *hold = nullptr;
        if (weft_dependent_async(ex.native(), &noop, nullptr, &child, 1, &hold) == WEFT_OK)
            tracked_.push_back(hold);
        else
            (void)weft_future_wait(child);
    }
    static int noop(weft_ctx *, void *) noexcept { return 0; }
    /* Room for one more tracked future, grown geometrically (reserve(size + 1)
     * would copy the vector on every async). */
    void make_room() {
        if (tracked_.size() == tracked_.capacity()) tracked_.reserve(tracked_.empty() ? 8 : 2 * tracked_.size());
    }
    void wait_tracked() noexcept {
        for (weft_future *h : tracked_) {
            (void)weft_future_wait(h);
            weft_future_destroy(h);
        }
        tracked_.clear();
    }
    struct group_sink : detail::algo_sink {
        std::atomic<bool> cancelled{false};
        /* A child that has not started is skipped: the group was cancelled,
         * or a child of it threw since the last wait().  The second is
         * Taskflow's rule (a TaskGroup child's exception cancels the
         * children of its parent that have not started: of 100 children
         * that all throw, at most one per worker runs); before it, every
         * child ran, and wait() rethrew only after all of them had. */
        bool skip() const noexcept { return cancelled.load(std::memory_order_acquire) || stop(); }
        void rethrow_and_reset() {
            if (!failed.load(std::memory_order_acquire)) return;
            std::exception_ptr e = std::move(ex);
            ex = nullptr;
            failed.store(false, std::memory_order_relaxed);
            std::rethrow_exception(e);
        }
    };
    /* An async child's callable: skipped (its future throws weft::error
     * WEFT_ECANCELED) once the group is cancelled or a run() child threw. */
    template <class Fn>
    struct guarded {
        group_sink *sink;
        Fn f;
        typename detail::task_result_t<Fn>::type operator()(runtime &rt) {
            if (sink->skip())
                throw error(WEFT_ECANCELED, "weft::task_group::async",
                            sink->cancelled.load(std::memory_order_acquire)
                                ? "the group was cancelled before the task started"
                                : "a child of the group threw before the task started");
            return detail::invoke_task(f, rt.native());
        }
    };
    template <class Fn>
    struct holder {
        detail::fj_link link;
        group_sink *sink;
        Fn f;
        static int call(weft_ctx *ctx, void *p) noexcept {
            auto *h = static_cast<holder *>(p);
            detail::fj_child_scope scope;
            if (h->sink->skip()) return 0; /* cancel(), or a sibling threw: skipped */
            try {
                detail::invoke_task(h->f, ctx);
                return 0;
            } catch (...) {
                h->sink->capture();
                return task_threw;
            }
        }
    };
    detail::fj_owner own_;
    group_sink sink_;
    std::vector<weft_future *> tracked_;
    std::size_t size_ = 0;
    alignas(std::max_align_t) unsigned char buf_[256];
    detail::arena store_;
};

inline task_group executor::task_group() {
    weft_executor *ex = exec("weft::executor::task_group");
    weft_ctx *ctx = detail::current_ctx("weft::executor::task_group");
    if (weft_ctx_executor(ctx) != ex)
        throw error(WEFT_EINVAL, "weft::executor::task_group", "the running task belongs to another executor");
    return weft::task_group(ctx);
}

/* spawn(f): f runs as a child of the running task, maybe on another worker,
 * until the returned object's sync() (which returns f's value and rethrows its
 * exception).  Each object joins its own child: `auto x = spawn(a); auto y =
 * spawn(b); x.sync(); y.sync();` gives x a's value and y b's (x.sync() joins
 * y's child first, keeping its result in y).  No allocation: the callable lives
 * in the returned object, which stays where it was declared (neither copyable
 * nor movable).  Unsynced, its destructor syncs (dropping an exception).  Only
 * inside a task, and sync() only from that task (weft::error WEFT_EINVAL from
 * another, e.g. a child that captured the object by reference). */
template <class F>
class spawned {
public:
    using result_type = typename detail::task_result_t<F>::type;
    WEFT_HPP_TASK_CALLABLE_(F, "weft::spawn");
    static_assert(!std::is_reference_v<result_type>, "weft::spawn: a callable returning a reference is not supported: "
                                                     "return a pointer or a std::reference_wrapper");

    template <class G>
    spawned(weft_ctx *ctx, G &&g) : f_(std::forward<G>(g)) {
        own_.ctx = ctx;
        detail::check(detail::fj_spawn(own_, link_, &spawned::call, this), "weft::spawn");
        armed_ = true;
    }
    spawned(const spawned &) = delete;
    spawned &operator=(const spawned &) = delete;
    ~spawned() { detail::fj_join(own_); }

    /* Joins this object's child (whatever was spawned after it is joined
     * first, into its own object) and returns its value or rethrows its
     * exception.  Once only: weft::error (WEFT_EINVAL) the second time. */
    result_type sync() {
        if (!armed_) throw error(WEFT_EINVAL, "weft::spawned::sync", "already synced");
        detail::fj_check_owner(own_, "weft::spawned::sync");
        armed_ = false;
        detail::fj_join(own_);
        if (ex_) std::rethrow_exception(ex_);
        if constexpr (!std::is_void_v<result_type>) return std::move(*value_);
    }

private:
    static int call(weft_ctx *ctx, void *p) noexcept {
        auto *s = static_cast<spawned *>(p);
        detail::fj_child_scope scope;
        try {
            if constexpr (std::is_void_v<result_type>) detail::invoke_task(s->f_, ctx);
            else s->value_.emplace(detail::invoke_task(s->f_, ctx));
            return 0;
        } catch (...) {
            s->ex_ = std::current_exception();
            return task_threw;
        }
    }
    using stored = std::conditional_t<std::is_void_v<result_type>, char, result_type>;
    detail::fj_owner own_;
    detail::fj_link link_{};
    F f_;
    std::optional<stored> value_;
    std::exception_ptr ex_;
    bool armed_ = false; /* sync() not called yet */
};

template <class F>
spawned<std::decay_t<F>> spawn(F &&f) {
    return spawned<std::decay_t<F>>(detail::current_ctx("weft::spawn"), std::forward<F>(f));
}

/* ---- graphs -------------------------------------------------------------------------- */

/* The set of successors a multi-condition task picks: return one from a task
 * lambda (the successors' indices, in precede order). */
using branches = std::vector<int>;

class pipeline;

namespace detail {

template <class F>
struct task_holder {
    sink *s;
    F f;
};

/* A callable no bigger than a pointer and trivially copyable (a lambda
 * capturing one pointer or reference, or nothing) is packed into the task's
 * void* argument itself: no arena memory, and no extra cache line to load when
 * the task runs (the C API's fn + arg, exactly).  Its exceptions go to the
 * orphanage.  Subflows do not pack (their graphs are not walked).  Only a
 * callable invocable as const is packed: each call works on a fresh copy of
 * the argument's bytes, so a mutable lambda (`[i = 0]() mutable { ... }`)
 * would lose what it changed; it lives in the arena instead, and keeps its
 * state from call to call and run to run. */
template <class F>
constexpr bool packable_v = sizeof(F) <= sizeof(void *) && alignof(F) <= alignof(void *) &&
                            std::is_trivially_copyable_v<F> && std::is_trivially_destructible_v<F> &&
                            (std::is_invocable_v<const F &> || std::is_invocable_v<const F &, runtime &>);

template <class F>
void *pack(const F &f) noexcept {
    void *p = nullptr;
    if constexpr (!std::is_empty_v<F>) std::memcpy(&p, &f, sizeof(F)); /* an empty one has no bytes to keep */
    else (void)f;
    return p;
}

/* The callable of a task: unpacked from the argument, or in its holder. */
template <class F, bool Packed>
struct callable_ref {
    alignas(F) unsigned char buf[Packed ? sizeof(F) : 1];
    F *f;
    explicit callable_ref(void *p) noexcept {
        if constexpr (Packed) {
            if constexpr (!std::is_empty_v<F>) std::memcpy(buf, &p, sizeof(F));
            f = std::launder(reinterpret_cast<F *>(buf));
        } else {
            f = &static_cast<task_holder<F> *>(p)->f;
        }
    }
    static void capture(weft_ctx *ctx, void *p) noexcept {
        if constexpr (Packed) orphanage::get().add(ctx);
        else static_cast<task_holder<F> *>(p)->s->capture(weft_ctx_run(ctx));
    }
};

template <class F, bool Packed>
int static_tramp(weft_ctx *ctx, void *p) noexcept {
    callable_ref<F, Packed> c(p);
    try {
        invoke_task(*c.f, ctx);
        return 0;
    } catch (...) {
        c.capture(ctx, p);
        return task_threw;
    }
}

template <class F, bool Packed>
int cond_tramp(weft_ctx *ctx, void *p) noexcept {
    callable_ref<F, Packed> c(p);
    try {
        /* Negative: fails the run, as in C.  A wider or unsigned integer is
         * converted as Taskflow converts it (to int). */
        return static_cast<int>(invoke_task(*c.f, ctx));
    } catch (...) {
        c.capture(ctx, p);
        return task_threw;
    }
}

template <class F, bool Packed>
int multi_tramp(weft_ctx *ctx, void *p, weft_branches *out) noexcept {
    callable_ref<F, Packed> c(p);
    try {
        for (int i : invoke_task(*c.f, ctx))
            /* Out of range: none, as Taskflow; no memory (an index of 64 or
             * more): the task fails with WEFT_ENOMEM. */
            if (i >= 0 && weft_branches_add(out, static_cast<unsigned>(i)) == WEFT_ENOMEM) return WEFT_ENOMEM;
        return 0;
    } catch (...) {
        c.capture(ctx, p);
        return task_threw;
    }
}

/* A callable given by task::work: on the heap, owned by the task through a
 * weft_work (weft_task_set_shared_work), which deletes it when the task lets
 * it go.  It knows no sink (the task handle does not say whose graph it is
 * in): its exceptions go to the orphanage, taken by their run. */
template <class F>
struct work_holder {
    F f;
};

template <class F>
int work_tramp(weft_ctx *ctx, void *p) noexcept {
    try {
        invoke_task(static_cast<work_holder<F> *>(p)->f, ctx);
        return 0;
    } catch (...) {
        orphanage::get().add(ctx, true);
        return task_threw;
    }
}

} // namespace detail

template <class F>
task &task::work(F &&f) {
    using Fn = std::decay_t<F>;
    WEFT_HPP_TASK_CALLABLE_(Fn, "weft::task::work");
    static_assert(std::is_void_v<typename detail::task_result_t<Fn>::type> ||
                      std::is_same_v<typename detail::task_result_t<Fn>::type, detail::not_a_task>,
                  "weft::task::work: the callable must return void: a condition's or multi-condition's work "
                  "cannot be replaced (emplace a new task for it)");
    auto *h = new detail::work_holder<Fn>{std::forward<F>(f)}; /* a throwing copy changes nothing */
    weft_status st = WEFT_OK;
    weft_work *w = weft_work_create(&detail::work_tramp<Fn>, h,
                                    /* noexcept: weft calls it from its C frames (the work
                                     * replaced, the task erased, the graph cleared), which
                                     * do not unwind; a destructor of f that throws ended
                                     * there with weft's state half changed.  It terminates,
                                     * as wherever else weft destroys a callable. */
                                    [](void *p) noexcept { delete static_cast<detail::work_holder<Fn> *>(p); },
                                    &st);
    if (!w) {
        delete h;
        detail::check(st, "weft::task::work");
    }
    /* The creator's reference goes on the way out: after a success the task
     * holds the only other one; after a failure (the error, with the
     * message, is made first) it deletes h. */
    struct release {
        weft_work *w;
        ~release() { weft_work_release(w); }
    } guard{w};
    detail::check(weft_task_set_shared_work(t_, w), "weft::task::work");
    return *this;
}

/* What building a graph needs: the C graph, where its callables live, and where
 * its tasks' exceptions go.  taskflow and subflow are flow_builders (as in
 * Taskflow).  Every call on a moved-from taskflow throws weft::error
 * (WEFT_EINVAL), except native(), which returns NULL. */
class flow_builder {
    template <class>
    using task_of = task;

public:
    /* Adds a task for f (or one task per callable, returned as a tuple):
     *  - f(weft::subflow&): a subflow task;
     *  - f() -> int: a condition task (the successor to run, in precede order);
     *    any integer type, bool or unscoped enum too (bool: false runs
     *    successor 0, true 1);
     *  - f() -> weft::branches: a multi-condition task;
     *  - f() -> void: a static task.
     * f may also take a weft::runtime& (instead of nothing) for its context.
     * f is moved into the graph's arena. */
    template <class F>
    task emplace(F &&f);
    template <class F1, class F2, class... Fs>
    auto emplace(F1 &&f1, F2 &&f2, Fs &&...fs) {
        /* A braced list: its elements are made left to right (make_tuple's
         * arguments may be evaluated in any order, and were backwards). */
        return std::tuple<task, task, task_of<Fs>...>{emplace(std::forward<F1>(f1)), emplace(std::forward<F2>(f2)),
                                                      emplace(std::forward<Fs>(fs))...};
    }
    /* A task with no work (yet). */
    task placeholder() { return made(weft_placeholder(graph("weft::placeholder")), "weft::placeholder"); }
    /* A module task: runs `body` once as part of this graph's run (composed_of);
     * body must outlive the runs.  Also: a pipeline as a task. */
    task composed_of(taskflow &body);
    task composed_of(pipeline &pl);

    /* Algorithm tasks: run the algorithm on the executor running the graph.
     * Iterators and values are captured when the task is made; the body
     * (predicate, operator, comparator) is moved into the task, so a
     * move-only one works, as for emplace (they were copied, and one
     * holding a std::unique_ptr did not compile). */
    template <class It, class F>
    task for_each(It first, It last, F f, partitioner p = {}) {
        return emplace([first, last, f = std::move(f), p](runtime &rt) mutable {
            weft_algo_config c = p.config();
            detail::for_each(rt.native_executor(), first, last, f, &c);
        });
    }
    template <class B, class E, class S, class F>
    task for_each_index(B first, E last, S step, F f, partitioner p = {}) {
        using I = std::common_type_t<B, E, S>;
        index_range<I> r(detail::index_arg<I>(first), detail::index_arg<I>(last), detail::index_arg<I>(step));
        return emplace([r, f = std::move(f), p](runtime &rt) mutable {
            weft_algo_config c = p.config();
            detail::for_each_index(rt.native_executor(), r, f, &c);
        });
    }
    template <class I, class F>
    task for_each_by_index(index_range<I> r, F f, partitioner p = {}) {
        return emplace([r, f = std::move(f), p](runtime &rt) mutable {
            weft_algo_config c = p.config();
            detail::for_each_by_index(rt.native_executor(), r, f, &c);
        });
    }
    template <class It, class Out, class F>
    task transform(It first, It last, Out d_first, F op) {
        return emplace([first, last, d_first, op = std::move(op)](runtime &rt) mutable {
            detail::transform(rt.native_executor(), first, last, d_first, op);
        });
    }
    /* d_first[i] = op(first1[i], first2[i]) (Taskflow's binary transform). */
    template <class It1, class It2, class Out, class F>
    task transform(It1 first1, It1 last1, It2 first2, Out d_first, F op) {
        return emplace([first1, last1, first2, d_first, op = std::move(op)](runtime &rt) mutable {
            detail::transform2(rt.native_executor(), first1, last1, first2, d_first, op);
        });
    }
    /* result = result bop x0 bop x1 ... (Taskflow's reduce: result is a reference). */
    template <class It, class T, class BOp>
    task reduce(It first, It last, T &result, BOp bop) {
        return emplace([first, last, &result, bop = std::move(bop)](runtime &rt) mutable {
            auto id = [](const auto &x) { return x; };
            result = detail::transform_reduce(rt.native_executor(), first, last, result, bop, id);
        });
    }
    template <class It, class Cmp = std::less<>>
    task sort(It first, It last, Cmp cmp = {}) {
        return emplace([first, last, cmp = std::move(cmp)](runtime &rt) mutable { detail::sort(rt.native_executor(), first, last, cmp); });
    }
    template <class It, class Out, class Op>
    task inclusive_scan(It first, It last, Out d_first, Op op) {
        using T = typename std::iterator_traits<It>::value_type;
        return emplace([first, last, d_first, op = std::move(op)](runtime &rt) mutable {
            detail::scan<It, Out, T>(rt.native_executor(), first, last, d_first, std::nullopt, op, false);
        });
    }
    /* d_first[i] = init op x0 op ... op xi (Taskflow's inclusive_scan with an init). */
    template <class It, class Out, class Op, class T>
    task inclusive_scan(It first, It last, Out d_first, Op op, T init) {
        return emplace([first, last, d_first, op = std::move(op), init = std::move(init)](runtime &rt) mutable {
            detail::scan<It, Out, T>(rt.native_executor(), first, last, d_first, std::optional<T>(init), op, false);
        });
    }
    template <class It, class Out, class T, class Op>
    task exclusive_scan(It first, It last, Out d_first, T init, Op op) {
        return emplace([first, last, d_first, init = std::move(init), op = std::move(op)](runtime &rt) mutable {
            detail::scan<It, Out, T>(rt.native_executor(), first, last, d_first, std::optional<T>(init), op, true);
        });
    }
    /* result = the first iterator in [first, last) whose element satisfies pred
     * (find_if) or does not (find_if_not), else last (Taskflow's find_if:
     * result is a reference, written when the task runs). */
    template <class It, class R, class P>
    task find_if(It first, It last, R &result, P pred) {
        return emplace([first, last, &result, pred = std::move(pred)](runtime &rt) mutable {
            result = detail::iter_at(first, detail::find_first(rt.native_executor(), first, last, pred, true, "weft::find_if"));
        });
    }
    template <class It, class R, class P>
    task find_if_not(It first, It last, R &result, P pred) {
        return emplace([first, last, &result, pred = std::move(pred)](runtime &rt) mutable {
            result = detail::iter_at(first,
                                     detail::find_first(rt.native_executor(), first, last, pred, false, "weft::find_if_not"));
        });
    }
    /* result = the first smallest (min_element) or first largest (max_element)
     * element by cmp, else last (an empty range). */
    template <class It, class R, class Cmp = std::less<>>
    task min_element(It first, It last, R &result, Cmp cmp = {}) {
        return emplace([first, last, &result, cmp = std::move(cmp)](runtime &rt) mutable {
            result = detail::iter_at(first, detail::extreme(rt.native_executor(), first, last, cmp, false, "weft::min_element"));
        });
    }
    template <class It, class R, class Cmp = std::less<>>
    task max_element(It first, It last, R &result, Cmp cmp = {}) {
        return emplace([first, last, &result, cmp = std::move(cmp)](runtime &rt) mutable {
            result = detail::iter_at(first, detail::extreme(rt.native_executor(), first, last, cmp, true, "weft::max_element"));
        });
    }

    /* Chains the tasks: each precedes the next (Taskflow's linearize); all
     * edges or none. */
    void linearize(const std::vector<task> &tasks) { linearize(tasks.data(), tasks.size()); }
    void linearize(std::initializer_list<task> tasks) { linearize(tasks.begin(), tasks.size()); }

    /* Calls f(weft::task) for every task of the graph, in index order
     * (emplace order until a task is erased: see weft_taskflow_for_each_task)
     * (Taskflow's for_each_task).  An exception from f ends the walk and is
     * rethrown here (it never crosses the C walk's frames). */
    template <class F>
    void for_each_task(F &&f) const {
        static_assert(std::is_invocable_v<std::remove_reference_t<F> &, task>,
                      "weft::for_each_task: the visitor must be invocable as f(weft::task)");
        struct walk {
            std::remove_reference_t<F> *f;
            std::exception_ptr ex;
        } w{&f, nullptr};
        weft_status st = weft_taskflow_for_each_task(graph("weft::for_each_task"), [](weft_task t, void *arg) -> bool {
            auto *ww = static_cast<walk *>(arg);
            try {
                (*ww->f)(task(t));
                return true;
            } catch (...) {
                ww->ex = std::current_exception();
                return false;
            }
        }, &w);
        if (w.ex) std::rethrow_exception(w.ex);
        detail::check(st, "weft::for_each_task");
    }

    std::size_t num_tasks() const { return weft_taskflow_num_tasks(graph("weft::num_tasks")); }
    bool empty() const { return num_tasks() == 0; }
    weft_taskflow *native() const noexcept { return g_; }

    /* The graph in Graphviz DOT.  Written in memory (open_memstream where
     * the C library has it): std::tmpfile() needs a writable /tmp and a free
     * descriptor, and without them (a container with a read-only root, a
     * process at its descriptor limit) dump threw WEFT_ESYS. */
    std::string dump() const {
        (void)graph("weft::dump");
        std::string s;
#if defined(__linux__) || defined(__APPLE__) || defined(__FreeBSD__) || defined(__NetBSD__) || defined(__OpenBSD__)
        char *buf = nullptr;
        std::size_t len = 0;
        std::FILE *f = ::open_memstream(&buf, &len);
        if (!f) throw error(WEFT_ENOMEM, "weft::dump", "open_memstream failed");
        weft_status st = weft_taskflow_dump_dot(g_, f); /* g_ checked above */
        bool flushed = std::fclose(f) == 0;             /* buf and len are final now */
        struct freer {
            void operator()(char *p) const noexcept { std::free(p); }
        };
        std::unique_ptr<char, freer> owned(buf);
        if (st == WEFT_OK && !flushed) st = WEFT_ENOMEM; /* the last write could not grow the buffer */
        if (st == WEFT_OK && owned) s.assign(owned.get(), len);
#else
        std::FILE *f = std::tmpfile();
        if (!f) throw error(WEFT_ESYS, "weft::dump", "tmpfile failed");
        weft_status st = weft_taskflow_dump_dot(g_, f); /* g_ checked above */
        if (st == WEFT_OK) {
            std::rewind(f);
            char buf[4096];
            std::size_t n;
            while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
        }
        std::fclose(f);
#endif
        detail::check(st, "weft_taskflow_dump_dot");
        return s;
    }
    void dump(std::ostream &os) const { os << dump(); }

protected:
    flow_builder(weft_taskflow *g, detail::arena *a, detail::sink *s, bool pack,
                 const weft_future *run = nullptr) noexcept
        : g_(g), arena_(a), sink_(s), run_(run), pack_(pack) {}

    /* A module body's or pipeline's sink, searched at the end of each run: for
     * good from a taskflow, for the run only from a subflow (rebuilt each run,
     * so its bodies may change, and go, between runs). */
    void add_sink(detail::sink *child) {
        if (pack_) sink_->add_child(child);
        else sink_->add_transient(child, run_);
    }
    flow_builder(const flow_builder &) = default;
    flow_builder &operator=(const flow_builder &) = default;
    ~flow_builder() = default;

    weft_taskflow *graph(const char *call) const { return detail::live(g_, call); }

    void linearize(const task *ts, std::size_t n) {
        (void)graph("weft::linearize");
        std::vector<weft_task> nat;
        nat.reserve(n);
        for (std::size_t i = 0; i < n; ++i) nat.push_back(ts[i].native());
        detail::check(weft_linearize(nat.data(), n), "weft::linearize");
    }

    task made(weft_task t, const char *call) {
        if (weft_task_is_null(t))
            throw error(weft_taskflow_last_error(g_), call, weft_last_error_message());
        return task(t);
    }

    template <class Fn, bool Packed>
    task emplace_as(void *arg);

    weft_taskflow *g_;
    detail::arena *arena_;
    detail::sink *sink_;
    const weft_future *run_; /* a subflow's: the run its task belongs to (weft_ctx_run); NULL for a taskflow */
    bool pack_; /* a taskflow: small callables may be packed into the argument (not in subflows) */
};

namespace detail {
/* capture_now() before the submission of `run`, a run submitted through
 * executor::run* and not harvested yet; 0 for any other (defined after
 * class taskflow). */
inline std::uint64_t born_of(const weft_future *run) noexcept;
} // namespace detail

/* The handle a subflow task's lambda receives: a flow_builder for the graph
 * built while the task runs (it joins the task unless detached).  Valid only
 * during that call. */
class subflow : public flow_builder {
public:
    subflow(weft_subflow *sf, detail::arena *a, detail::sink *s, const weft_future *run = nullptr) noexcept
        : flow_builder(weft_subflow_graph(sf), a, s, false, run), sf_(sf) {}
    /* Not copyable, as Taskflow's Subflow: a copy kept after the task's
     * function returns would build into a graph that has already run.  Take
     * it by reference: [](weft::subflow &sf) { ... }. */
    subflow(const subflow &) = delete;
    subflow &operator=(const subflow &) = delete;
    /* Runs the graph built so far now and returns when it has finished.  If
     * the run has failed with an exception by then (a task of this graph, or
     * of a graph nested in it, threw; or another task of the run did, which
     * skipped this graph's remaining tasks as well), join() rethrows the
     * run's first exception, as Taskflow's join() rethrows its children's, so
     * the code after it does not go on as if the graph had run.  The run's
     * future rethrows it too: catching it here does not make the run succeed.
     * A run cancelled, or failed without an exception (a C task's code), is
     * not thrown here: check weft::runtime::cancelled() for that.  Called
     * from a task of this subflow's own graph while the subflow joins it:
     * weft::error WEFT_EDEADLK (the graph cannot wait for itself), as
     * weft_subflow_join; it returned at once before, not waiting. */
    void join() {
        detail::check(weft_subflow_join(sf_), "weft::subflow::join");
        joined_ = true;
        /* weft_subflow_join returns WEFT_OK when a task of the graph failed
         * (the C rule: the failure fails the run); an exception is looked up
         * only once the run is known to have failed, so a join that succeeds
         * takes no lock. */
        weft_ctx *ctx = weft_current_ctx();
        if (ctx && weft_ctx_cancelled(ctx) && sink_) {
            /* With the stamp the run's end uses (its submission's clock):
             * without it, an entry of an earlier run through the C API whose
             * future had this run's address and id (a new executor's ids
             * start at 1 again) was rethrown here, 17 joins in 20 in
             * cpp_hunt46, while get() rethrew the right one. */
            if (std::exception_ptr e = sink_->peek(run_, detail::born_of(run_))) std::rethrow_exception(e);
        }
    }
    /* The task's successors do not wait for this graph (it joins the run's
     * end).  weft::error WEFT_EINVAL after join(): a joined subflow cannot be
     * detached (as Taskflow). */
    void detach() { detail::check(weft_subflow_detach(sf_), "weft::subflow::detach"); }
    bool detached() const noexcept { return weft_subflow_detached(sf_); }
    /* Taskflow's joinable(): neither joined nor detached yet (join() or
     * detach() may still be called). */
    bool joinable() const noexcept { return !joined_ && !detached(); }
    /* Taskflow compatibility: weft always keeps the last graph (for dump). */
    void retain(bool) noexcept {}
    weft_subflow *native_subflow() const noexcept { return sf_; }

private:
    weft_subflow *sf_;
    bool joined_ = false;
};

namespace detail {

template <class F>
struct subflow_holder {
    sink *s;
    F f;
    arena children; /* this execution's subflow callables; cleared at the next */
    explicit subflow_holder(sink *sk, F &&fn) : s(sk), f(std::move(fn)) {}
    explicit subflow_holder(sink *sk, const F &fn) : s(sk), f(fn) {}
};

template <class F>
int subflow_tramp(weft_ctx *ctx, weft_subflow *sf, void *p) noexcept {
    auto *h = static_cast<subflow_holder<F> *>(p);
    h->children.clear(); /* the graph of the last execution has finished and was cleared */
    try {
        subflow sub(sf, &h->children, h->s, weft_ctx_run(ctx));
        if constexpr (std::is_invocable_v<F &, subflow &, runtime &>) {
            runtime rt(ctx);
            detail::call(h->f, sub, rt);
        } else {
            detail::call(h->f, sub);
        }
        return 0;
    } catch (...) {
        h->s->capture(weft_ctx_run(ctx));
        return task_threw;
    }
}

} // namespace detail

namespace detail {
/* A subflow task's callable: takes (subflow&) or (subflow&, runtime&), and
 * cannot be called with no argument.  A callable that also can (a std::bind
 * expression, which drops the arguments it has no placeholder for, or a
 * variadic generic lambda) is taken as f(), by its result as Taskflow takes
 * it: std::bind(&machine::pick, &m) returning int is a condition.  Taken as
 * a subflow, its result was dropped and every successor of that "condition"
 * ran. */
template <class F>
inline constexpr bool subflow_callable_v =
    !std::is_invocable_v<F &> && (std::is_invocable_v<F &, subflow &> || std::is_invocable_v<F &, subflow &, runtime &>);
} // namespace detail

template <class F>
task flow_builder::emplace(F &&f) {
    using Fn = std::decay_t<F>;
    (void)graph("weft::emplace"); /* before anything is stored in a moved-from taskflow's arena */
    if constexpr (detail::subflow_callable_v<Fn>) {
        auto *h = arena_->make<detail::subflow_holder<Fn>>(sink_, std::forward<F>(f));
        return made(weft_emplace_subflow(g_, &detail::subflow_tramp<Fn>, h), "weft::emplace (subflow)");
    } else {
        static_assert(detail::task_callable_v<Fn>,
                      "weft::emplace: the callable must be invocable as f(), f(weft::runtime&), f(weft::subflow&) "
                      "or f(weft::subflow&, weft::runtime&), as a non-const lvalue");
        if constexpr (detail::packable_v<Fn>) {
            if (pack_) return emplace_as<Fn, true>(detail::pack<Fn>(f));
        }
        return emplace_as<Fn, false>(
            arena_->make<detail::task_holder<Fn>>(detail::task_holder<Fn>{sink_, std::forward<F>(f)}));
    }
}

template <class Fn, bool Packed>
task flow_builder::emplace_as(void *arg) {
    using R = typename detail::task_result_t<Fn>::type;
    /* Any integral result is a condition (bool too: false picks successor 0,
     * true successor 1), as in Taskflow, whose condition is "invocable as
     * returning int"; so is an unscoped enum (`enum branch { left, right }`,
     * convertible to int: a condition in Taskflow, and before this a
     * static_assert here), and a reference to either (`int &`, a choice kept
     * in an object).  A scoped enum is not (no conversion, in Taskflow
     * either). */
    using V = std::remove_cv_t<std::remove_reference_t<R>>;
    if constexpr (std::is_integral_v<V> || (std::is_enum_v<V> && std::is_convertible_v<V, int>)) {
        return made(weft_emplace_condition(g_, &detail::cond_tramp<Fn, Packed>, arg), "weft::emplace (condition)");
    } else if constexpr (std::is_same_v<V, branches>) {
        return made(weft_emplace_multi_condition(g_, &detail::multi_tramp<Fn, Packed>, arg),
                    "weft::emplace (multi-condition)");
    } else {
        static_assert(std::is_void_v<R> || std::is_same_v<R, detail::not_a_task>, /* not_a_task: reported above */
                      "weft::emplace: a task returns void, an integer, bool or unscoped enum (condition) "
                      "or weft::branches");
        return made(weft_emplace(g_, &detail::static_tramp<Fn, Packed>, arg), "weft::emplace");
    }
}

/* ---- taskflow -------------------------------------------------------------------------
 * A graph built once and run many times.  Movable (its state is on the heap, so
 * task handles stay valid); the destructor waits for the runs submitted
 * through executor::run* (inside a task, on their futures, running other work
 * meanwhile: it never holds the worker), then for runs of native() submitted
 * through the C API (inside a task likewise, behind a cancelled run of its
 * own, which runs no task), and then frees the graph and its callables.  Destroying it from a task of one of those runs (or from work
 * that such a task's wait runs) would wait for that task itself: the
 * destructor then prints what happened to stderr and calls std::terminate
 * instead of hanging. */
class taskflow : public flow_builder {
public:
    explicit taskflow(const std::string &name = "") : taskflow(std::make_unique<state>(name)) {}
    taskflow(taskflow &&o) noexcept : flow_builder(o), st_(std::move(o.st_)) {
        o.g_ = nullptr;
        o.arena_ = nullptr;
        o.sink_ = nullptr;
    }
    taskflow &operator=(taskflow &&o) noexcept {
        if (this != &o) {
            st_ = std::move(o.st_);
            flow_builder::operator=(o);
            o.g_ = nullptr;
            o.arena_ = nullptr;
            o.sink_ = nullptr;
        }
        return *this;
    }
    taskflow(const taskflow &) = delete;
    taskflow &operator=(const taskflow &) = delete;
    ~taskflow() = default;

    std::string name() const { return weft_taskflow_name(graph("weft::taskflow::name")); }
    void name(const std::string &n) {
        detail::check(weft_taskflow_set_name(graph("weft::taskflow::name"), n.c_str()), "weft::taskflow::name");
    }
    /* Removes every task; task handles become invalid.  weft::error (WEFT_EBUSY) while it runs. */
    void clear() {
        (void)graph("weft::taskflow::clear");
        /* Refused before anything is dropped: the orphans of a running run's
         * packed tasks are that run's exception.  A run of this taskflow
         * through executor::run* is seen here; one that uses it as a module
         * body (another taskflow's run) only by weft_taskflow_clear, so the
         * orphans of its tasks are dropped only once that has succeeded. */
        if (st_->busy()) throw error(WEFT_EBUSY, "weft::taskflow::clear", "a run of the taskflow is in flight");
        std::vector<const void *> nodes;
        if (!detail::orphanage::get().empty()) nodes = detail::orphanage::nodes_of(g_);
        detail::check(weft_taskflow_clear(g_), "weft::taskflow::clear");
        if (!nodes.empty()) detail::orphanage::get().drop(nodes);
        st_->store.clear();
        st_->clears.fetch_add(1, std::memory_order_relaxed);
        std::lock_guard<std::mutex> lock(st_->errs.mu);
        st_->errs.children.clear();
        st_->errs.transient.clear();
    }
    /* Removes the edges from -> to (Taskflow's remove_dependency): weft::error
     * WEFT_ENOENT if there is none, WEFT_EBUSY while the taskflow runs. */
    void remove_dependency(task from, task to) {
        (void)graph("weft::taskflow::remove_dependency");
        detail::check(weft_edge_remove(from.native(), to.native()), "weft::taskflow::remove_dependency");
    }
    /* Checks the graph for a strong cycle (weft::error WEFT_ECYCLE). */
    void validate() {
        detail::check(weft_taskflow_validate(graph("weft::taskflow::validate"), nullptr), "weft::taskflow::validate");
    }

    /* Private to executor: a run's bookkeeping. */
    struct state {
        weft_taskflow *tf = nullptr;
        detail::arena store;
        detail::sink errs;
        std::mutex mu;
        std::condition_variable cv;
        std::size_t in_flight = 0;
        std::vector<detail::state_base *> runs; /* submitted and not harvested (each has run_f) */
        std::vector<std::uint64_t> submitting;  /* borns of runs between begin_run and track */
        /* Every live state, on one list, for detail::born_of (subflow::join
         * of a failed run: a cold path); guarded by registry().mu, which is
         * taken before a state's mu, never after. */
        state *reg_prev = nullptr, *reg_next = nullptr;
        /* Which taskflow this is, for the pipelines it composes (~pipeline:
         * reaching_run): unique in the process, and how many clear()s it has
         * had (after one, its runs no longer reach what it composed). */
        std::uint64_t serial = next_serial();
        std::atomic<std::uint64_t> clears{0};
        static std::uint64_t next_serial() {
            static std::atomic<std::uint64_t> n{0};
            return ++n;
        }
        struct registry_t {
            std::mutex mu;
            state *head = nullptr;
        };
        static registry_t &registry() {
            static registry_t *r = new registry_t; /* never destroyed: taskflows may outlive statics */
            return *r;
        }
        explicit state(const std::string &name) {
            weft_status st = WEFT_OK;
            tf = weft_taskflow_create(name.empty() ? nullptr : name.c_str(), &st);
            if (!tf) throw error(st, "weft_taskflow_create", weft_last_error_message());
            errs.graph = tf;
            registry_t &r = registry();
            std::lock_guard<std::mutex> lock(r.mu);
            reg_next = r.head;
            if (r.head) r.head->reg_prev = this;
            r.head = this;
        }
        ~state() {
            {
                std::unique_lock<std::mutex> lock(mu);
                /* Inside a task, a condition-variable wait would hold the
                 * worker while the runs need it (one worker: for ever); the
                 * runs' own futures are waited on instead, which runs other
                 * work meanwhile.  Then only the short completion callback
                 * (on the thread that completed the run) is left. */
                while (weft_current_ctx() && in_flight != 0) {
                    if (runs.empty()) {
                        /* A run submitted but not listed yet: submit_run lists
                         * it (track) right after weft_run returns, on the
                         * submitting thread, and its task may already be this
                         * one.  Waiting on in_flight alone then hung for ever
                         * (cpp_taskflow_destroyed_by_its_own_task..., 1 run in
                         * 3 under ASan). */
                        cv.wait(lock, [this] { return !runs.empty() || in_flight == 0; });
                        continue;
                    }
                    detail::state_base *r = runs.back();
                    r->retain(); /* listed: its callback has not released it yet */
                    lock.unlock();
                    /* WEFT_EDEADLK: this task is one of that run's (or runs
                     * it); the run can only end after the task returns, so
                     * the wait below would never end.  A destructor cannot
                     * report it, and carrying on would free the callable that
                     * is running: stop with a message, as std::thread's
                     * destructor does for a joinable thread. */
                    if (weft_future_wait(r->run_f) == WEFT_EDEADLK) detail::own_run_destroyed(tf);
                    lock.lock();
                    cv.wait(lock, [&] { return std::find(runs.begin(), runs.end(), r) == runs.end(); });
                    lock.unlock();
                    r->release();
                    lock.lock();
                }
                cv.wait(lock, [this] { return in_flight == 0; });
            }
            if (!detail::orphanage::get().empty()) (void)detail::orphanage::get().take(tf); /* unharvested: drop */
            /* Runs queued through the C API directly are not counted: wait them out. */
            while (weft_taskflow_destroy(tf) == WEFT_EBUSY) wait_out_c_runs();
            registry_t &r = registry();
            std::lock_guard<std::mutex> lock(r.mu);
            if (reg_prev) reg_prev->reg_next = reg_next;
            else r.head = reg_next;
            if (reg_next) reg_next->reg_prev = reg_prev;
        }
        /* One step of waiting for runs of tf that went through the C API (on
         * native()).  Off the workers, a yield.  Inside a task, a yield loop
         * would hold the worker those runs need (one worker: a hang); so a run
         * of tf is queued here and cancelled at once: it runs no task, but
         * runs of a taskflow go one at a time, so it ends only after the runs
         * queued before it, and waiting on its future runs other work
         * meanwhile, those runs included.  From a task of one of those runs
         * (EDEADLK) the wait could never end: stop with a message, as for a
         * run through executor::run*. */
        void wait_out_c_runs() {
            weft_ctx *ctx = weft_current_ctx();
            weft_future *f = nullptr;
            if (!ctx || weft_run(weft_ctx_executor(ctx), tf, &f) != WEFT_OK) {
                std::this_thread::yield(); /* no memory to queue one: try again */
                return;
            }
            (void)weft_future_cancel(f);
            weft_status st = weft_future_wait(f);
            bool deadlock = st == WEFT_EDEADLK && !weft_future_ready(f);
            weft_future_destroy(f);
            if (deadlock) detail::own_run_destroyed(tf);
        }
        /* A run stamped `born` is being submitted: listed in `submitting`
         * until track (or end_run on a failure), for detail::born_of. */
        void begin_run(std::uint64_t born) {
            std::lock_guard<std::mutex> lock(mu);
            submitting.push_back(born);
            ++in_flight;
        }
        /* The run of r (stamped born) was submitted: listed until its
         * callback's end_run(r). */
        void track(detail::state_base *r, std::uint64_t born) {
            std::lock_guard<std::mutex> lock(mu);
            runs.push_back(r);
            drop_submitting(born);
            cv.notify_all(); /* a destructor inside the run's own task waits for it (~state) */
        }
        /* born: a submission that failed before track. */
        void end_run(detail::state_base *r = nullptr, std::uint64_t born = 0) {
            std::lock_guard<std::mutex> lock(mu);
            if (r) runs.erase(std::remove(runs.begin(), runs.end(), r), runs.end());
            else drop_submitting(born);
            --in_flight;
            cv.notify_all();
        }
        void drop_submitting(std::uint64_t born) noexcept {
            auto it = std::find(submitting.begin(), submitting.end(), born);
            if (it != submitting.end()) submitting.erase(it);
        }
        /* A run submitted through executor::run* has not been harvested yet. */
        bool busy() {
            std::lock_guard<std::mutex> lock(mu);
            return in_flight != 0;
        }
    };
    state *state_() const noexcept { return st_.get(); }
    /* Private: the state, or weft::error for a moved-from taskflow. */
    state *live_state_(const char *call) const { return detail::live(st_.get(), call); }

private:
    explicit taskflow(std::unique_ptr<state> st)
        : flow_builder(st->tf, &st->store, &st->errs, true), st_(std::move(st)) {}
    std::unique_ptr<state> st_;
};

inline task flow_builder::composed_of(taskflow &body) {
    taskflow::state *bs = body.live_state_("weft::composed_of");
    task t = made(weft_emplace_module(graph("weft::composed_of"), bs->tf), "weft::composed_of");
    add_sink(&bs->errs);
    return t;
}

/* ---- runs -------------------------------------------------------------------------------- */
namespace detail {

struct run_state : value_state<void> {
    taskflow::state *flow;
    std::uint64_t born = 0; /* capture_now() before the submission (see capture_clock) */
    explicit run_state(taskflow::state *f) noexcept : value_state<void>(2, false), flow(f) {}
};

template <class P>
struct run_until_state : run_state {
    P pred;
    template <class Q>
    run_until_state(taskflow::state *f, Q &&q) : run_state(f), pred(std::forward<Q>(q)) {}
    /* noexcept, as state_base's: implicit, it took P's noexcept(false) (a
     * lambda capturing an object whose destructor may throw) and did not
     * compile ("looser exception specification").  A throw from it now
     * terminates, as a throwing destructor does wherever weft destroys a
     * callable (std::function requires destructors that do not throw). */
    ~run_until_state() noexcept override {}
};

/* The run is listed (track) only after weft_run returns, and its tasks may
 * have reached a join by then (under TSan, 6 joins in 20 did, with the
 * submitting thread slowed): while a submission stamped no later than now
 * (ours among them, if the run is not listed yet) is still between
 * begin_run and track, this waits for it (a few instructions of that
 * thread; weft_run runs no task inline, so it is never this thread's).
 * Later submissions cannot be ours and are not waited for. */
inline std::uint64_t born_of(const weft_future *run) noexcept {
    if (!run) return 0;
    const std::uint64_t now = capture_now();
    taskflow::state::registry_t &reg = taskflow::state::registry();
    for (;;) {
        bool pending = false;
        {
            std::lock_guard<std::mutex> lock(reg.mu);
            for (taskflow::state *s = reg.head; s; s = s->reg_next) {
                std::lock_guard<std::mutex> l(s->mu);
                for (state_base *r : s->runs)
                    if (r->run_f == run) return static_cast<run_state *>(r)->born; /* listed: its future is alive */
                for (std::uint64_t b : s->submitting)
                    if (b <= now) pending = true;
            }
        }
        if (!pending) return 0; /* a run through the C API: no stamp */
        std::this_thread::yield();
    }
}

/* Runs on the thread that completed the run, right after its future became
 * ready: takes the exception, then lets the taskflow go (its destructor may run
 * as soon as end_run returns: nothing touches `flow` after it). */
inline void run_done(weft_future *f, weft_status status, void *arg) {
    auto *st = static_cast<run_state *>(arg);
    std::exception_ptr e = st->flow->errs.take(status != WEFT_OK, f, st->born);
    if (!st->ex) st->ex = std::move(e);
    taskflow::state *flow = st->flow;
    /* The run stops counting as the taskflow's first: wait()/get() return on
     * harvested, and a clear() (or any edit) straight after must not find
     * the finished run still in flight (it threw WEFT_EBUSY now and then). */
    flow->end_run(st);
    st->harvest_and_release();
}

template <class Submit>
future<void> submit_run(taskflow &tf, run_state *st, Submit &&submit, const char *call) {
    taskflow::state *flow = tf.state_();
    st->born = capture_now(); /* before any task of the run can throw */
    try {
        flow->begin_run(st->born);
    } catch (...) {
        delete st; /* no memory to list it: nothing submitted */
        throw;
    }
    weft_future *f = nullptr;
    weft_status s = submit(&f);
    if (s != WEFT_OK) {
        flow->end_run(nullptr, st->born);
        delete st;
        throw error(s, call, weft_last_error_message());
    }
    st->run_f = f;
    try {
        flow->track(st, st->born);
    } catch (...) {
        weft_future_destroy(f); /* no memory to list it: the run is detached */
        st->run_f = nullptr;
        flow->end_run(nullptr, st->born);
        delete st;
        throw;
    }
    if (weft_future_then(f, &run_done, st) != WEFT_OK) std::terminate(); /* only ever registered here */
    future<void> fut(f, st);
    fut.mark_run_();
    return fut;
}

} // namespace detail

inline future<void> executor::run(taskflow &tf) {
    weft_executor *ex = exec("weft::executor::run");
    auto *st = new detail::run_state(tf.live_state_("weft::executor::run"));
    return detail::submit_run(tf, st, [&](weft_future **f) { return weft_run(ex, tf.native(), f); },
                               "weft::executor::run");
}

inline future<void> executor::run_n(taskflow &tf, std::uint64_t n) {
    weft_executor *ex = exec("weft::executor::run_n");
    auto *st = new detail::run_state(tf.live_state_("weft::executor::run_n"));
    return detail::submit_run(tf, st, [&](weft_future **f) { return weft_run_n(ex, tf.native(), n, f); },
                               "weft::executor::run_n");
}

template <class P>
future<void> executor::run_until(taskflow &tf, P &&pred) {
    static_assert(detail::predicate_v<std::decay_t<P>>(),
                  "weft::executor::run_until: the predicate must be invocable as pred(), as a non-const lvalue, "
                  "returning bool (or what converts to bool)");
    using S = detail::run_until_state<std::decay_t<P>>;
    weft_executor *ex = exec("weft::executor::run_until");
    auto *st = new S(tf.live_state_("weft::executor::run_until"), std::forward<P>(pred));
    weft_pred_fn fn = [](void *arg) -> bool {
        auto *s = static_cast<S *>(arg);
        try {
            return static_cast<bool>(s->pred());
        } catch (...) {
            if (!s->ex) s->ex = std::current_exception();
            return true; /* stop: get() rethrows */
        }
    };
    return detail::submit_run(tf, st, [&](weft_future **f) { return weft_run_until(ex, tf.native(), fn, st, f); },
                               "weft::executor::run_until");
}

inline void executor::corun(taskflow &tf) {
    /* Its errors name corun (they named weft::executor::run, from the
     * submission, or weft::future::wait). */
    weft_executor *ex = exec("weft::executor::corun");
    auto *st = new detail::run_state(tf.live_state_("weft::executor::corun"));
    future<void> f = detail::submit_run(tf, st, [&](weft_future **out) { return weft_run(ex, tf.native(), out); },
                                        "weft::executor::corun");
    /* From a task of tf (or of a graph nested in a run of tf) the wait is
     * refused at once (WEFT_EDEADLK: the run queues behind the caller's), but
     * the run was submitted: it would execute once the caller's run ended,
     * and one whose task coruns again, for ever.  weft_run_and_wait refuses
     * before submitting; here the queued run is cancelled, so that it runs
     * no task, and get() throws the EDEADLK. */
    if (weft_future_wait(f.native()) == WEFT_EDEADLK && !weft_future_ready(f.native())) (void)f.cancel();
    f.wait_as_("weft::executor::corun");
}

namespace detail {
template <class T, class F>
struct async_state : value_state<T> {
    F f;
    template <class G>
    async_state(int nrefs, G &&g) : value_state<T>(nrefs, true), f(std::forward<G>(g)) {}
    /* noexcept, as state_base's (see run_until_state): async, silent_async,
     * dependent_async and task_group::async of a callable whose destructor is
     * noexcept(false) did not compile. */
    ~async_state() noexcept override {}

    static int call(weft_ctx *ctx, void *p) noexcept {
        auto *st = static_cast<async_state *>(p);
        st->started.store(true, std::memory_order_release);
        int rc = 0;
        try {
            if constexpr (std::is_void_v<T>) invoke_task(st->f, ctx);
            else st->value.emplace(invoke_task(st->f, ctx));
        } catch (...) {
            st->ex = std::current_exception();
            rc = task_threw;
        }
        st->release(); /* the task's reference */
        return rc;
    }
};
} // namespace detail

template <class F>
auto executor::async(F &&f) -> future<typename detail::task_result_t<std::decay_t<F>>::type> {
    using Fn = std::decay_t<F>;
    WEFT_HPP_TASK_CALLABLE_(Fn, "weft::executor::async");
    using T = typename detail::task_result_t<Fn>::type;
    using S = detail::async_state<T, Fn>;
    weft_executor *ex = exec("weft::executor::async");
    auto *st = new S(2, std::forward<F>(f));
    weft_future *out = nullptr;
    weft_status s = weft_async(ex, &S::call, st, &out);
    if (s != WEFT_OK) {
        delete st;
        throw error(s, "weft::executor::async", weft_last_error_message());
    }
    return future<T>(out, st);
}

template <class F, class... Ds>
auto executor::dependent_async(F &&f, const future<Ds> &...deps)
    -> future<typename detail::task_result_t<std::decay_t<F>>::type> {
    using Fn = std::decay_t<F>;
    WEFT_HPP_TASK_CALLABLE_(Fn, "weft::executor::dependent_async");
    using T = typename detail::task_result_t<Fn>::type;
    using S = detail::async_state<T, Fn>;
    weft_future *const d[] = {deps.native()..., nullptr}; /* never empty */
    weft_executor *ex = exec("weft::executor::dependent_async");
    auto *st = new S(2, std::forward<F>(f));
    weft_future *out = nullptr;
    weft_status s = weft_dependent_async(ex, &S::call, st, d, sizeof...(Ds), &out);
    if (s != WEFT_OK) {
        delete st;
        throw error(s, "weft::executor::dependent_async", weft_last_error_message());
    }
    return future<T>(out, st);
}

template <class F, class... Ds>
void executor::silent_dependent_async(F &&f, const future<Ds> &...deps) {
    using Fn = std::decay_t<F>;
    WEFT_HPP_TASK_CALLABLE_(Fn, "weft::executor::silent_dependent_async");
    using T = typename detail::task_result_t<Fn>::type;
    using S = detail::async_state<T, Fn>;
    weft_future *const d[] = {deps.native()..., nullptr}; /* never empty */
    weft_executor *ex = exec("weft::executor::silent_dependent_async");
    auto *st = new S(1, std::forward<F>(f)); /* the task's reference only: no future */
    weft_status s = weft_dependent_async(ex, &S::call, st, d, sizeof...(Ds), nullptr);
    if (s != WEFT_OK) {
        delete st;
        throw error(s, "weft::executor::silent_dependent_async", weft_last_error_message());
    }
}

namespace detail {
/* The range forms' submission: fn as a dependent async task after the n = d.size() - 1
 * futures of d (detail::native_futures), with a future in *out, or none (out NULL:
 * the task's reference only).  Throws weft::error named `who`. */
template <class T, class Fn, class F>
async_state<T, Fn> *submit_dependent(weft_executor *ex, F &&f, const std::vector<weft_future *> &d,
                                     weft_future **out, const char *who) {
    using S = async_state<T, Fn>;
    auto *st = new S(out ? 2 : 1, std::forward<F>(f));
    weft_status s = weft_dependent_async(ex, &S::call, st, d.data(), d.size() - 1, out);
    if (s != WEFT_OK) {
        delete st;
        throw error(s, who, weft_last_error_message());
    }
    return st;
}
} // namespace detail

template <class F, class It, class>
auto executor::dependent_async(F &&f, It first, It last)
    -> future<typename detail::task_result_t<std::decay_t<F>>::type> {
    using Fn = std::decay_t<F>;
    WEFT_HPP_TASK_CALLABLE_(Fn, "weft::executor::dependent_async");
    using T = typename detail::task_result_t<Fn>::type;
    weft_executor *ex = exec("weft::executor::dependent_async");
    weft_future *out = nullptr;
    auto *st = detail::submit_dependent<T, Fn>(ex, std::forward<F>(f), detail::native_futures(first, last), &out,
                                               "weft::executor::dependent_async");
    return future<T>(out, st);
}

template <class F, class It, class>
void executor::silent_dependent_async(F &&f, It first, It last) {
    using Fn = std::decay_t<F>;
    WEFT_HPP_TASK_CALLABLE_(Fn, "weft::executor::silent_dependent_async");
    using T = typename detail::task_result_t<Fn>::type;
    weft_executor *ex = exec("weft::executor::silent_dependent_async");
    (void)detail::submit_dependent<T, Fn>(ex, std::forward<F>(f), detail::native_futures(first, last), nullptr,
                                          "weft::executor::silent_dependent_async");
}

template <class F>
void executor::silent_async(F &&f) {
    using Fn = std::decay_t<F>;
    WEFT_HPP_TASK_CALLABLE_(Fn, "weft::executor::silent_async");
    using T = typename detail::task_result_t<Fn>::type;
    using S = detail::async_state<T, Fn>;
    weft_executor *ex = exec("weft::executor::silent_async");
    auto *st = new S(1, std::forward<F>(f));
    weft_status s = weft_silent_async(ex, &S::call, st);
    if (s != WEFT_OK) {
        delete st;
        throw error(s, "weft::executor::silent_async", weft_last_error_message());
    }
}

template <class F>
auto executor::run_root(F &&f) -> typename detail::task_result_t<std::decay_t<F>>::type {
    using Fn = std::decay_t<F>;
    WEFT_HPP_TASK_CALLABLE_(Fn, "weft::executor::run_root");
    using T = typename detail::task_result_t<Fn>::type;
    static_assert(!std::is_reference_v<T>, "weft::executor::run_root: a callable returning a reference is not "
                                           "supported: return a pointer or a std::reference_wrapper");
    struct root {
        Fn &f;
        std::optional<std::conditional_t<std::is_void_v<T>, char, T>> value;
        std::exception_ptr ex;
    };
    weft_executor *ex = exec("weft::executor::run_root");
    Fn fn(std::forward<F>(f));
    root r{fn, {}, {}};
    weft_task_fn call = [](weft_ctx *ctx, void *p) noexcept -> int {
        auto *rr = static_cast<root *>(p);
        try {
            if constexpr (std::is_void_v<T>) detail::invoke_task(rr->f, ctx);
            else rr->value.emplace(detail::invoke_task(rr->f, ctx));
            return 0;
        } catch (...) {
            rr->ex = std::current_exception();
            return task_threw;
        }
    };
    int result = 0;
    weft_status s = weft_run_root_status(ex, call, &r, &result);
    if (r.ex) std::rethrow_exception(r.ex);
    if (s != WEFT_OK) throw error(s, "weft::executor::run_root", weft_last_error_message());
    if constexpr (!std::is_void_v<T>) return std::move(*r.value);
}

/* ---- pipelines ----------------------------------------------------------------------------
 * weft::pipeline pl(lines, weft::pipe{weft::pipe_type::serial, [&](weft::pipeflow& pf) {...}}, ...);
 * taskflow.composed_of(pl);     // Taskflow's Pipeline and Pipe.
 * A pipeline must outlive every run of each taskflow that composes it (as
 * weft_pipeline_emplace requires), and those taskflows' clear() or
 * destruction (their runs' ends search its exceptions).  Declare it before
 * the taskflow that composes it (so that it is destroyed after it, whose
 * destructor waits for its runs), or wait for those runs' futures first.
 * Unlike ~taskflow, ~pipeline cannot wait: it does not know the runs that
 * will reach it, and the taskflows that composed it keep pointing at it.
 * Destroyed (or move-assigned over) while a run that can reach it is in
 * flight, it prints what happened to stderr and calls std::terminate, as
 * std::thread's destructor does for a joinable thread: carrying on would free
 * the stages' callables under the workers running them, or before a run that
 * will call them.  Such a run is one whose task is running it, or any run
 * submitted and not finished (queued, or going with the pipeline's task still
 * ahead; through executor::run* or weft_run* on native()) of a weft::taskflow
 * that composed it and has not been cleared since, counting a run of another
 * taskflow that has that one as a module body (weft_taskflow_num_runs).
 * Composed into a subflow's graph, only its own running is seen.  Movable
 * (its state is on the heap: a taskflow that composed it keeps working after
 * the move). */
enum class pipe_type { serial = WEFT_STAGE_SERIAL, parallel = WEFT_STAGE_PARALLEL };

/* What a stage receives: its token, line and stage; valid during the call. */
class pipeflow {
public:
    explicit pipeflow(weft_pipeflow *pf) noexcept : pf_(pf) {}
    std::size_t token() const noexcept { return static_cast<std::size_t>(weft_pipeflow_token(pf_)); }
    std::size_t line() const noexcept { return weft_pipeflow_line(pf_); }
    std::size_t pipe() const noexcept { return weft_pipeflow_stage(pf_); }
    /* From the first stage only: no more tokens (this one is not one). */
    void stop() { detail::check(weft_pipeflow_stop(pf_), "weft::pipeflow::stop"); }
    weft_pipeflow *native() const noexcept { return pf_; }

private:
    weft_pipeflow *pf_;
};

template <class F>
struct pipe {
    /* As for tasks (WEFT_HPP_TASK_CALLABLE_): a stage that cannot be called
     * so stops here, not with "no match for call" inside pipeline. */
    static_assert(std::is_invocable_v<F &, pipeflow &>,
                  "weft::pipe: a stage must be invocable as f(weft::pipeflow&) (Taskflow's tf::Pipeflow&), as a "
                  "non-const lvalue");
    pipe_type type;
    F callable;
    pipe(pipe_type t, F f) : type(t), callable(std::move(f)) {}
};

class pipeline {
public:
    template <class... Fs>
    explicit pipeline(std::size_t num_lines, pipe<Fs>... pipes) : st_(std::make_unique<state>()) {
        static_assert(sizeof...(Fs) > 0, "a pipeline has at least one pipe");
        std::vector<weft_stage> stages;
        stages.reserve(sizeof...(Fs));
        (add(stages, std::move(pipes)), ...);
        weft_status s = WEFT_OK;
        st_->p = weft_pipeline_create(num_lines, stages.data(), stages.size(), &s);
        if (!st_->p) throw error(s, "weft_pipeline_create", weft_last_error_message());
    }
    pipeline(pipeline &&) noexcept = default;
    pipeline &operator=(pipeline &&) noexcept = default;
    pipeline(const pipeline &) = delete;
    pipeline &operator=(const pipeline &) = delete;
    ~pipeline() = default;

    /* Every call on a moved-from pipeline throws weft::error (WEFT_EINVAL),
     * except native(), which returns NULL. */
    std::size_t num_lines() const { return weft_pipeline_num_lines(live_("weft::pipeline::num_lines")); }
    std::size_t num_pipes() const { return weft_pipeline_num_stages(live_("weft::pipeline::num_pipes")); }
    std::size_t num_tokens() const {
        return static_cast<std::size_t>(weft_pipeline_num_tokens(live_("weft::pipeline::num_tokens")));
    }
    /* Token numbers restart at 0 on the next run. */
    void reset() { detail::check(weft_pipeline_reset(live_("weft::pipeline::reset")), "weft::pipeline::reset"); }
    weft_pipeline *native() const noexcept { return st_ ? st_->p : nullptr; }
    /* Private: the pipeline's sink and handle (weft::error when moved from). */
    detail::sink *sink_() const noexcept { return &st_->sink; }
    weft_pipeline *live_(const char *call) const { return detail::live(st_.get(), call)->p; }
    /* Private: composed_of on graph g (recorded when g is a weft::taskflow's). */
    void used_by_(weft_taskflow *g) {
        taskflow::state::registry_t &r = taskflow::state::registry();
        std::lock_guard<std::mutex> lock(r.mu);
        for (taskflow::state *t = r.head; t; t = t->reg_next) {
            if (t->tf != g) continue;
            std::uint64_t c = t->clears.load(std::memory_order_relaxed);
            for (const state::user &u : st_->users)
                if (u.tf == g && u.serial == t->serial && u.clears == c) return;
            try {
                st_->users.push_back(state::user{g, t->serial, c});
            } catch (const std::bad_alloc &) {
                /* The task is made: without the record, only the check of
                 * ~pipeline for this taskflow's queued runs is lost. */
            }
            return;
        }
    }

private:
    struct state {
        weft_pipeline *p = nullptr;
        detail::arena arena;
        detail::sink sink;
        /* The taskflows that composed it (composed_of on a weft::taskflow):
         * each by its graph, serial and clear() count, so that one destroyed
         * or cleared since (or another at the same address) is not taken for
         * it. */
        struct user {
            weft_taskflow *tf;
            std::uint64_t serial, clears;
        };
        std::vector<user> users;
        /* A taskflow that composed it and still does, with a run submitted and
         * not finished (queued or going, through executor::run* or the C API,
         * or as a module body of another taskflow's run): that run will reach
         * the pipeline: true, with its name ("" if none) in *name. */
        bool reaching_run(std::string *name) const {
            if (users.empty()) return false;
            taskflow::state::registry_t &r = taskflow::state::registry();
            std::lock_guard<std::mutex> lock(r.mu);
            for (const user &u : users)
                for (taskflow::state *t = r.head; t; t = t->reg_next) {
                    if (t->tf != u.tf || t->serial != u.serial) continue;
                    if (t->clears.load(std::memory_order_relaxed) != u.clears) break;
                    if (!t->busy() && weft_taskflow_num_runs(t->tf) == 0) break;
                    *name = weft_taskflow_name(t->tf);
                    return true;
                }
            return false;
        }
        ~state() {
            if (!p) return;
            std::string name;
            bool reached = reaching_run(&name);
            /* Reached: it is not freed; reset only tells whether its task is
             * the one running it (EBUSY), for the message. */
            weft_status st = reached ? weft_pipeline_reset(p) : weft_pipeline_destroy(p);
            if (!reached && st != WEFT_EBUSY) return;
            if (st == WEFT_EBUSY)
                std::fprintf(stderr,
                             "weft::pipeline destroyed while it runs: its stages would run on freed memory; "
                             "destroy it after the runs of the taskflows that compose it\n");
            else
                std::fprintf(stderr,
                             "weft::pipeline destroyed while a run of taskflow '%s', which composes it, is queued "
                             "or going: that run would use freed memory; destroy it after the runs of the "
                             "taskflows that compose it\n",
                             name.c_str());
            std::terminate();
        }
    };
    template <class F>
    struct holder {
        detail::sink *s;
        F f;
        static int call(weft_pipeflow *pf, void *arg) noexcept {
            auto *h = static_cast<holder *>(arg);
            try {
                pipeflow p(pf);
                detail::call(h->f, p);
                return 0;
            } catch (...) {
                /* Kept for the run the pipeline's task is part of: a failed
                 * run of another taskflow composing this pipeline must not
                 * take it (weft_current_ctx() is no guide here: a stage runs
                 * on any worker). */
                h->s->capture(weft_pipeflow_run(pf));
                return task_threw;
            }
        }
    };
    template <class F>
    void add(std::vector<weft_stage> &stages, pipe<F> &&p) {
        auto *h = st_->arena.make<holder<F>>(holder<F>{&st_->sink, std::move(p.callable)});
        weft_stage s{};
        s.kind = static_cast<weft_stage_kind>(p.type);
        s.fn = &holder<F>::call;
        s.arg = h;
        stages.push_back(s);
    }
    std::unique_ptr<state> st_;
};

inline task flow_builder::composed_of(pipeline &pl) {
    task t = made(weft_pipeline_emplace(graph("weft::composed_of"), pl.live_("weft::composed_of")),
                  "weft::composed_of (pipeline)");
    add_sink(pl.sink_());
    pl.used_by_(g_);
    return t;
}

/* ---- algorithms over an executor ----------------------------------------------------------- */

template <class It, class F, class = std::enable_if_t<!detail::is_range<It>::value>>
void for_each(executor &ex, It first, It last, F f, partitioner p = {}) {
    weft_algo_config c = p.config();
    detail::for_each(ex.exec("weft algorithm"), first, last, f, &c);
}
template <class R, class F, class = std::enable_if_t<detail::is_range<R>::value>>
void for_each(executor &ex, R &&r, F f, partitioner p = {}) {
    weft::for_each(ex, std::begin(r), std::end(r), std::move(f), p);
}
/* f(i) for i = first, first + step, ... before last (step may be negative). */
template <class B, class E, class S, class F>
void for_each_index(executor &ex, B first, E last, S step, F f, partitioner p = {}) {
    using I = std::common_type_t<B, E, S>;
    weft_algo_config c = p.config();
    index_range<I> r(detail::index_arg<I>(first), detail::index_arg<I>(last), detail::index_arg<I>(step));
    detail::for_each_index(ex.exec("weft algorithm"), r, f, &c);
}
/* f(i) for i in [first, last) (for_each_index with step 1). */
template <class B, class E, class F>
void parallel_for(executor &ex, B first, E last, F f, partitioner p = {}) {
    using I = std::common_type_t<B, E>;
    weft::for_each_index(ex, static_cast<I>(first), static_cast<I>(last), I(1), std::move(f), p);
}
/* f(sub) for sub-ranges covering r. */
template <class I, class F>
void for_each_by_index(executor &ex, index_range<I> r, F f, partitioner p = {}) {
    weft_algo_config c = p.config();
    detail::for_each_by_index(ex.exec("weft algorithm"), r, f, &c);
}
/* d_first[i] = op(first[i]); returns d_first + n. */
template <class It, class Out, class F>
Out transform(executor &ex, It first, It last, Out d_first, F op) {
    detail::transform(ex.exec("weft algorithm"), first, last, d_first, op);
    return d_first + (last - first);
}
/* d_first[i] = op(first1[i], first2[i]). */
template <class It1, class It2, class Out, class F>
Out transform(executor &ex, It1 first1, It1 last1, It2 first2, Out d_first, F op) {
    detail::transform2(ex.exec("weft algorithm"), first1, last1, first2, d_first, op);
    return d_first + (last1 - first1);
}
/* init op x0 op x1 ... (op associative; operands kept in order). */
template <class It, class T, class Op = std::plus<>, class = std::enable_if_t<!detail::is_range<It>::value>>
T reduce(executor &ex, It first, It last, T init, Op op = {}) {
    auto id = [](const auto &x) { return x; };
    return detail::transform_reduce(ex.exec("weft algorithm"), first, last, std::move(init), op, id);
}
template <class R, class T, class Op = std::plus<>, class = std::enable_if_t<detail::is_range<R>::value>>
T reduce(executor &ex, R &&r, T init, Op op = {}) {
    return weft::reduce(ex, std::begin(r), std::end(r), std::move(init), std::move(op));
}
template <class It, class T, class BOp, class UOp>
T transform_reduce(executor &ex, It first, It last, T init, BOp bop, UOp uop) {
    return detail::transform_reduce(ex.exec("weft algorithm"), first, last, std::move(init), bop, uop);
}
/* Sorts [first, last) by cmp, which must be a strict weak order (as for
 * std::sort; the C sorts guard any comparator, this one does not). */
template <class It, class Cmp = std::less<>, class = std::enable_if_t<!detail::is_range<It>::value>>
void sort(executor &ex, It first, It last, Cmp cmp = {}) {
    detail::sort(ex.exec("weft algorithm"), first, last, cmp);
}
template <class R, class Cmp = std::less<>, class = std::enable_if_t<detail::is_range<R>::value>>
void sort(executor &ex, R &&r, Cmp cmp = {}) {
    detail::sort(ex.exec("weft algorithm"), std::begin(r), std::end(r), cmp);
}
/* d_first[i] = x0 op ... op xi.  d_first may be first. */
template <class It, class Out, class Op = std::plus<>>
Out inclusive_scan(executor &ex, It first, It last, Out d_first, Op op = {}) {
    using T = typename std::iterator_traits<It>::value_type;
    detail::scan<It, Out, T>(ex.exec("weft algorithm"), first, last, d_first, std::nullopt, op, false);
    return d_first + (last - first);
}
/* d_first[i] = init op x0 op ... op xi (std::inclusive_scan's and Taskflow's
 * order: op, then init). */
template <class It, class Out, class Op, class T>
Out inclusive_scan(executor &ex, It first, It last, Out d_first, Op op, T init) {
    detail::scan<It, Out, T>(ex.exec("weft algorithm"), first, last, d_first, std::optional<T>(std::move(init)), op, false);
    return d_first + (last - first);
}
/* d_first[i] = init op x0 op ... op x(i-1). */
template <class It, class Out, class T, class Op = std::plus<>>
Out exclusive_scan(executor &ex, It first, It last, Out d_first, T init, Op op = {}) {
    detail::scan<It, Out, T>(ex.exec("weft algorithm"), first, last, d_first, std::optional<T>(std::move(init)), op, true);
    return d_first + (last - first);
}

/* The first iterator in [first, last) whose element satisfies pred, or last
 * (std::find_if's answer, also with several matches: the first).  pred runs
 * on several workers at once and may be called on elements after the first
 * match (never on all of them once one is found); an exception from any call
 * is rethrown here, also when an earlier element matched.  The same holds for
 * find_if_not, find, min_element and max_element (their comparator). */
template <class It, class P>
It find_if(executor &ex, It first, It last, P pred) {
    return detail::iter_at(first, detail::find_first(ex.exec("weft algorithm"), first, last, pred, true, "weft::find_if"));
}
/* The first iterator whose element does not satisfy pred, or last. */
template <class It, class P>
It find_if_not(executor &ex, It first, It last, P pred) {
    return detail::iter_at(first,
                           detail::find_first(ex.exec("weft algorithm"), first, last, pred, false, "weft::find_if_not"));
}
/* The first iterator whose element == value, or last. */
template <class It, class T>
It find(executor &ex, It first, It last, const T &value) {
    auto eq = [&value](const auto &x) { return x == value; };
    return detail::iter_at(first, detail::find_first(ex.exec("weft algorithm"), first, last, eq, true, "weft::find"));
}
/* The first smallest element by cmp (std::min_element), or last if empty. */
template <class It, class Cmp = std::less<>>
It min_element(executor &ex, It first, It last, Cmp cmp = {}) {
    return detail::iter_at(first, detail::extreme(ex.exec("weft algorithm"), first, last, cmp, false, "weft::min_element"));
}
/* The first largest element by cmp (std::max_element), or last if empty. */
template <class It, class Cmp = std::less<>>
It max_element(executor &ex, It first, It last, Cmp cmp = {}) {
    return detail::iter_at(first, detail::extreme(ex.exec("weft algorithm"), first, last, cmp, true, "weft::max_element"));
}

} // namespace weft

/* Tasks as keys of unordered containers (Taskflow's std::hash<tf::Task>). */
namespace std {
template <>
struct hash<weft::task> {
    size_t operator()(const weft::task &t) const noexcept { return hash<const void *>()(t.native().node_); }
};
} // namespace std

#endif
