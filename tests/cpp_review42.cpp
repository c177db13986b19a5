/* Session 42 review (h42-9) of 8ad9170: a task_group child that throws skips
 * the group's children that have not started, until wait(), which resets the
 * rule.  Races: children still starting while the throw lands (each runs
 * whole or not at all, none twice), wait()'s reset against the children of
 * the batch before it (all of them over by then: none of the next batch is
 * skipped), async children skipped with WEFT_ECANCELED. */
#include "cpp_test.hpp"

#include <atomic>
#include <stdexcept>

TEST(task_group_batches_after_a_throw_run_whole_on_every_round) {
    for (unsigned workers = 1; workers <= 3; workers++) {
        weft::executor ex(workers);
        int bad = 0, threw = 0;
        for (int round = 0; round < 150; round++) {
            std::atomic<int> started{0}, finished{0}, second{0}, async_ran{0};
            int async_cancelled = 0, async_ok = 0;
            ex.run_root([&] {
                weft::task_group tg;
                for (int i = 0; i < 24; i++)
                    tg.run([&, i] {
                        started++;
                        if (i % 7 == 3) throw std::runtime_error("boom");
                        finished++;
                    });
                auto fut = tg.async([&] {
                    async_ran++;
                    return 5;
                });
                try {
                    tg.wait();
                } catch (const std::runtime_error &) {
                    threw++;
                }
                try {
                    async_ok += fut.get() == 5;
                } catch (const weft::error &e) {
                    async_cancelled += e.status() == WEFT_ECANCELED;
                }
                /* The next batch: nothing of the last one is left to skip it. */
                for (int i = 0; i < 24; i++) tg.run([&] { second++; });
                auto fut2 = tg.async([&] { return 6; });
                tg.wait();
                if (fut2.get() != 6) bad++;
            });
            /* A child ran whole or was skipped; the one that threw first ran. */
            if (started.load() < 1 || started.load() > 24 || finished.load() > started.load()) bad++;
            if (second.load() != 24) bad++;
            if (async_ok + async_cancelled != 1 || async_ran.load() != async_ok) bad++;
        }
        if (bad) TEST_FAIL_("%d bad rounds on %u workers", bad, workers);
        ASSERT_EQ(threw, 150); /* the first thrower to start is never skipped */
    }
}
