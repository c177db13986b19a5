/* The shared main() of every test executable; see harness.h. */
#include "harness.h"

#include <sys/wait.h>
#include <unistd.h>

struct test_case test_cases_[TEST_MAX];
int test_count_;

static int run_one(const struct test_case *t) {
    t->fn();
    return 0;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc > 1 && strcmp(argv[1], "--list") == 0) {
        for (int i = 0; i < test_count_; i++) puts(test_cases_[i].name);
        return 0;
    }
    if (argc > 1) {
        for (int i = 0; i < test_count_; i++)
            if (strcmp(test_cases_[i].name, argv[1]) == 0) return run_one(&test_cases_[i]);
        fprintf(stderr, "no test named %s\n", argv[1]);
        return 2;
    }
    /* No argument: run every test in a child process of its own. */
    int passed = 0, failed = 0, skipped = 0;
    for (int i = 0; i < test_count_; i++) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) _exit(run_one(&test_cases_[i]));
        int st = 0;
        waitpid(pid, &st, 0);
        int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        const char *verdict = code == 0 ? "ok" : code == TEST_SKIP_CODE ? "skipped" : "FAILED";
        printf("%-60s %s\n", test_cases_[i].name, verdict);
        if (code == 0) passed++;
        else if (code == TEST_SKIP_CODE) skipped++;
        else failed++;
    }
    printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
    return failed ? 1 : 0;
}
