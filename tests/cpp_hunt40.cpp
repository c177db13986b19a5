/* Round 40: gaps a Taskflow user hits in weft.hpp.  task::work(f) (Taskflow's
 * tf::Task::work: replace a task's work after creation) with the ownership of
 * the callables it replaces and is given, and task::data() / data(void*)
 * (Taskflow's attach_data); subflow join/detach rules. */
#include "cpp_test.hpp"

#include <atomic>
#include <cstdlib>
#include <chrono>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

/* Counts live copies of a callable, and its calls. */
struct counts {
    std::atomic<int> live{0}, made{0}, calls{0};
};

struct counted {
    counts *c;
    int tag;
    counted(counts *cc, int t) : c(cc), tag(t) {
        c->live++;
        c->made++;
    }
    counted(const counted &o) : c(o.c), tag(o.tag) {
        c->live++;
        c->made++;
    }
    counted(counted &&o) noexcept : c(o.c), tag(o.tag) {
        c->live++;
        c->made++;
    }
    ~counted() { c->live--; }
    void operator()() const { c->calls++; }
};

/* A callable whose copy throws (moves do not). */
struct throws_on_copy {
    int *hits;
    explicit throws_on_copy(int *h) : hits(h) {}
    throws_on_copy(const throws_on_copy &) { throw std::runtime_error("no copy"); }
    throws_on_copy(throws_on_copy &&o) noexcept : hits(o.hits) {}
    void operator()() const { ++*hits; }
};

struct boom : std::runtime_error {
    using std::runtime_error::runtime_error;
};

} // namespace

TEST(task_work_gives_a_placeholder_its_work_on_every_run) {
    weft::executor ex(2);
    weft::taskflow tf("ph");
    int data = 0;
    std::vector<int> got;
    auto a = tf.placeholder();
    a.data(&data).work([&got, a] { got.push_back(*static_cast<int *>(a.data())); });
    for (data = 0; data < 5; data++) ex.run(tf).wait();
    ASSERT_EQ(got.size(), 5u);
    for (int i = 0; i < 5; i++) ASSERT_EQ(got[static_cast<size_t>(i)], i);
}

TEST(task_work_replaces_work_and_destroys_each_callable_once) {
    counts c1, c2, c3;
    {
        weft::executor ex(2);
        weft::taskflow tf;
        auto t = tf.emplace(counted(&c1, 1));
        ASSERT_EQ(c1.live.load(), 1);
        ex.run(tf).wait();
        ASSERT_EQ(c1.calls.load(), 1);
        t.work(counted(&c2, 2));
        ASSERT_EQ(c1.live.load(), 1); /* the arena's copy: an emplaced callable lives until clear */
        ASSERT_EQ(c2.live.load(), 1); /* the task's copy only */
        ex.run(tf).wait();
        ASSERT_EQ(c1.calls.load(), 1);
        ASSERT_EQ(c2.calls.load(), 1);
        t.work(counted(&c3, 3)); /* replaces the work given by work(): destroyed now */
        ASSERT_EQ(c2.live.load(), 0);
        ASSERT_EQ(c3.live.load(), 1);
        ex.run(tf).wait();
        ASSERT_EQ(c3.calls.load(), 1);
        ASSERT_EQ(c2.calls.load(), 1);
    }
    ASSERT_EQ(c1.live.load(), 0);
    ASSERT_EQ(c2.live.load(), 0);
    ASSERT_EQ(c3.live.load(), 0); /* destroyed once with the taskflow (ASan: not twice) */
}

TEST(task_work_callables_are_destroyed_once_by_clear_and_the_taskflow_stays_usable) {
    counts c;
    weft::executor ex(2);
    weft::taskflow tf;
    auto p = tf.placeholder();
    p.work(counted(&c, 1));
    ASSERT_EQ(c.live.load(), 1);
    tf.clear();
    ASSERT_EQ(c.live.load(), 0);
    auto q = tf.placeholder();
    counted local(&c, 2);
    q.work(local); /* an lvalue: copied */
    ASSERT_EQ(c.live.load(), 2);
    ex.run(tf).wait();
    ASSERT_EQ(c.calls.load(), 1);
    tf.clear();
    ASSERT_EQ(c.live.load(), 1);
}

TEST(task_work_callable_is_dropped_when_its_task_is_erased) {
    counts c;
    weft::taskflow tf;
    auto p = tf.placeholder();
    p.work(counted(&c, 1));
    ASSERT_OK(weft_task_erase(p.native()));
    ASSERT_EQ(c.live.load(), 0);
    ASSERT_EQ(tf.num_tasks(), 0u);
}

