/* Session 44 (h44-3): weft.hpp's handle on the default executor across
 * fork().  The C API gives a child process made by fork() a default executor
 * of its own on its first call (weft/core.h); weft::executor::default_executor()
 * kept the handle it made in the parent, naming the parent's executor, which
 * has no workers in the child: every call on it threw WEFT_EFORKED there. */
#include "cpp_test.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>

TEST(the_default_executor_handle_in_a_forked_child_names_the_childs_default_executor) {
#ifdef __SANITIZE_THREAD__
    SKIP("TSan cannot start threads after a multi-threaded fork");
#endif
    weft::executor &parent = weft::executor::default_executor();
    ASSERT_EQ(parent.async([] { return 41; }).get(), 41);
    ASSERT_TRUE(parent.native() == weft_default_executor());
    std::fflush(nullptr);
    pid_t pid = fork();
    ASSERT_TRUE(pid >= 0);
    if (pid == 0) {
        int code = 0;
        try {
            weft::executor &child = weft::executor::default_executor();
            if (child.native() != weft_default_executor()) code |= 1;
            if (child.async([] { return 42; }).get() != 42) code |= 2;
            std::atomic<int> n{0};
            child.silent_async([&n] { n.fetch_add(1); });
            child.wait_for_all();
            if (n.load() != 1) code |= 4;
            if (&weft::executor::default_executor() != &child) code |= 8; /* one handle per executor */
        } catch (...) {
            code |= 16;
        }
        _exit(code);
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_EQ(WEXITSTATUS(status), 0);
    /* The parent's handle is the same as before, and still works. */
    ASSERT_TRUE(&weft::executor::default_executor() == &parent);
    ASSERT_EQ(parent.async([] { return 43; }).get(), 43);
}
