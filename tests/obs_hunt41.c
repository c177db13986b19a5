/* Tooling outputs under awkward names (adversarial round 41): every file the
 * profiler and the dumps write stays valid in its format (JSON, Chrome trace,
 * SVG/HTML as XML, DOT read by graphviz, folded stacks one line per stack)
 * with task and taskflow names holding quotes, backslashes, newlines, <>&,
 * non-ASCII and invalid UTF-8, and with no task at all.  Files are checked
 * with python3 (and dot where installed); skipped where python3 is missing. */
#define _GNU_SOURCE
#include "obs_util.h"

/* Names that stress every escaping rule. */
static const char *const h41_names[] = {
    "q\"uote", "back\\slash", "new\nline", "cr\rtab\t", "lt<gt>amp&", "semi;colon", "sp ace",
    "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "bad\xff\xfe", "trunc\xe2\x82", "]]>--", "'apos'",
    "{\"json\":1}", "x%sy%n", "", "nonchar \xef\xbf\xbe \xef\xbf\xbf",
};
#define H41_NNAMES (sizeof h41_names / sizeof *h41_names)

static void h41_write(const char *path, weft_status (*fn)(const weft_executor *, FILE *), const weft_executor *ex) {
    FILE *f = fopen(path, "w");
    ASSERT_NOT_NULL(f);
    ASSERT_OK(fn(ex, f));
    ASSERT_EQ(fclose(f), 0);
}

static weft_status h41_folded(const weft_executor *ex, FILE *f) {
    return weft_profiler_write_folded(ex, NULL, f);
}
static weft_status h41_flame(const weft_executor *ex, FILE *f) {
    return weft_profiler_write_flame_svg(ex, NULL, f);
}

/* The checks of every output: argv json html timeline flame folded dot dump
 * ntasks; dot is also run through graphviz when installed. */
static const char h41_check[] =
    "import json,sys,subprocess,shutil,xml.dom.minidom\n"
    "js,html,tl,fl,fo,dot,plain,n=sys.argv[1:9]; n=int(n)\n"
    "def txt(p): return open(p,encoding='utf-8',errors='strict').read()\n"
    "d=json.loads(txt(js))\n"
    "ev=d['traceEvents'] if isinstance(d,dict) else d\n"
    "for e in ev:\n"
    "  assert 'ph' in e and 'pid' in e and 'name' in e, e\n"
    "  if e['ph']=='X': assert 'ts' in e and 'dur' in e and 'tid' in e and e['dur']>=0, e\n"
    "  if e['ph'] in ('i','I'): assert 'ts' in e and 'tid' in e, e\n"
    "  if e['ph']=='M': assert 'args' in e, e\n"
    "tasks=[e for e in ev if e.get('cat')=='task']\n"
    "assert len(tasks)==n, (len(tasks), n)\n"
    "for p in (tl,fl):\n"
    "  xml.dom.minidom.parseString(txt(p).encode('utf-8'))\n"
    "h=txt(html)\n"
    "assert h.startswith('<!DOCTYPE html>'), h[:40]\n"
    "import html.parser\n"
    "class P(html.parser.HTMLParser):\n"
    "  def __init__(s): super().__init__(); s.stack=[]\n"
    "  def handle_starttag(s,t,a):\n"
    "    if t not in ('meta','br','hr','img','input','link','wbr','col','area','base','source'): s.stack.append(t)\n"
    "  def handle_endtag(s,t):\n"
    "    assert s.stack and s.stack[-1]==t, (t, s.stack[-5:])\n"
    "    s.stack.pop()\n"
    "p=P(); p.feed(h); p.close(); assert not p.stack, p.stack\n"
    "# the SVGs inside the report are XML too\n"
    "import re\n"
    "for m in re.finditer(r'<svg.*?</svg>', h, re.S): xml.dom.minidom.parseString(m.group(0).encode('utf-8'))\n"
    "lines=txt(fo).split('\\n')\n"
    "assert lines[-1]=='', 'folded output does not end with a newline'\n"
    "for l in lines[:-1]:\n"
    "  st,_,w=l.rpartition(' ')\n"
    "  assert st and w.isdigit() and int(w)>0, repr(l)\n"
    "  assert all(fr for fr in st.split(';')), repr(l)\n"
    "  assert not any(ord(c)<32 for c in l), repr(l)\n"
    "assert len(lines)-1 == len(set(l.rpartition(' ')[0] for l in lines[:-1])), 'a stack on two lines'\n"
    "if n: assert len(lines)-1>=1\n"
    "dt=txt(dot)\n"
    "if shutil.which('dot'):\n"
    "  r=subprocess.run(['dot','-Tsvg',dot],capture_output=True)\n"
    "  assert r.returncode==0 and not r.stderr, r.stderr\n"
    "if plain!='-':\n"
    "  if shutil.which('dot'):\n"
    "    r=subprocess.run(['dot','-Tsvg',plain],capture_output=True)\n"
    "    assert r.returncode==0 and not r.stderr, r.stderr\n";

