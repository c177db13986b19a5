/* weft-top: a live view of a running weft program.
 *
 *   weft-top [-d seconds] [-n frames] <pid | file>...
 *
 * The program publishes its executors' statistics with WEFT_STATS=<path> (or
 * weft_stats_start): a small file mapped into memory whose layout
 * include/weft/observe.h gives (WEFT_STATS_*).  Given a pid, weft-top finds
 * those files among the process's mappings (/proc/<pid>/maps); given a file, it
 * maps that one.  Each frame shows every worker's state, how busy it was since
 * the last frame (a bar), and its rates (tasks, steals, failed steals, parks
 * per second) from the differences between two refreshes; a file whose
 * process is gone is flagged stale.  On a terminal each frame redraws the
 * screen; otherwise frames follow each other (for scripts and tests). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "weft/observe.h"

#define MAX_BLOCKS 16
#define BAR 24

struct block {
    char path[4096];
    const _Atomic uint64_t *w; /* the mapping */
    size_t len;
    uint64_t *prev;             /* the words at the previous frame (NULL before the first) */
    size_t nwords;
};

static bool tty;

static uint64_t word(const struct block *b, size_t k) {
    return k * 8 < b->len ? atomic_load_explicit(&b->w[k], memory_order_relaxed) : 0;
}

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Maps path if it is a live block; 0, or -1 (with a reason in why). */
static int block_open(struct block *b, const char *path, char *why, size_t whylen) {
    memset(b, 0, sizeof *b);
    snprintf(b->path, sizeof b->path, "%s", path);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(why, whylen, "%s: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    void *p = MAP_FAILED;
    bool have_st = fstat(fd, &st) == 0;
    if (have_st && !S_ISREG(st.st_mode)) { /* a directory or a device was "too short" */
        close(fd);
        snprintf(why, whylen, "%s: not a weft statistics file (not a regular file)", path);
        return -1;
    }
    if (have_st && (size_t)st.st_size >= WEFT_STATS_HEADER_WORDS * 8)
        p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        snprintf(why, whylen, "%s: not a weft statistics file (too short)", path);
        return -1;
    }
    b->w = p, b->len = (size_t)st.st_size;
    if (word(b, WEFT_STATS_H_MAGIC) != WEFT_STATS_MAGIC || word(b, WEFT_STATS_H_VERSION) < 1) {
        snprintf(why, whylen, "%s: not a weft statistics file", path);
        munmap(p, b->len);
        return -1;
    }
    return 0;
}

/* The live blocks the process maps (its mappings of files with the magic). */
static int blocks_of_pid(const char *pid, struct block *out, int max) {
    char maps[64];
    snprintf(maps, sizeof maps, "/proc/%s/maps", pid);
    FILE *f = fopen(maps, "r");
    if (!f && errno == ENOENT) { /* "cannot read /proc/N/maps" left the user to guess */
        fprintf(stderr, "weft-top: no process %s (it has exited, or the pid is wrong)\n", pid);
        return -1;
    }
    if (!f) {
        fprintf(stderr, "weft-top: cannot read %s: %s\n", maps, strerror(errno));
        return -1;
    }
    int n = 0;
    char line[4600];
    while (n < max && fgets(line, sizeof line, f)) {
        char *path = strchr(line, '/');
        if (!path) continue;
        path[strcspn(path, "\n")] = 0;
        if (strstr(path, " (deleted)")) continue;
        bool seen = false;
        for (int i = 0; i < n; i++) seen |= strcmp(out[i].path, path) == 0;
        struct stat st;
        if (seen || stat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > (1 << 24)) continue;
        char why[256];
        if (block_open(&out[n], path, why, sizeof why) == 0) n++;
    }
    fclose(f);
    return n;
}

static bool pid_alive(uint64_t pid) {
    return pid && pid < (1u << 31) && (kill((pid_t)pid, 0) == 0 || errno == EPERM);
}

static const char *state_name(uint64_t s) {
    return s == WEFT_STATS_RUNNING ? "running" : s == WEFT_STATS_PARKED ? "parked" : "searching";
}

static void put_rate(double v) {
    if (v >= 1e6) printf(" %8.2fM", v / 1e6);
    else if (v >= 1e4) printf(" %8.1fk", v / 1e3);
    else printf(" %9.0f", v);
}

