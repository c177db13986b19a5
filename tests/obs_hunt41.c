/* Tooling outputs under awkward names (adversarial round 41): every file the
 * profiler and the dumps write stays valid in its format (JSON, Chrome trace,
 * SVG/HTML as XML, DOT read by graphviz, folded stacks one line per stack)
 * with task and taskflow names holding quotes, backslashes, newlines, <>&,
 * non-ASCII and invalid UTF-8, and with no task at all.  Files are checked
 * with python3 (and dot where installed); skipped where python3 is missing. */
#define _GNU_SOURCE
#include "obs_util.h"

static int h41_python(const char *program, const char *args) {
    char script[64], cmd[2048];
    temp_path(script, sizeof script, ".py");
    FILE *f = fopen(script, "w");
    ASSERT_NOT_NULL(f);
    fputs(program, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "python3 %s %s", script, args);
    int rc = shell(cmd);
    unlink(script);
    return rc;
}

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
    int rc = h41_python(h41_check, args);
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