static void h41_check_all(weft_executor *ex, weft_taskflow *tf, size_t ntasks) {
    char js[64], html[64], tl[64], fl[64], fo[64], dot[64], plain[64], args[1024];
    temp_path(js, sizeof js, ".json");
    temp_path(html, sizeof html, ".html");
    temp_path(tl, sizeof tl, ".svg");
    temp_path(fl, sizeof fl, ".svg");
    temp_path(fo, sizeof fo, ".folded");
    temp_path(dot, sizeof dot, ".dot");
    temp_path(plain, sizeof plain, ".dot");
    h41_write(js, weft_profiler_write_json, ex);
    h41_write(html, weft_profiler_write_html, ex);
    h41_write(tl, weft_profiler_write_timeline_svg, ex);
    h41_write(fl, h41_flame, ex);
    h41_write(fo, h41_folded, ex);
    FILE *f = fopen(dot, "w");
    ASSERT_NOT_NULL(f);
    ASSERT_OK(weft_taskflow_dump_dot_profiled(tf, ex, f));
    fclose(f);
    f = fopen(plain, "w");
    ASSERT_NOT_NULL(f);
    ASSERT_OK(weft_taskflow_dump_dot(tf, f));
    fclose(f);
    snprintf(args, sizeof args, "%s %s %s %s %s %s %s %zu", js, html, tl, fl, fo, dot, plain, ntasks);
    int rc = run_python(h41_check, args);
    if (rc != 0 && getenv("H41_KEEP")) fprintf(stderr, "kept %s\n", args);
    else unlink(js), unlink(html), unlink(tl), unlink(fl), unlink(fo), unlink(dot), unlink(plain);
    ASSERT_EQ(rc, 0);
}

TEST(every_profile_output_is_valid_with_names_holding_quotes_newlines_markup_and_bad_utf8) {
    if (!have_program("python3")) SKIP("python3 not installed");
    weft_executor *ex = make_profiled(2, 0);
    weft_taskflow *tf = make_taskflow("flow \"q\" \\ \n <&> \xc3\xa9 \xff");
    atomic_int count = 0;
    weft_task prev = { 0 };
    for (size_t i = 0; i < H41_NNAMES; i++) {
        weft_task t = must_emplace(tf, bump, &count);
        ASSERT_OK(weft_task_set_name(t, h41_names[i]));
        if (!weft_task_is_null(prev) && i % 3) ASSERT_OK(weft_precede(prev, t));
        prev = t;
    }
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_OK(weft_executor_wait_all(ex));
    h41_check_all(ex, tf, H41_NNAMES);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

TEST(every_profile_output_is_valid_with_no_task_at_all) {
    if (!have_program("python3")) SKIP("python3 not installed");
    weft_executor *ex = make_profiled(2, 0);
    weft_taskflow *tf = make_taskflow("empty");
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_OK(weft_executor_wait_all(ex));
    h41_check_all(ex, tf, 0);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

/* ---- log messages are one line ---- */

static char h41_msgs[8][600];
static int h41_nmsgs;
static void h41_log(void *user, weft_log_level level, const char *message) {
    (void)user, (void)level;
    if (h41_nmsgs < 8) snprintf(h41_msgs[h41_nmsgs++], sizeof h41_msgs[0], "%s", message);
}

/* observe.h promises a callback "one line, no newline"; a warning quoting a
 * bad environment value with a newline in it used to pass it on as is (and
 * the stderr sink wrote two lines). */
TEST(a_log_message_quoting_a_value_with_a_newline_is_still_one_line) {
    ASSERT_EQ(setenv("WEFT_METRICS", "1\nsecond line\r\x1b[31m", 1), 0);
    weft_log_set_callback(h41_log, NULL);
    weft_status st = WEFT_OK;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = 1 }, &st);
    ASSERT_NOT_NULL(ex);
    weft_executor_destroy(ex);
    weft_log_set_callback(NULL, NULL);
    unsetenv("WEFT_METRICS");
    int seen = 0;
    for (int i = 0; i < h41_nmsgs; i++) {
        if (!strstr(h41_msgs[i], "WEFT_METRICS")) continue;
        seen++;
        for (const char *p = h41_msgs[i]; *p; p++)
            if ((unsigned char)*p < 0x20 && *p != '\t') TEST_FAIL_("control character %#x in '%s'", *p, h41_msgs[i]);
    }
    ASSERT_EQ(seen, 1);
}

