/* Session 47 (h47-5): ~weft::pipeline while a run of a taskflow that composes
 * it is submitted and has not reached the pipeline yet (queued, or going with
 * the pipeline's task still ahead).  Session 46 made ~pipeline stop with a
 * message while the pipeline's task runs; before the task started it could
 * not tell, freed the stages, and the run then called them: a use after free
 * (ASan: heap-use-after-free in weft_pipeline's drive).  Now it stops the same
 * way, and stays quiet when no run can reach the pipeline. */
#include "cpp_test.hpp"

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include <csignal>
#include <cstring>
#include <sys/wait.h>
#include <unistd.h>

namespace {

/* Runs fn in a child process with its stderr captured; returns whether it
 * was stopped by SIGABRT (std::terminate) within 20 s, with what it wrote in
 * *msg.  Exit code 3 from fn: it neither stopped nor hung. */
bool aborts_in_child(void (*fn)(), std::string *msg) {
    int err[2];
    if (pipe(err) != 0) return false;
    std::fflush(nullptr);
    pid_t pid = fork();
    if (pid < 0) return false;
    if (pid == 0) {
        dup2(err[1], 2);
        close(err[0]);
        fn();
        _exit(3);
    }
    close(err[1]);
    int status = 0;
    pid_t w = 0;
    for (int ms = 0; ms < 20000 && (w = waitpid(pid, &status, WNOHANG)) == 0; ms++)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (w == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        *msg = "(the child hung)";
        close(err[0]);
        return false;
    }
    char buf[2048] = {0};
    size_t got = 0;
    ssize_t r;
    while (got < sizeof buf - 1 && (r = read(err[0], buf + got, sizeof buf - 1 - got)) > 0) got += (size_t)r;
    close(err[0]);
    *msg = buf;
    if (WIFEXITED(status)) *msg += " (the child exited with " + std::to_string(WEXITSTATUS(status)) + ")";
    return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
}

void wait_for(const std::atomic<bool> &b) {
    while (!b.load()) std::this_thread::yield();
}

/* A pipeline of 4 tokens whose stage counts into *n. */
std::unique_ptr<weft::pipeline> counting_pipeline(std::atomic<int> *n) {
    return std::make_unique<weft::pipeline>(2, weft::pipe{weft::pipe_type::serial, [n](weft::pipeflow &pf) {
                                                if (pf.token() == 4) pf.stop();
                                                else n->fetch_add(1);
                                            }});
}

const char *const queued_msg = "weft::pipeline destroyed while a run of taskflow 'flow', which composes it, is "
                               "queued or going";

/* The run has started, but its pipeline task is behind a task that waits. */
void destroy_pipeline_before_its_task_starts() {
    weft::executor ex(2);
    std::atomic<bool> in{false}, go{false};
    std::atomic<int> n{0};
    weft::taskflow tf("flow");
    auto pl = counting_pipeline(&n);
    weft::task first = tf.emplace([&] {
        in = true;
        wait_for(go);
    });
    weft::task p = tf.composed_of(*pl);
    first.precede(p);
    auto f = ex.run(tf);
    wait_for(in);
    pl.reset(); /* the run will start the pipeline's task: its stages must not be freed */
    go = true;
    f.wait();
}

/* The run is submitted and none of its tasks has started: the executor's
 * one worker is held by a task of another taskflow. */
void destroy_pipeline_while_a_run_is_queued() {
    weft::executor ex(1);
    std::atomic<bool> in{false}, go{false};
    std::atomic<int> n{0};
    weft::taskflow blocker("blocker"), tf("flow");
    blocker.emplace([&] {
        in = true;
        wait_for(go);
    });
    auto pl = counting_pipeline(&n);
    tf.composed_of(*pl);
    auto fb = ex.run(blocker);
    wait_for(in);
    auto f = ex.run(tf); /* waits for the worker */
    pl.reset();
    go = true;
    fb.wait();
    f.wait();
}

/* The taskflow that composes the pipeline is a module body of another
 * taskflow's run, which holds it from its submission. */
void destroy_pipeline_while_its_module_parent_runs() {
    weft::executor ex(2);
    std::atomic<bool> in{false}, go{false};
    std::atomic<int> n{0};
    weft::taskflow body("flow"), outer("outer");
    auto pl = counting_pipeline(&n);
    body.composed_of(*pl);
    weft::task first = outer.emplace([&] {
        in = true;
        wait_for(go);
    });
    first.precede(outer.composed_of(body));
    auto f = ex.run(outer);
    wait_for(in);
    pl.reset();
    go = true;
    f.wait();
}

/* A run submitted through the C API on the taskflow's native handle. */
void destroy_pipeline_while_a_c_run_waits() {
    weft::executor ex(2);
    std::atomic<bool> in{false}, go{false};
    std::atomic<int> n{0};
    weft::taskflow tf("flow");
    auto pl = counting_pipeline(&n);
    weft::task first = tf.emplace([&] {
        in = true;
        wait_for(go);
    });
    first.precede(tf.composed_of(*pl));
    weft_future *f = nullptr;
    if (weft_run(ex.native(), tf.native(), &f) != WEFT_OK) _exit(4);
    wait_for(in);
    pl.reset();
    go = true;
    (void)weft_future_wait(f);
    weft_future_destroy(f);
}

void expect_abort(void (*fn)()) {
#ifdef __SANITIZE_THREAD__
    SKIP("TSan cannot start threads after a multi-threaded fork");
#endif
    std::string msg;
    bool aborted = aborts_in_child(fn, &msg);
    if (!aborted) TEST_FAIL_("the child did not abort: %s", msg.c_str());
    if (msg.find(queued_msg) == std::string::npos) TEST_FAIL_("unexpected message: %s", msg.c_str());
}

} // namespace