static void draw_bar(double f) {
    int full = (int)(f * BAR + 0.5);
    if (full > BAR) full = BAR;
    if (full < 0) full = 0;
    fputs(tty ? "\033[32m" : "", stdout);
    for (int i = 0; i < full; i++) fputs(tty ? "\u2588" : "#", stdout);
    fputs(tty ? "\033[2m" : "", stdout);
    for (int i = full; i < BAR; i++) fputs(tty ? "\u00b7" : ".", stdout);
    fputs(tty ? "\033[0m" : "", stdout);
}

/* The block's words now (malloc'ed, *nwords of them), or NULL. */
static uint64_t *snapshot(const struct block *b, size_t *nwords) {
    uint64_t nw = word(b, WEFT_STATS_H_WORKERS), hw = word(b, WEFT_STATS_H_HEADER_WORDS);
    uint64_t lw = word(b, WEFT_STATS_H_WORKER_WORDS);
    uint64_t words = b->len / 8;
    if (hw < WEFT_STATS_HEADER_WORDS || lw < WEFT_STATS_WORKER_WORDS || hw > words || lw > words ||
        nw > words || hw + nw * lw > words)
        nw = 0, hw = WEFT_STATS_HEADER_WORDS, lw = WEFT_STATS_WORKER_WORDS; /* malformed: header only */
    *nwords = (size_t)(hw + nw * lw);
    uint64_t *cur = malloc(*nwords * sizeof *cur);
    if (!cur) return NULL;
    for (size_t k = 0; k < *nwords; k++) cur[k] = word(b, k);
    cur[WEFT_STATS_H_HEADER_WORDS] = hw, cur[WEFT_STATS_H_WORKER_WORDS] = lw, cur[WEFT_STATS_H_WORKERS] = nw;
    return cur;
}

/* The first look: rates in the first frame come from the difference with it. */
static void first_look(struct block *b) { b->prev = snapshot(b, &b->nwords); }

static void draw_block(struct block *b) {
    size_t nwords;
    uint64_t *cur = snapshot(b, &nwords);
    if (!cur) return;
    uint64_t hw = cur[WEFT_STATS_H_HEADER_WORDS], lw = cur[WEFT_STATS_H_WORKER_WORDS];
    uint64_t nw = cur[WEFT_STATS_H_WORKERS], pid = cur[WEFT_STATS_H_PID];
    uint64_t flags = cur[WEFT_STATS_H_FLAGS], t = cur[WEFT_STATS_H_NOW_NS];
    bool have_prev = b->prev && b->nwords == nwords && t > b->prev[WEFT_STATS_H_NOW_NS];
    double dt = have_prev ? (double)(t - b->prev[WEFT_STATS_H_NOW_NS]) * 1e-9 : 0;
    printf("%sexecutor %" PRIu64 " of pid %" PRIu64 "%s  %" PRIu64 " workers  refresh #%" PRIu64
           "  runs in flight %" PRIu64 "  injector %" PRIu64 "  timers %" PRIu64 "\n",
           tty ? "\033[1m" : "", cur[WEFT_STATS_H_EXECUTOR], pid, tty ? "\033[0m" : "", nw,
           cur[WEFT_STATS_H_UPDATES], cur[WEFT_STATS_H_RUNS_IN_FLIGHT], cur[WEFT_STATS_H_INJECTOR],
           cur[WEFT_STATS_H_TIMERS]);
    printf("  %s\n", b->path);
    if (!pid_alive(pid))
        printf("  %sSTALE: process %" PRIu64 " is gone; this file was left behind (remove it)%s\n",
               tty ? "\033[31m" : "", pid, tty ? "\033[0m" : "");
    else if (flags & WEFT_STATS_F_CLOSED)
        printf("  closed: the executor stopped publishing; figures are final\n");
    else if (now_ns() - t > 3 * cur[WEFT_STATS_H_INTERVAL_NS] + 1000000000u)
        printf("  not refreshed for %.1f s\n", (double)(now_ns() - t) * 1e-9);
    bool tasks = flags & WEFT_STATS_F_TASKS;
    printf("  worker state      %-*s  busy   tasks/s  steals/s   fails/s   parks/s  deque\n", BAR, tasks ? "busy" : "busy (sampled)");
    double total = 0;
    for (uint64_t i = 0; i < nw; i++) {
        const uint64_t *c = cur + hw + i * lw, *p = have_prev ? b->prev + hw + i * lw : NULL;
#define RATE(k) (p && c[k] >= p[k] ? (double)(c[k] - p[k]) / dt : 0.0)
        double busy = p && c[WEFT_STATS_W_BUSY_NS] >= p[WEFT_STATS_W_BUSY_NS]
                          ? (double)(c[WEFT_STATS_W_BUSY_NS] - p[WEFT_STATS_W_BUSY_NS]) * 1e-9 / dt : 0.0;
        if (busy > 1) busy = 1;
        printf("  %6" PRIu64 " %-9s ", i, state_name(c[WEFT_STATS_W_STATE]));
        draw_bar(busy);
        printf(" %5.1f%%", 100 * busy);
        if (tasks) put_rate(RATE(WEFT_STATS_W_TASKS));
        else printf(" %9s", "-");
        put_rate(RATE(WEFT_STATS_W_STEALS));
        put_rate(RATE(WEFT_STATS_W_STEAL_FAILS));
        put_rate(RATE(WEFT_STATS_W_PARKS));
        printf(" %6" PRIu64 "\n", c[WEFT_STATS_W_DEQUE]);
        total += RATE(WEFT_STATS_W_TASKS);
#undef RATE
    }
    if (tasks) {
        printf("  total tasks/s");
        put_rate(total);
        printf("\n");
    } else {
        printf("  (tasks/s: task metrics are off; run with WEFT_METRICS=1)\n");
    }
    free(b->prev);
    b->prev = cur, b->nwords = nwords;
}