/* An executor whose profiler never ran: every export is still a valid (empty)
 * file of its format, and a folded export writes nothing. */
TEST(every_profile_output_is_valid_for_an_executor_never_profiled) {
    if (!have_program("python3")) SKIP("python3 not installed");
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("never \"profiled\"\n");
    atomic_int count = 0;
    weft_task t = must_emplace(tf, bump, &count);
    ASSERT_OK(weft_task_set_name(t, "a<b>&\"c\"\n"));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    h41_check_all(ex, tf, 0);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

/* Folded stacks with the caller's taskflows named (names holding ';', a
 * newline, quotes and bad UTF-8) and a frame per worker: still one line per
 * stack, every frame non-empty, the flame graph well-formed. */
TEST(folded_stacks_with_named_taskflows_and_workers_stay_one_line_per_stack) {
    if (!have_program("python3")) SKIP("python3 not installed");
    weft_executor *ex = make_profiled(2, 0);
    weft_taskflow *a = make_taskflow("semi;colon\nnew \"line\" \xff"), *b = make_taskflow("");
    atomic_int count = 0;
    for (size_t i = 0; i < H41_NNAMES; i++) {
        ASSERT_OK(weft_task_set_name(must_emplace(a, bump, &count), h41_names[i]));
        ASSERT_OK(weft_task_set_name(must_emplace(b, bump, &count), h41_names[i]));
    }
    ASSERT_OK(weft_run_and_wait(ex, a));
    ASSERT_OK(weft_run_and_wait(ex, b));
    ASSERT_OK(weft_executor_wait_all(ex));
    const weft_taskflow *named[] = { a, b };
    weft_folded_options opt = { .taskflows = named, .ntaskflows = 2, .per_worker = true };
    char fo[64], fl[64], args[256];
    temp_path(fo, sizeof fo, ".folded");
    temp_path(fl, sizeof fl, ".svg");
    FILE *f = fopen(fo, "w");
    ASSERT_NOT_NULL(f);
    ASSERT_OK(weft_profiler_write_folded(ex, &opt, f));
    fclose(f);
    f = fopen(fl, "w");
    ASSERT_NOT_NULL(f);
    ASSERT_OK(weft_profiler_write_flame_svg(ex, &opt, f));
    fclose(f);
    snprintf(args, sizeof args, "%s %s %d", fo, fl, (int)(2 * H41_NNAMES));
    ASSERT_EQ(run_python("import sys,xml.dom.minidom\n"
                         "fo,fl,n=sys.argv[1],sys.argv[2],int(sys.argv[3])\n"
                         "t=open(fo,encoding='utf-8',errors='strict').read()\n"
                         "lines=t.split('\\n'); assert lines[-1]=='', 'no final newline'\n"
                         "total=0\n"
                         "for l in lines[:-1]:\n"
                         "  st,_,w=l.rpartition(' ')\n"
                         "  assert w.isdigit() and int(w)>0, repr(l)\n"
                         "  fr=st.split(';')\n"
                         "  assert all(fr) and fr[0].startswith('executor ') and fr[1].startswith('worker '), repr(l)\n"
                         "  assert fr[2].startswith('taskflow '), repr(l)\n"
                         "  total+=1\n"
                         "assert total>=2, total\n"
                         "xml.dom.minidom.parseString(open(fl,'rb').read())\n",
                         args),
              0);
    unlink(fo), unlink(fl);
    ASSERT_OK(weft_taskflow_destroy(a));
    ASSERT_OK(weft_taskflow_destroy(b));
    weft_executor_destroy(ex);
}

/* ---- the state dump ---- */

static atomic_int h41_go, h41_in;
static int h41_block(weft_ctx *ctx, void *arg) {
    (void)ctx, (void)arg;
    atomic_fetch_add(&h41_in, 1);
    while (!atomic_load(&h41_go)) sleep_us(100);
    return 0;
}

/* The dump is a line per worker and a line per task it runs: a task name
 * with a newline split its line, and a 400-byte name cut the line before its
 * newline, so the next worker's line was glued to it. */
TEST(the_state_dump_keeps_a_line_per_worker_and_task_whatever_the_names) {
    weft_status st = WEFT_OK;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = 2, .metrics = true }, &st);
    ASSERT_NOT_NULL(ex);
    weft_taskflow *tf = make_taskflow("dump");
    char name[400];
    memset(name, 'x', sizeof name);
    name[sizeof name - 1] = '\0';
    name[5] = '\n';
    ASSERT_OK(weft_task_set_name(must_emplace(tf, h41_block, NULL), name));
    ASSERT_OK(weft_task_set_name(must_emplace(tf, h41_block, NULL), "two\nlines\r"));
    weft_future *fu = NULL;
    ASSERT_OK(weft_run(ex, tf, &fu));
    while (atomic_load(&h41_in) < 2) sleep_us(100);
    char path[64];
    temp_path(path, sizeof path, ".txt");
    FILE *f = fopen(path, "w");
    ASSERT_NOT_NULL(f);
    ASSERT_OK(weft_executor_dump(ex, f));
    fclose(f);
    atomic_store(&h41_go, 1);
    ASSERT_OK(weft_future_wait(fu));
    weft_future_destroy(fu);
    char *text = read_file(path);
    int workers = 0, tasks = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (strncmp(line, "  worker ", 9) == 0) workers++;
        else if (strncmp(line, "    task '", 10) == 0) tasks++;
        else if (strncmp(line, "weft executor ", 14) != 0 && strncmp(line, "  ", 2) != 0)
            TEST_FAIL_("a line that is no line of the dump: '%s'", line);
        if (strstr(line + 1, "  worker ")) TEST_FAIL_("two lines in one: '%s'", line);
    }
    ASSERT_EQ(workers, 2);
    ASSERT_EQ(tasks, 2);
    free(text);
    unlink(path);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

