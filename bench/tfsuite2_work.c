/* weft-bench — data, kernels and serial versions of black_scholes and
 * linear_pipeline (tfsuite2_work.h).
 * SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include "tfsuite2_work.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- black_scholes -------------------------------------------------------------- */

/* glibc's rand() from srand(1) (the TYPE_3 additive generator), so the options
 * are the ones Taskflow's generate_options(1000) makes, without touching the
 * process's own rand() state. */
typedef struct glibc_rand {
    unsigned k;
    uint32_t ring[31];
} glibc_rand;
static void grand_seed(glibc_rand *g, uint32_t seed) {
    int32_t r[344];
    r[0] = (int32_t)seed;
    for (int i = 1; i < 31; i++) {
        int32_t hi = r[i - 1] / 127773, lo = r[i - 1] % 127773;
        int32_t w = 16807 * lo - 2836 * hi;
        r[i] = w < 0 ? w + 2147483647 : w;
    }
    for (int i = 31; i < 34; i++) r[i] = r[i - 31];
    for (int i = 34; i < 344; i++) r[i] = (int32_t)((uint32_t)r[i - 31] + (uint32_t)r[i - 3]);
    for (int i = 0; i < 31; i++) g->ring[i] = (uint32_t)r[313 + i];
    g->k = 0; /* the ring holds r[n-31 .. n-1] from ring[k]; outputs start at r[344] */
}
static int grand(glibc_rand *g) {
    /* r[n] = r[n-31] + r[n-3]; the ring holds r[n-31 .. n-1] starting at k. */
    uint32_t v = g->ring[g->k] + g->ring[(g->k + 28) % 31];
    g->ring[g->k] = v;
    g->k = (g->k + 1) % 31;
    return (int)(v >> 1);
}

/* Taskflow's common.hpp, statement by statement: float variables, double
 * constants (so those products are computed in double and rounded on
 * assignment), the float overloads of exp / sqrt / log. */
#define inv_sqrt_2xPI 0.39894228040143270286
static float cndf(float InputX) {
    int sign;
    float OutputX, xInput, xNPrimeofX, expValues, xK2, xK2_2, xK2_3, xK2_4, xK2_5;
    float xLocal, xLocal_1, xLocal_2, xLocal_3;
    if (InputX < 0.0) {
        InputX = -InputX;
        sign = 1;
    } else {
        sign = 0;
    }
    xInput = InputX;
    expValues = expf(-0.5f * InputX * InputX);
    xNPrimeofX = expValues;
    xNPrimeofX = xNPrimeofX * inv_sqrt_2xPI;
    xK2 = 0.2316419 * xInput;
    xK2 = 1.0 + xK2;
    xK2 = 1.0 / xK2;
    xK2_2 = xK2 * xK2;
    xK2_3 = xK2_2 * xK2;
    xK2_4 = xK2_3 * xK2;
    xK2_5 = xK2_4 * xK2;
    xLocal_1 = xK2 * 0.319381530;
    xLocal_2 = xK2_2 * (-0.356563782);
    xLocal_3 = xK2_3 * 1.781477937;
    xLocal_2 = xLocal_2 + xLocal_3;
    xLocal_3 = xK2_4 * (-1.821255978);
    xLocal_2 = xLocal_2 + xLocal_3;
    xLocal_3 = xK2_5 * 1.330274429;
    xLocal_2 = xLocal_2 + xLocal_3;
    xLocal_1 = xLocal_2 + xLocal_1;
    xLocal = xLocal_1 * xNPrimeofX;
    xLocal = 1.0 - xLocal;
    OutputX = xLocal;
    if (sign) OutputX = 1.0 - OutputX;
    return OutputX;
}

static float blk_schls_eq_euro_no_div(float sptprice, float strike, float rate, float volatility, float time,
                                      int otype) {
    float OptionPrice, xRiskFreeRate, xVolatility, xTime, xSqrtTime, logValues, xLogTerm, xD1, xD2;
    float xPowerTerm, xDen, d1, d2, FutureValueX, NofXd1, NofXd2, NegNofXd1, NegNofXd2;
    xRiskFreeRate = rate;
    xVolatility = volatility;
    xTime = time;
    xSqrtTime = sqrtf(xTime);
    logValues = logf(sptprice / strike);
    xLogTerm = logValues;
    xPowerTerm = xVolatility * xVolatility;
    xPowerTerm = xPowerTerm * 0.5;
    xD1 = xRiskFreeRate + xPowerTerm;
    xD1 = xD1 * xTime;
    xD1 = xD1 + xLogTerm;
    xDen = xVolatility * xSqrtTime;
    xD1 = xD1 / xDen;
    xD2 = xD1 - xDen;
    d1 = xD1;
    d2 = xD2;
    NofXd1 = cndf(d1);
    NofXd2 = cndf(d2);
    FutureValueX = strike * (expf(-(rate) * (time)));
    if (otype == 0) {
        OptionPrice = (sptprice * NofXd1) - (FutureValueX * NofXd2);
    } else {
        NegNofXd1 = (1.0 - NofXd1);
        NegNofXd2 = (1.0 - NofXd2);
        OptionPrice = (FutureValueX * NegNofXd2) - (sptprice * NegNofXd1);
    }
    return OptionPrice;
}

void bs_option(const bs_data *d, int i) {
    d->prices[i] = blk_schls_eq_euro_no_div(d->sptprice[i], d->strike[i], d->rate[i], d->volatility[i],
                                            d->otime[i], d->otype[i]);
}