TEST(a_pipeline_destroyed_before_its_task_starts_in_a_going_run_stops_with_a_message) {
    expect_abort(&destroy_pipeline_before_its_task_starts);
}

TEST(a_pipeline_destroyed_while_a_run_of_its_taskflow_is_queued_stops_with_a_message) {
    expect_abort(&destroy_pipeline_while_a_run_is_queued);
}

TEST(a_pipeline_destroyed_while_a_run_holds_its_taskflow_as_a_module_stops_with_a_message) {
    expect_abort(&destroy_pipeline_while_its_module_parent_runs);
}

TEST(a_pipeline_destroyed_while_a_c_api_run_of_its_taskflow_waits_stops_with_a_message) {
    expect_abort(&destroy_pipeline_while_a_c_run_waits);
}

/* No run can reach it: destroyed quietly, also before the taskflow that
 * composed it (the Taskflow order: Taskflow, then Pipeline, in one scope),
 * after that taskflow's clear() while it runs again, after the taskflow is
 * gone, and when moved from. */
TEST(a_pipeline_no_run_can_reach_is_destroyed_quietly) {
    weft::executor ex(2);
    std::atomic<int> n{0};
    {
        weft::taskflow tf("flow");
        auto pl = counting_pipeline(&n);
        tf.composed_of(*pl);
        ex.run(tf).wait();
        ASSERT_EQ(n.load(), 4);
        pl.reset(); /* before tf, its runs done */
        ASSERT_EQ(weft_taskflow_num_runs(tf.native()), 0);
    }
    {
        weft::taskflow tf("flow");
        auto pl = counting_pipeline(&n);
        tf.composed_of(*pl);
        ex.run(tf).wait();
        tf.clear();
        std::atomic<bool> in{false}, go{false};
        tf.emplace([&] {
            in = true;
            wait_for(go);
        });
        auto f = ex.run(tf);
        wait_for(in);
        ASSERT_EQ(weft_taskflow_num_runs(tf.native()), 1);
        pl.reset(); /* the running graph no longer has the pipeline */
        go = true;
        f.wait();
    }
    {
        auto pl = counting_pipeline(&n);
        {
            weft::taskflow tf("flow");
            tf.composed_of(*pl);
            ex.run(tf).wait();
        }
        /* Another taskflow, busy, perhaps at the same address. */
        weft::taskflow other("flow");
        std::atomic<bool> in{false}, go{false};
        other.emplace([&] {
            in = true;
            wait_for(go);
        });
        auto f = ex.run(other);
        wait_for(in);
        pl.reset();
        go = true;
        f.wait();
    }
    {
        weft::taskflow tf("flow");
        auto pl = counting_pipeline(&n);
        weft::pipeline moved(std::move(*pl));
        std::atomic<bool> in{false}, go{false};
        weft::task first = tf.emplace([&] {
            in = true;
            wait_for(go);
        });
        first.precede(tf.composed_of(moved));
        auto f = ex.run(tf);
        wait_for(in);
        pl.reset(); /* moved from: nothing to free, nothing to check */
        go = true;
        f.wait();
    }
    ASSERT_EQ(weft_taskflow_num_runs(nullptr), 0);
}