/* ---- the JSON log sink ---- */

static int h41_destroy_own(weft_ctx *ctx, void *arg) {
    (void)arg;
    weft_executor_destroy(weft_ctx_executor(ctx)); /* refused from a worker: a warning */
    return 0;
}

/* A warning logged by a task whose name holds quotes, a newline, markup and
 * bad UTF-8 (longer than the 63 bytes the entry keeps, cut inside a
 * multi-byte character) is one JSON object on one line, with the task, the
 * worker and the run. */
TEST(the_json_log_sink_writes_one_valid_object_per_line_for_awkward_task_names) {
    if (!have_program("python3")) SKIP("python3 not installed");
    char path[64], args[128];
    temp_path(path, sizeof path, ".jsonl");
    FILE *f = fopen(path, "w");
    ASSERT_NOT_NULL(f);
    ASSERT_OK(weft_log_set_json(f));
    weft_status st = WEFT_OK;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = 1, .metrics = true }, &st);
    ASSERT_NOT_NULL(ex);
    weft_taskflow *tf = make_taskflow("log");
    char name[80];
    snprintf(name, sizeof name, "%s", "q\"b\\n\nl<&>\xff 0123456789012345678901234567890123456789012345\xe2\x82\xac\xe2\x82\xac");
    ASSERT_OK(weft_task_set_name(must_emplace(tf, h41_destroy_own, NULL), name));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_OK(weft_log_set_json(NULL));
    fclose(f);
    snprintf(args, sizeof args, "%s", path);
    ASSERT_EQ(run_python("import json,sys\n"
                         "lines=open(sys.argv[1],'rb').read().split(b'\\n')\n"
                         "assert lines[-1]==b'', 'no final newline'\n"
                         "objs=[json.loads(l.decode('utf-8')) for l in lines[:-1]]\n"
                         "w=[o for o in objs if 'weft_executor_destroy' in o['message']]\n"
                         "assert len(w)==1, objs\n"
                         "o=w[0]\n"
                         "assert o['level']=='warn' and o['worker']==0 and o['run']>=1, o\n"
                         "assert o['task'].startswith('q\"b\\\\n\\nl<&>\\ufffd 0123'), o['task']\n",
                         args),
              0);
    unlink(path);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

/* Past 20000 spans the timeline switches to one busy-ness bar per pixel
 * column: that drawing too is well-formed XML, in the SVG and in the report,
 * with names that need escaping. */