TEST(task_work_whose_copy_throws_leaves_the_task_as_it_was) {
    weft::executor ex(1);
    weft::taskflow tf;
    int old_hits = 0, new_hits = 0;
    auto t = tf.emplace([&old_hits] { old_hits++; });
    throws_on_copy f(&new_hits);
    ASSERT_THROWS(t.work(f), std::runtime_error, e, ASSERT_STREQ(e.what(), "no copy"));
    ex.run(tf).wait();
    ASSERT_EQ(old_hits, 1);
    ASSERT_EQ(new_hits, 0);
    t.work(std::move(f)); /* a move does not throw */
    ex.run(tf).wait();
    ASSERT_EQ(old_hits, 1);
    ASSERT_EQ(new_hits, 1);
}

TEST(task_work_while_the_taskflow_runs_throws_ebusy_and_frees_the_refused_callable) {
    weft::executor ex(2);
    weft::taskflow tf("busy");
    std::atomic<bool> in{false}, go{false};
    int ran_b = 0;
    auto a = tf.emplace([&] {
        in = true;
        while (!go) std::this_thread::yield();
    });
    auto b = tf.emplace([&ran_b] { ran_b++; });
    a.precede(b);
    auto fut = ex.run(tf);
    while (!in) std::this_thread::yield();
    counts c;
    ASSERT_THROWS(b.work(counted(&c, 1)), weft::error, e, ASSERT_EQ(e.status(), WEFT_EBUSY));
    ASSERT_EQ(c.live.load(), 0); /* the refused callable went */
    go = true;
    fut.get();
    ASSERT_EQ(ran_b, 1);
    ASSERT_EQ(c.calls.load(), 0);
}

TEST(task_work_on_a_module_body_while_its_parent_runs_throws_ebusy) {
    weft::executor ex(2);
    weft::taskflow body("body"), top("top");
    std::atomic<bool> in{false}, go{false};
    auto bt = body.emplace([&] {
        in = true;
        while (!go) std::this_thread::yield();
    });
    top.composed_of(body);
    auto fut = ex.run(top);
    while (!in) std::this_thread::yield();
    counts c;
    ASSERT_THROWS(bt.work(counted(&c, 1)), weft::error, e, ASSERT_EQ(e.status(), WEFT_EBUSY));
    ASSERT_EQ(c.live.load(), 0);
    go = true;
    fut.get();
}

TEST(task_work_exception_is_rethrown_by_the_run_from_a_taskflow_task_and_a_subflow_task) {
    weft::executor ex(2);
    {
        weft::taskflow tf;
        auto t = tf.placeholder();
        t.work([] { throw boom("top"); });
        ASSERT_THROWS(ex.run(tf).get(), boom, e, ASSERT_STREQ(e.what(), "top"));
        /* The taskflow runs again, and this time succeeds. */
        t.work([] {});
        ex.run(tf).get();
    }
    {
        weft::taskflow tf;
        tf.emplace([](weft::subflow &sf) {
            auto c = sf.placeholder();
            c.work([] { throw boom("sub"); });
        });
        ASSERT_THROWS(ex.run(tf).get(), boom, e, ASSERT_STREQ(e.what(), "sub"));
        ASSERT_THROWS(ex.run(tf).get(), boom, e, ASSERT_STREQ(e.what(), "sub"));
    }
    {
        weft::taskflow body, top;
        body.placeholder().work([] { throw boom("module"); });
        top.composed_of(body);
        ASSERT_THROWS(ex.run(top).get(), boom, e, ASSERT_STREQ(e.what(), "module"));
    }
}

TEST(task_work_takes_a_runtime_and_mutable_state_kept_from_run_to_run) {
    weft::executor ex(2);
    weft::taskflow tf;
    std::vector<int> seen;
    bool had_ctx = false;
    auto t = tf.placeholder();
    t.work([&, n = 0](weft::runtime &rt) mutable {
        had_ctx = rt.native() != nullptr;
        seen.push_back(n++);
    });
    ex.run_n(tf, 3).wait();
    ASSERT_TRUE(had_ctx);
    ASSERT_EQ(seen.size(), 3u);
    ASSERT_EQ(seen[2], 2);
}

TEST(task_work_through_other_handles_of_the_same_task) {
    weft::executor ex(2);
    weft::taskflow tf;
    int hits = 0;
    auto a = tf.emplace([] {});
    auto b = tf.placeholder();
    a.precede(b);
    a.for_each_successor([&hits](weft::task s) { s.work([&hits] { hits += 10; }); });
    weft::task(a.native()).work([&hits] { hits += 1; });
    ex.run(tf).wait();
    ASSERT_EQ(hits, 11);
}