static void usage(void) {
    fprintf(stderr, "usage: weft-top [-d seconds] [-n frames] <pid | statistics file>...\n"
                    "  A program publishes its statistics with WEFT_STATS=<path> (or weft_stats_start).\n");
}

int main(int argc, char **argv) {
    double delay = 1.0;
    long frames = -1;
    int opt;
    while ((opt = getopt(argc, argv, "d:n:h")) != -1) {
        if (opt == 'd') {
            /* A number of seconds, 1 ms to a day: atof took "nan" and "1e30",
             * which made the sleep's conversion to time_t undefined (frames
             * with no pause). */
            char *end;
            delay = strtod(optarg, &end);
            if (*optarg == '\0' || *end != '\0' || !(delay >= 0.001 && delay <= 86400)) {
                fprintf(stderr, "weft-top: -d %s: want seconds from 0.001 to 86400\n", optarg);
                return 2;
            }
        }
        else if (opt == 'n') {
            /* A count from 1: atol read "abc" as 0 frames (nothing shown,
             * exit 0) and "-3" or "2x"'s garbage as forever or a guess. */
            char *end;
            errno = 0;
            frames = strtol(optarg, &end, 10);
            if (*optarg == '\0' || *end != '\0' || errno || frames < 1) {
                fprintf(stderr, "weft-top: -n %s: want a number of frames from 1\n", optarg);
                return 2;
            }
        }
        else { usage(); return opt == 'h' ? 0 : 2; }
    }
    if (optind >= argc || delay <= 0) { usage(); return 2; }
    static struct block blocks[MAX_BLOCKS];
    int n = 0;
    for (int a = optind; a < argc && n < MAX_BLOCKS; a++) {
        const char *arg = argv[a];
        if (*arg && strspn(arg, "0123456789") == strlen(arg)) { /* "" is a file name, not pid "" */
            int k = blocks_of_pid(arg, blocks + n, MAX_BLOCKS - n);
            if (k == 0) fprintf(stderr, "weft-top: process %s publishes no weft statistics (start it with WEFT_STATS=<path>)\n", arg);
            if (k > 0) n += k;
        } else {
            char why[4400];
            if (block_open(&blocks[n], arg, why, sizeof why) == 0) n++;
            else fprintf(stderr, "weft-top: %s\n", why);
        }
    }
    if (n == 0) return 1;
    tty = isatty(1);
    for (int i = 0; i < n; i++) first_look(&blocks[i]);
    for (long f = 0; frames < 0 || f < frames; f++) {
        struct timespec ts = { (time_t)delay, (long)((delay - (double)(time_t)delay) * 1e9) };
        nanosleep(&ts, NULL);
        if (tty) fputs("\033[H\033[2J", stdout);
        else if (f) putchar('\n');
        printf("weft-top  frame %ld  every %.2g s\n", f + 1, delay);
        for (int i = 0; i < n; i++) draw_block(&blocks[i]);
        fflush(stdout);
    }
    return 0;
}
