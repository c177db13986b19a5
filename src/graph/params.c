/* Typed parameters and composition factories: a factory declares the parameters
 * it needs, checks them (name and type) before building, and says clearly which
 * one is missing or mistyped. */
#include "graph/flow.h"
#include "graph/name_index.h"
#include "core/alloc.h"
#include "core/error_detail.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

struct param {
    char *name;
    weft_param_type type;
    union {
        int64_t i;
        double f;
        char *s;
        bool b;
    } v;
};

/* No error text is kept here: a failed get sets the calling thread's message
 * (docs/errors.md, R3), so gets only read the set and may run concurrently. */
struct weft_params {
    struct param *v;
    size_t n, cap;
    /* name -> entry: a search of v per set and get made n parameters cost
     * n^2 / 2 string compares (16,000: 0.9 s), and each make of a factory
     * with r required ones r times the parameters given. */
    weft__name_index names;
};

static const char *param_key(const void *ctx, uint32_t i, unsigned *tag) {
    *tag = 0;
    return ((const weft_params *)ctx)->v[i].name;
}

static const char *const type_names[] = {"int", "float", "string", "bool"};

weft_params *weft_params_create(weft_status *err) {
    weft_params *p = weft__calloc(sizeof *p);
    if (!p) return weft__fail_null(err, __func__, WEFT_ENOMEM, NULL);
    if (err) *err = WEFT_OK;
    return p;
}

static void param_clear_value(struct param *e) {
    if (e->type == WEFT_PARAM_STRING) weft__free_str(e->v.s);
}

void weft_params_destroy(weft_params *p) {
    if (!p) return;
    for (size_t i = 0; i < p->n; i++) {
        param_clear_value(&p->v[i]);
        weft__free_str(p->v[i].name);
    }
    weft__free(p->v, p->cap * sizeof *p->v);
    weft__name_index_free(&p->names);
    weft__free(p, sizeof *p);
}

static struct param *find(const weft_params *p, const char *name) {
    uint32_t i = weft__name_find(&p->names, name, 0, param_key, p);
    return i != WEFT__NAME_NONE ? &p->v[i] : NULL;
}

/* The entry for name, created if missing (value unset).  NULL: out of memory. */
static struct param *slot(weft_params *p, const char *name) {
    struct param *e = find(p, name);
    if (e) return e;
    if (p->n >= UINT32_MAX - 1 || !weft__name_reserve(&p->names, param_key, p)) return NULL;
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 8;
        struct param *v = weft__realloc(p->v, p->cap * sizeof *v, cap * sizeof *v);
        if (!v) return NULL;
        p->v = v;
        p->cap = cap;
    }
    char *copy = weft__strdup(name);
    if (!copy) return NULL;
    e = &p->v[p->n++];
    *e = (struct param){.name = copy, .type = WEFT_PARAM_INT};
    weft__name_set(&p->names, copy, 0, (uint32_t)(p->n - 1), param_key, p);
    return e;
}

static weft_status set(weft_params *p, const char *name, struct param val, const char *fn) {
    if (!p || !name) return weft__fail(fn, WEFT_EINVAL, "p or name is NULL");
    struct param *e = slot(p, name);
    if (!e) {
        if (val.type == WEFT_PARAM_STRING) weft__free_str(val.v.s);
        return weft__fail_st(fn, WEFT_ENOMEM);
    }
    param_clear_value(e);
    e->type = val.type;
    e->v = val.v;
    return WEFT_OK;
}

weft_status weft_params_set_int(weft_params *p, const char *name, int64_t v) {
    return set(p, name, (struct param){.type = WEFT_PARAM_INT, .v.i = v}, __func__);
}
weft_status weft_params_set_float(weft_params *p, const char *name, double v) {
    return set(p, name, (struct param){.type = WEFT_PARAM_FLOAT, .v.f = v}, __func__);
}
weft_status weft_params_set_bool(weft_params *p, const char *name, bool v) {
    return set(p, name, (struct param){.type = WEFT_PARAM_BOOL, .v.b = v}, __func__);
}
weft_status weft_params_set_string(weft_params *p, const char *name, const char *v) {
    if (!p || !name || !v) return weft__fail(__func__, WEFT_EINVAL, "p, name or v is NULL");
    char *copy = weft__strdup(v);
    if (!copy) return weft__fail_st(__func__, WEFT_ENOMEM);
    return set(p, name, (struct param){.type = WEFT_PARAM_STRING, .v.s = copy}, __func__);
}

/* Whether the calling thread's most recent get failed: what the deprecated
 * weft_params_error_message needs to say "" after a success, kept per thread
 * so that concurrent gets do not race. */
static _Thread_local bool last_get_failed;

/* The entry `name` if it has type `want` (an int also passes as a float);
 * otherwise the thread's message says what is wrong.  `fn` is the getter the
 * user called: a NULL argument is that call's plain failure, which R3 has
 * name the call ("weft_params_get" named none of the four). */
static weft_status lookup(const char *fn, const weft_params *p, const char *name, weft_param_type want,
                          const void *user_out, const struct param **out) {
    last_get_failed = true; /* a NULL out too: weft_params_error_message reports it */
    if (!p || !name || !user_out) return weft__fail(fn, WEFT_EINVAL, "%s is NULL", !p ? "p" : !name ? "name" : "out");
    const struct param *e = find(p, name);
    if (!e) {
        weft__set_error_message("parameter '%s' is missing (want %s)", name, type_names[want]);
        return WEFT_ENOENT;
    }
    if (e->type != want && !(want == WEFT_PARAM_FLOAT && e->type == WEFT_PARAM_INT)) {
        weft__set_error_message("parameter '%s' is %s %s, expected %s", name, e->type == WEFT_PARAM_INT ? "an" : "a",
                                type_names[e->type], type_names[want]);
        return WEFT_EINVAL;
    }
    last_get_failed = false;
    *out = e;
    return WEFT_OK;
}