TEST(task_work_is_refused_on_conditions_subflows_modules_and_empty_handles) {
    weft::taskflow tf, body;
    auto cond = tf.emplace([] { return 0; });
    auto sub = tf.emplace([](weft::subflow &) {});
    auto mod = tf.composed_of(body);
    ASSERT_THROWS(cond.work([] {}), weft::error, e, ASSERT_EQ(e.status(), WEFT_EINVAL));
    ASSERT_THROWS(sub.work([] {}), weft::error, e, ASSERT_EQ(e.status(), WEFT_EINVAL));
    ASSERT_THROWS(mod.work([] {}), weft::error, e, ASSERT_EQ(e.status(), WEFT_EINVAL));
    weft::task none;
    counts c;
    ASSERT_THROWS(none.work(counted(&c, 1)), weft::error, e, ASSERT_EQ(e.status(), WEFT_EINVAL));
    ASSERT_EQ(c.live.load(), 0);
    ASSERT_THROWS(none.data(nullptr), weft::error, e, ASSERT_EQ(e.status(), WEFT_EINVAL));
    ASSERT_NULL(none.data());
}

TEST(task_work_on_a_task_in_a_moved_taskflow) {
    weft::executor ex(1);
    weft::taskflow a;
    int hits = 0;
    auto t = a.placeholder();
    weft::taskflow b(std::move(a));
    t.work([&hits] { hits++; });
    ex.run(b).wait();
    ASSERT_EQ(hits, 1);
}

TEST(task_data_is_the_task_user_pointer_and_may_be_set_while_the_taskflow_runs) {
    weft::executor ex(2);
    weft::taskflow tf;
    int x = 1, y = 2;
    auto t = tf.emplace([] {});
    ASSERT_NULL(t.data());
    ASSERT_TRUE(t.data(&x).data() == &x);
    ASSERT_TRUE(weft_task_data(t.native()) == &x);
    std::atomic<bool> in{false}, go{false};
    tf.emplace([&] {
        in = true;
        while (!go) std::this_thread::yield();
    });
    auto fut = ex.run(tf);
    while (!in) std::this_thread::yield();
    t.data(&y); /* allowed during a run, unlike work() */
    go = true;
    fut.get();
    ASSERT_TRUE(t.data() == &y);
}

/* The C call under task::work. */
static int c_bump(weft_ctx *, void *arg) {
    ++*static_cast<int *>(arg);
    return 0;
}
static void c_drop(void *arg) { *static_cast<int *>(arg) += 1000; }

TEST(task_set_shared_work_takes_a_reference_and_drops_the_one_it_replaces) {
    weft::executor ex(1);
    weft::taskflow tf;
    int s1 = 0, s2 = 0;
    weft_status st;
    weft_work *w1 = weft_work_create(c_bump, &s1, c_drop, &st);
    weft_work *w2 = weft_work_create(c_bump, &s2, c_drop, &st);
    ASSERT_NOT_NULL(w1);
    ASSERT_NOT_NULL(w2);
    weft_task t = weft_emplace_work(tf.native(), w1);
    ASSERT_EQ(weft_work_refs(w1), 2u);
    /* weft_task_set_work keeps refusing a task holding shared work. */
    ASSERT_STATUS(weft_task_set_work(t, c_bump, &s2), WEFT_EINVAL);
    ASSERT_OK(weft_task_set_shared_work(t, w1)); /* the same work: no change */
    ASSERT_EQ(weft_work_refs(w1), 2u);
    ASSERT_OK(weft_task_set_shared_work(t, w2));
    ASSERT_EQ(weft_work_refs(w1), 1u);
    ASSERT_EQ(weft_work_refs(w2), 2u);
    ex.run(tf).wait();
    ASSERT_EQ(s1, 0);
    ASSERT_EQ(s2, 1);
    ASSERT_STATUS(weft_task_set_shared_work(t, nullptr), WEFT_EINVAL);
    ASSERT_STATUS(weft_taskflow_last_error(tf.native()), WEFT_EINVAL);
    ASSERT_STATUS(weft_task_set_shared_work(WEFT_TASK_NULL, w1), WEFT_EINVAL);
    weft_work_release(w1);
    ASSERT_EQ(s1, 1000); /* the last reference */
    weft_work_release(w2);
    ASSERT_EQ(s2, 1);
    tf.clear();
    ASSERT_EQ(s2, 1001);
}

