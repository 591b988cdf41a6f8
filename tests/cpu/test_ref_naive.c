/*
 * test_ref_naive: each threaded reference (mla_ref_*) against the naive formula (mla_naive_*) on
 * small random problems: causal and not, varlen, permuted pages, custom scale, h in {16, 128}.
 * Both compute in double; their outputs are fp32, so the fp64 agreement is checked as: every
 * element within 1e-9 * max|ref| plus one fp32 rounding step (2^-23 relative) of itself. Two
 * double results that agree to ~1e-9 round to the same float or to neighbours; a real bug
 * (a wrong mask, a wrong page, a missing term) moves elements by far more.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "ref.h"

static int n_pass, n_fail;

/* max over elements of |a-b| / (1e-9*maxref + 2^-23*|b|); <= 1 passes. -inf must match exactly. */
static double agreement(const float *a, const float *b, size_t n)
{
    double maxref = 0.0, worst = 0.0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(b[i]) && fabs(b[i]) > maxref) maxref = fabs(b[i]);
    for (size_t i = 0; i < n; i++) {
        if (isinf(b[i]) || isinf(a[i])) {
            if (a[i] != b[i]) return INFINITY;
            continue;
        }
        if (isnan(a[i]) || isnan(b[i])) return INFINITY;
        double tol = 1e-9 * maxref + ldexp(fabs(b[i]), -23) + 1e-30;
        double r = fabs((double)a[i] - b[i]) / tol;
        if (r > worst) worst = r;
    }
    return worst;
}

static double rel_l2(const float *a, const float *b, size_t n)
{
    double se = 0, sr = 0;
    for (size_t i = 0; i < n; i++) {
        if (isinf(b[i])) continue;
        se += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
        sr += (double)b[i] * b[i];
    }
    return sr > 0 ? sqrt(se / sr) : sqrt(se);
}

static void report(const char *name, const char *what, mla_status s1, mla_status s2, const float *o1,
                   const float *o2, size_t no, const float *l1, const float *l2, size_t nl)
{
    if (s1 != MLA_STATUS_OK || s2 != MLA_STATUS_OK) {
        printf("FAIL %s %s: status %d / %d: %s\n", name, what, s1, s2, mla_last_error());
        n_fail++;
        return;
    }
    double ao = agreement(o1, o2, no), al = agreement(l1, l2, nl);
    int ok = ao <= 1.0 && al <= 1.0;
    printf("%s %s %s: out agreement %.2f lse agreement %.2f (<= 1 passes) rel_l2=%.1e\n", ok ? "PASS" : "FAIL",
           name, what, ao, al, rel_l2(o1, o2, no));
    ok ? n_pass++ : n_fail++;
}

typedef struct tcase {
    int b, s, t, h, n, causal, varlen, permute, trend;
    float scale;   /* 0 = default 1/sqrt(d+p) */
    uint64_t seed;
} tcase;

/* The generator's logit trend does what GPU cases rely on: for request 0, query row (last
 * position, head 0), the scaled score's maximum over each 64-token page rises page after page
 * (trend +1) or never reaches page 0's again (trend -1). Scores from the paged cache, in double.
 * Returns the number of pages that break it. */
static int trend_violations(const mla_gen *g, const mla_problem *pb, int trend)
{
    const int kp = pb->k + pb->p, page = pb->page_size, t = g->seqlens[0];
    const uint16_t *q = g->mla_q + (size_t)(pb->s - 1) * pb->h * kp;   /* request 0, last position, head 0 */
    int bad = 0;
    double first = 0, prev = 0;
    for (int pg = 0; pg * page < t; pg++) {
        double mx = -INFINITY;
        for (int j = pg * page; j < t && j < (pg + 1) * page; j++) {
            const uint16_t *kv = g->cache + ((size_t)g->block_table[pg] * page + j % page) * kp;
            double dot = 0;
            for (int e = 0; e < kp; e++) dot += (double)mla_bf16_to_f32(q[e]) * mla_bf16_to_f32(kv[e]);
            if (dot * pb->scale > mx) mx = dot * pb->scale;
        }
        if (pg == 0)
            first = mx;
        else if (trend > 0 ? !(mx > prev) : !(mx < first))
            bad++;
        prev = mx;
    }
    return bad;
}