weft_status weft_params_get_int(const weft_params *p, const char *name, int64_t *out) {
    const struct param *e = NULL;
    weft_status st = lookup(__func__, p, name, WEFT_PARAM_INT, out, &e);
    if (st == WEFT_OK) *out = e->v.i;
    return st;
}
weft_status weft_params_get_float(const weft_params *p, const char *name, double *out) {
    const struct param *e = NULL;
    weft_status st = lookup(__func__, p, name, WEFT_PARAM_FLOAT, out, &e);
    if (st == WEFT_OK) *out = e->type == WEFT_PARAM_INT ? (double)e->v.i : e->v.f;
    return st;
}
weft_status weft_params_get_string(const weft_params *p, const char *name, const char **out) {
    const struct param *e = NULL;
    weft_status st = lookup(__func__, p, name, WEFT_PARAM_STRING, out, &e);
    if (st == WEFT_OK) *out = e->v.s;
    return st;
}
weft_status weft_params_get_bool(const weft_params *p, const char *name, bool *out) {
    const struct param *e = NULL;
    weft_status st = lookup(__func__, p, name, WEFT_PARAM_BOOL, out, &e);
    if (st == WEFT_OK) *out = e->v.b;
    return st;
}

const char *weft_params_error_message(const weft_params *p) {
    return p && last_get_failed ? weft_last_error_message() : "";
}

/* ---- factories ----------------------------------------------------------------- */

struct weft_factory {
    char *name;
    weft_composition_build_fn build;
    void *arg;
    weft_params *required; /* name -> type (the value is unused) */
    char errmsg[192];
};

weft_factory *weft_factory_create(const char *name, weft_composition_build_fn build, void *arg, weft_status *err) {
    weft_status st = build ? WEFT_OK : weft__fail(__func__, WEFT_EINVAL, "build is NULL");
    weft_factory *f = build ? weft__calloc(sizeof *f) : NULL;
    if (f && (f->required = weft_params_create(NULL)) && (!name || (f->name = weft__strdup(name)))) {
        f->build = build;
        f->arg = arg;
        if (err) *err = WEFT_OK;
        return f;
    }
    weft_factory_destroy(f);
    if (st == WEFT_OK) st = weft__fail_st(__func__, WEFT_ENOMEM);
    if (err) *err = st;
    return NULL;
}

void weft_factory_destroy(weft_factory *f) {
    if (!f) return;
    weft_params_destroy(f->required);
    weft__free_str(f->name);
    weft__free(f, sizeof *f);
}

weft_status weft_factory_require(weft_factory *f, const char *name, weft_param_type type) {
    if (!f || !name || (unsigned)type > WEFT_PARAM_BOOL)
        return weft__fail(__func__, WEFT_EINVAL, "f or name is NULL, or the type is unknown");
    return set(f->required, name, (struct param){.type = type}, __func__);
}

/* Records why the most recent make on f failed in f and as the thread's
 * message; returns st. */
/* (noinline: `why` may be longer than the room left, and is cut there) */
static __attribute__((noinline, cold)) weft_status factory_error(weft_factory *f, weft_status st, const char *why) {
    /* Through f->errmsg: `why` may be the thread's message itself. */
    snprintf(f->errmsg, sizeof f->errmsg, "factory '%s': %s", f->name ? f->name : "", why);
    weft__set_error_message("%s", f->errmsg);
    return st;
}

/* Checks p against the declared parameters; the first problem is reported. */
static weft_status check_params(weft_factory *f, const weft_params *p) {
    for (size_t i = 0; i < f->required->n; i++) {
        const struct param *req = &f->required->v[i], *e;
        weft_status st = p ? lookup("weft_factory_make", p, req->name, req->type, &e, &e) : WEFT_ENOENT;
        if (st != WEFT_OK) return factory_error(f, st, p ? weft_last_error_message() : "no parameters given");
    }
    return WEFT_OK;
}

weft_composition *weft_factory_make(weft_factory *f, const weft_params *p, weft_status *err) {
    weft_status st = f ? check_params(f, p) : weft__fail(__func__, WEFT_EINVAL, "f is NULL");
    weft_composition *c = NULL;
    if (st == WEFT_OK) c = weft_composition_create(f->name, &st);
    if (st == WEFT_ENOMEM) factory_error(f, st, "out of memory");
    /* The build function's own failure says why (a builder's message): kept,
     * after "build failed (<status>): ".  It was replaced by the status's name alone
     * ("build failed: WEFT_EINVAL", tests/sched_hunt42.c).  The thread's
     * message is cleared first, so that one left by an earlier call is not
     * taken for the build's; restored if the build succeeds (errors.md R3). */
    weft__saved_message before;
    if (c) {
        weft__error_message_save(&before);
        weft__set_error_message("%s", "");
    }
    if (c && (st = f->build(c, p, f->arg)) != WEFT_OK) {
        char why[sizeof f->errmsg];
        const char *own = weft_last_error_message();
        if (own[0]) snprintf(why, sizeof why, "build failed (%s): %s", weft_errname(st), own);
        else snprintf(why, sizeof why, "build failed: %s", weft_errname(st));
        factory_error(f, st, why);
        (void)weft_composition_destroy(c); /* (nothing runs its graph: its build failed) */
        c = NULL;
    }
    if (c && st == WEFT_OK) weft__error_message_restore(&before);
    if (f && st == WEFT_OK) f->errmsg[0] = '\0'; /* the most recent make succeeded */
    if (err) *err = st;
    return c;
}

const char *weft_factory_error_message(const weft_factory *f) { return f ? f->errmsg : ""; }