TEST(task_work_under_a_failing_allocator_throws_enomem_and_keeps_the_old_work) {
    /* The weft allocation task::work makes is its weft_work record: fail the
     * allocator's next call. */
    struct fail_next {
        static void *alloc(void *ctx, size_t n) {
            auto *left = static_cast<std::atomic<int> *>(ctx);
            return left->fetch_sub(1) == 1 ? nullptr : std::malloc(n);
        }
        static void free_(void *, void *p, size_t) { std::free(p); }
    };
    /* No executor alive while the allocator changes (weft_set_allocator). */
    weft::taskflow tf;
    int old_hits = 0;
    counts c;
    auto t = tf.emplace([&old_hits] { old_hits++; });
    static std::atomic<int> left{0};
    left = 1;
    weft_allocator a{};
    a.alloc = fail_next::alloc;
    a.free = fail_next::free_;
    a.ctx = &left;
    weft_set_allocator(&a);
    bool threw = false;
    weft_status got = WEFT_OK;
    try {
        t.work(counted(&c, 1));
    } catch (const weft::error &e) {
        threw = true;
        got = e.status();
    }
    weft_set_allocator(nullptr);
    ASSERT_TRUE(threw);
    ASSERT_EQ(got, WEFT_ENOMEM);
    ASSERT_EQ(c.live.load(), 0);
    weft::executor ex(1);
    ex.run(tf).wait();
    ASSERT_EQ(old_hits, 1);
}

/* ---- subflow join / detach ---- */

TEST(subflow_detach_after_join_throws_einval_and_the_subflow_stays_joined) {
    weft::executor ex(2);
    weft::taskflow tf;
    std::atomic<int> kids{0};
    int after_kids = -1;
    bool detached_after = true, joinable_after = true, threw = false;
    weft_status st = WEFT_OK;
    auto s = tf.emplace([&](weft::subflow &sf) {
        sf.emplace([&kids] { kids++; });
        sf.emplace([&kids] { kids++; });
        sf.join();
        try {
            sf.detach();
        } catch (const weft::error &e) {
            threw = true;
            st = e.status();
        }
        detached_after = sf.detached();
        joinable_after = sf.joinable();
    });
    auto t = tf.emplace([&] { after_kids = kids.load(); });
    s.precede(t);
    ex.run(tf).get();
    ASSERT_TRUE(threw);
    ASSERT_EQ(st, WEFT_EINVAL);
    ASSERT_FALSE(detached_after);
    ASSERT_FALSE(joinable_after);
    ASSERT_EQ(after_kids, 2);
}

static int c_noop(weft_ctx *, void *) { return 0; }

struct c_sub {
    weft_status detach_after_join = WEFT_OK, detach_twice = WEFT_EINVAL;
    bool detached_after_join = true;
    weft_subflow *kept = nullptr;
};
static int c_sub_join_fn(weft_ctx *, weft_subflow *sf, void *arg) {
    auto *s = static_cast<c_sub *>(arg);
    (void)weft_emplace(weft_subflow_graph(sf), c_noop, nullptr);
    if (weft_subflow_join(sf) != WEFT_OK) return 1;
    s->detach_after_join = weft_subflow_detach(sf);
    s->detached_after_join = weft_subflow_detached(sf);
    return 0;
}
static int c_sub_detach_fn(weft_ctx *, weft_subflow *sf, void *arg) {
    auto *s = static_cast<c_sub *>(arg);
    (void)weft_emplace(weft_subflow_graph(sf), c_noop, nullptr);
    if (weft_subflow_detach(sf) != WEFT_OK) return 1;
    s->detach_twice = weft_subflow_detach(sf);
    s->kept = sf;
    return 0;
}

TEST(weft_subflow_detach_is_refused_after_join_and_outside_the_function_and_idempotent_before) {
    weft::executor ex(2);
    c_sub a, b;
    weft::taskflow tf;
    ASSERT_FALSE(weft_task_is_null(weft_emplace_subflow(tf.native(), c_sub_join_fn, &a)));
    ASSERT_FALSE(weft_task_is_null(weft_emplace_subflow(tf.native(), c_sub_detach_fn, &b)));
    ex.run(tf).get();
    ASSERT_STATUS(a.detach_after_join, WEFT_EINVAL);
    ASSERT_FALSE(a.detached_after_join);
    ASSERT_OK(b.detach_twice);
    /* The record outlives the call (it is kept with its task), but the
     * function has returned: a stale handle is refused. */
    ASSERT_STATUS(weft_subflow_detach(b.kept), WEFT_EINVAL);
}