TEST(the_dense_timeline_of_over_20000_spans_is_well_formed) {
    if (!have_program("python3")) SKIP("python3 not installed");
    weft_executor *ex = make_profiled(2, 0);
    weft_taskflow *tf = make_taskflow("dense <&>");
    atomic_int count = 0;
    for (int i = 0; i < 2000; i++) ASSERT_OK(weft_task_set_name(must_emplace(tf, bump, &count), h41_names[i % H41_NNAMES]));
    for (int r = 0; r < 12; r++) ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_OK(weft_executor_wait_all(ex));
    uint64_t spans = 0;
    ASSERT_OK(weft_profiler_count(ex, &spans, NULL));
    ASSERT_TRUE(spans > 20000);
    char tl[64], html[64], args[256];
    temp_path(tl, sizeof tl, ".svg");
    temp_path(html, sizeof html, ".html");
    h41_write(tl, weft_profiler_write_timeline_svg, ex);
    h41_write(html, weft_profiler_write_html, ex);
    snprintf(args, sizeof args, "%s %s", tl, html);
    ASSERT_EQ(run_python("import sys,re,xml.dom.minidom\n"
                         "xml.dom.minidom.parseString(open(sys.argv[1],'rb').read())\n"
                         "h=open(sys.argv[2],encoding='utf-8',errors='strict').read()\n"
                         "for m in re.finditer(r'<svg.*?</svg>', h, re.S): xml.dom.minidom.parseString(m.group(0).encode())\n",
                         args),
              0);
    unlink(tl), unlink(html);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

/* ---- exports when memory runs out ---- */

#include "counting_alloc.h"

static weft_status h41_profile_get(const weft_executor *ex, FILE *f) {
    (void)f;
    weft_profile *p = NULL;
    weft_status st = weft_profile_get(ex, &p);
    if (st != WEFT_OK && p) return WEFT_EINVAL; /* *out must be NULL on failure */
    weft_profile_free(p);
    return st;
}
static const weft_taskflow *h41_dot_tf;
static weft_status h41_dot_profiled(const weft_executor *ex, FILE *f) {
    return weft_taskflow_dump_dot_profiled(h41_dot_tf, ex, f);
}

/* Each export, with its k-th allocation failing for every k in turn: it
 * returns WEFT_OK or WEFT_ENOMEM, nothing else, and gives back every byte it
 * took (the counting allocator's balance is unchanged after each call). */
TEST(every_profile_export_fails_cleanly_at_each_allocation) {
    weft_set_allocator(&counting);
    weft_executor *ex = make_profiled(2, 0);
    weft_taskflow *tf = make_taskflow("oom");
    atomic_int count = 0;
    for (size_t i = 0; i < 40; i++) ASSERT_OK(weft_task_set_name(must_emplace(tf, bump, &count), h41_names[i % H41_NNAMES]));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_OK(weft_executor_wait_all(ex));
    ASSERT_OK(weft_profiler_stop(ex));
    h41_dot_tf = tf;
    static weft_status (*const fns[])(const weft_executor *, FILE *) = {
        weft_profiler_write_json, weft_profiler_write_html, weft_profiler_write_timeline_svg, h41_flame, h41_folded,
        h41_profile_get, h41_dot_profiled,
    };
    FILE *sink = fopen("/dev/null", "w");
    ASSERT_NOT_NULL(sink);
    for (size_t k = 0; k < sizeof fns / sizeof *fns; k++) {
        for (long n = 1, tries = 0;; n++) {
            long long before = atomic_load(&A.outstanding);
            fail_allocation(n);
            weft_status st = fns[k](ex, sink);
            bool hit = atomic_load(&A.failures) > 0;
            fail_allocation(0);
            if (st != WEFT_OK && st != WEFT_ENOMEM) TEST_FAIL_("export %zu, allocation %ld failing: %s", k, n, weft_errname(st));
            if (atomic_load(&A.outstanding) != before) {
                /* A worker going idle may still flush its last batch of
                 * spans into a new chunk (its allocation, not the export's):
                 * the same failure again, once the workers are quiet. */
                if (++tries < 4) {
                    sleep_us(50000);
                    n--;
                    continue;
                }
                TEST_FAIL_("export %zu, allocation %ld failing: %lld bytes not given back", k, n,
                           atomic_load(&A.outstanding) - before);
            }
            tries = 0;
            if (!hit) {
                ASSERT_OK(st);
                break;
            }
            if (n > 100000) TEST_FAIL_("export %zu never succeeds", k);
        }
    }
    fclose(sink);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
    weft_set_allocator(NULL);
}