static void run_case(const tcase *c)
{
    mla_problem pb = {.b = c->b, .s = c->s, .t = c->t, .h = c->h, .d = 128, .k = 512, .p = 64, .n = c->n,
                      .page_size = 64, .causal = c->causal};
    pb.scale = c->scale > 0 ? c->scale : (float)(1.0 / sqrt(192.0));
    mla_gen_options opt = {.seed = c->seed, .varlen = c->varlen, .permute_pages = c->permute,
                           .logit_trend = c->trend};
    mla_gen g;
    char name[160];
    snprintf(name, sizeof name, "b=%d s=%d t=%d h=%d n=%d causal=%d varlen=%d permute=%d scale=%.3g trend=%d", c->b,
             c->s, c->t, c->h, c->n, c->causal, c->varlen, c->permute, (double)pb.scale, c->trend);
    if (mla_gen_create(&pb, &opt, &g) != MLA_STATUS_OK) {
        printf("FAIL %s: gen: %s\n", name, mla_last_error());
        n_fail++;
        return;
    }
    if (c->trend) {
        int bad = trend_violations(&g, &pb, c->trend);
        if (bad) {
            printf("FAIL %s: page maxima of request 0 do not follow the trend at %d pages\n", name, bad);
            n_fail++;
        } else {
            printf("ok   %s: page maxima follow the trend\n", name);
            n_pass++;
        }
    }
    size_t rows = (size_t)c->b * c->s * c->h, nl = rows;
    float *o1 = malloc(sizeof(float) * rows * 512), *o2 = malloc(sizeof(float) * rows * 512);
    float *l1 = malloc(sizeof(float) * nl), *l2 = malloc(sizeof(float) * nl);

    mla_flash_attention_tensors fa;
    mla_gen_flash_attention_tensors(&g, &fa);
    mla_status s1 = mla_ref_flash_attention(&pb, &fa, o1, l1, 0);
    mla_status s2 = mla_naive_flash_attention(&pb, &fa, o2, l2);
    report(name, "flash_attention", s1, s2, o1, o2, rows * 128, l1, l2, nl);

    mla_flash_mla_tensors ml;
    mla_gen_flash_mla_tensors(&g, &ml);
    s1 = mla_ref_flash_mla(&pb, &ml, o1, l1, 3);   /* an odd thread count, on purpose */
    s2 = mla_naive_flash_mla(&pb, &ml, o2, l2);
    report(name, "flash_mla", s1, s2, o1, o2, rows * 512, l1, l2, nl);

    mla_var6_plus_tensors v6;
    mla_gen_var6_plus_tensors(&g, &v6);
    s1 = mla_ref_var6_plus(&pb, &v6, o1, l1, 0);
    s2 = mla_naive_var6_plus(&pb, &v6, o2, l2);
    report(name, "mla_var6_plus", s1, s2, o1, o2, rows * 128, l1, l2, nl);

    free(o1), free(o2), free(l1), free(l2);
    mla_gen_destroy(&g);
}

int main(void)
{
    const tcase cases[] = {
        {.b = 2, .s = 1, .t = 100, .h = 16, .n = 30, .causal = 1, .seed = 11},
        {.b = 3, .s = 4, .t = 200, .h = 16, .n = 70, .causal = 1, .varlen = 1, .permute = 1, .seed = 12},
        {.b = 2, .s = 3, .t = 130, .h = 16, .n = 130, .causal = 0, .scale = 0.5f, .seed = 13},
        {.b = 2, .s = 5, .t = 90, .h = 16, .n = 0, .causal = 0, .varlen = 1, .seed = 14},
        {.b = 1, .s = 2, .t = 70, .h = 128, .n = 6, .causal = 1, .permute = 1, .seed = 15},
        {.b = 2, .s = 16, .t = 150, .h = 16, .n = 100, .causal = 1, .varlen = 1, .scale = 2.0f, .seed = 16},
        /* scores that rise / fall along the sequence (flash_mla_v5's speculative softmax is redone
         * on every page / never after the first) */
        {.b = 2, .s = 2, .t = 300, .h = 16, .n = 40, .causal = 1, .permute = 1, .trend = 1, .seed = 17},
        {.b = 1, .s = 3, .t = 260, .h = 128, .n = 3, .causal = 1, .trend = -1, .seed = 18},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(&cases[i]);
    printf("%d passed, %d failed\n", n_pass, n_fail);
    return n_fail ? 1 : 0;
}