/* A signalling NaN: arithmetic never makes one, so no price can equal it. */
#define BS_POISON 0x7fa5a5a5u

static size_t bs_shape(size_t req) { return req < 1 ? 1 : req > 46340 ? 46340 : req; }
static void bs_destroy(void *p) {
    bs_data *d = p;
    if (!d) return;
    free(d->sptprice);
    free(d->otype);
    free(d->prices);
    free(d->want);
    free(d);
}
static int serial_bs_runs(bs_data *d) {
    for (int j = 0; j < d->runs; j++)
        for (int i = 0; i < d->n; i++) bs_option(d, i);
    return 0;
}
static void *bs_create(size_t n) {
    bs_data *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    d->n = d->runs = (int)n;
    /* One buffer for the five float inputs, as Taskflow's BUFFER. */
    d->sptprice = malloc(5 * n * sizeof(float));
    d->otype = malloc(n * sizeof(int));
    d->prices = malloc(n * sizeof(float));
    d->want = malloc(n * sizeof(float));
    if (!d->sptprice || !d->otype || !d->prices || !d->want) {
        bs_destroy(d);
        return NULL;
    }
    d->strike = d->sptprice + n;
    d->rate = d->strike + n;
    d->volatility = d->rate + n;
    d->otime = d->volatility + n;
    glibc_rand g;
    grand_seed(&g, 1);
    for (size_t i = 0; i < n; i++) { /* generate_options: s, strike, v, t, type, DGrefval */
        d->sptprice[i] = (float)(grand(&g) % 200);
        d->strike[i] = (float)(grand(&g) % 200);
        d->rate[i] = 0.1f;
        d->volatility[i] = grand(&g) % 100 / 100.0f;
        d->otime[i] = grand(&g) % 100 / 100.0f;
        d->otype[i] = grand(&g) % 2 ? 1 : 0; /* 'P' : 'C' */
        (void)grand(&g);                     /* DGrefval, unused */
    }
    /* The serial prices: a single pass (every run writes the same values). */
    float *prices = d->prices;
    d->prices = d->want;
    for (int i = 0; i < d->n; i++) bs_option(d, i);
    d->prices = prices;
    return d;
}
static void bs_reset(void *p) {
    bs_data *d = p;
    uint32_t poison = BS_POISON;
    for (int i = 0; i < d->n; i++) memcpy(&d->prices[i], &poison, sizeof poison);
}
static int bs_verify(const void *p, char *msg, size_t len) {
    const bs_data *d = p;
    /* Every implementation calls the same compiled kernel on the same inputs:
     * the same bits (compared as bits, as some options give NaN or inf: a zero
     * strike, volatility or time, as in Taskflow's inputs). */
    for (int i = 0; i < d->n; i++) {
        if (memcmp(&d->prices[i], &d->want[i], sizeof(float)) != 0) {
            snprintf(msg, len, "option %d: price %.9g, want %.9g", i, (double)d->prices[i], (double)d->want[i]);
            return -1;
        }
    }
    return 0;
}
const bench_work bench_work_black_scholes = {bs_shape, bs_create, bs_reset, bs_verify, bs_destroy};

static int serial_black_scholes(void *env, void *p) {
    (void)env;
    return serial_bs_runs(p);
}
const bench_ops bench_serial_black_scholes = {serial_black_scholes, NULL, NULL, NULL};

/* ---- linear_pipeline ------------------------------------------------------------ */

static void lp_work(void) {
    struct timespec ts = {0, 10000}; /* std::this_thread::sleep_for(10 us) */
    nanosleep(&ts, NULL);
}

int lp_input(lp_data *d, size_t *token) {
    lp_work();
    *token = d->made++;
    return *token == d->n;
}

void lp_filter(lp_data *d, int pipe, size_t token) {
    lp_work();
    if (token != d->seen[pipe]) d->bad++;
    d->seen[pipe]++;
}

static size_t lp_shape(size_t req) { return req < 1 ? 1 : req; }
static void *lp_create(size_t n) {
    lp_data *d = calloc(1, sizeof *d);
    if (d) d->n = n;
    return d;
}
static void lp_reset(void *p) {
    lp_data *d = p;
    size_t n = d->n;
    memset(d, 0, sizeof *d);
    d->n = n;
}
static int lp_verify(const void *p, char *msg, size_t len) {
    const lp_data *d = p;
    /* The first pipe ran n + 1 times (the last one stops), and each later pipe
     * saw tokens 0 .. n-1 once each, in order. */
    if (d->made != d->n + 1 || d->bad) {
        snprintf(msg, len, "first pipe called %zu times, want %zu; %zu tokens out of order", d->made, d->n + 1,
                 d->bad);
        return -1;
    }
    for (int s = 1; s < LP_PIPES; s++) {
        if (d->seen[s] != d->n) {
            snprintf(msg, len, "pipe %d saw %zu tokens, want %zu", s, d->seen[s], d->n);
            return -1;
        }
    }
    return 0;
}
const bench_work bench_work_linear_pipeline = {lp_shape, lp_create, lp_reset, lp_verify, free};

static int serial_linear_pipeline(void *env, void *p) {
    lp_data *d = p;
    size_t t;
    (void)env;
    while (!lp_input(d, &t))
        for (int s = 1; s < LP_PIPES; s++) lp_filter(d, s, t);
    return 0;
}
const bench_ops bench_serial_linear_pipeline = {serial_linear_pipeline, NULL, NULL, NULL};
