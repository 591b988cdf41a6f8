/*
 * Naive formulas of the three designs, deliberately a different code path from ref.c: single
 * thread; each request's keys/values are first gathered into packed double arrays (the paged
 * cache through the block table, token by token); then per (query, head) the whole score row is
 * materialised, the max and the sum are separate passes, and the weighted sum runs over
 * dimensions outside, tokens inside. mla_var6_plus projects every old token through w_uv first
 * (c_j[:k] @ w_uv[h]) and then sums P_j * that, instead of projecting the summed latent.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ref.h"
#include "error.h"

/* element (i0, i1, i2, e) of a 4-d bf16 tensor with strides st (0 = packed of dims n1, n2, n3) */
static double at4(const void *base, const int64_t st[3], int n1, int n2, int n3, long i0, long i1, long i2,
                  long e)
{
    int64_t s0 = st[0] ? st[0] : (int64_t)n1 * n2 * n3;
    int64_t s1 = st[1] ? st[1] : (int64_t)n2 * n3;
    int64_t s2 = st[2] ? st[2] : (int64_t)n3;
    return mla_bf16_to_f32(((const uint16_t *)base)[i0 * s0 + i1 * s1 + i2 * s2 + e]);
}

/* lse[r, h, i]; out row [r, i, h] */
static size_t lse_index(const mla_problem *pb, int r, int i, int hh)
{
    return ((size_t)r * pb->h + hh) * pb->s + i;
}
static float *out_row(const mla_problem *pb, float *out, int dv, int r, int i, int hh)
{
    return out + (((size_t)r * pb->s + i) * pb->h + hh) * dv;
}

/* From a materialised score row: max pass, sum pass, then the probabilities in place.
 * Returns the lse; n == 0 gives -inf. */
static double normalise(double *sc, int n)
{
    if (n == 0) return -INFINITY;
    double m = sc[0];
    for (int j = 1; j < n; j++)
        if (sc[j] > m) m = sc[j];
    double sum = 0.0;
    for (int j = 0; j < n; j++) sum += exp(sc[j] - m);
    for (int j = 0; j < n; j++) sc[j] = exp(sc[j] - m) / sum;
    return m + log(sum);
}

static void write_empty(float *o, int dv, float *lse, size_t li)
{
    for (int e = 0; e < dv; e++) o[e] = 0.0f;
    if (lse) lse[li] = -INFINITY;
}

static int seqlen(const mla_problem *pb, const int32_t *seqlens, int r) { return seqlens ? seqlens[r] : pb->t; }

/* Gather request r's first `tok` cache rows (k+p each) into dst[tok][k+p] as doubles. */
static void gather_paged(const mla_problem *pb, const void *cache, const int32_t *bt, int max_pages,
                         int64_t bt_stride, int r, int tok, double *dst)
{
    const int kp = pb->k + pb->p;
    int64_t bts = bt_stride ? bt_stride : max_pages;
    for (int j = 0; j < tok; j++) {
        int page = bt[r * bts + j / pb->page_size];
        const uint16_t *src = (const uint16_t *)cache + ((size_t)page * pb->page_size + j % pb->page_size) * kp;
        for (int e = 0; e < kp; e++) dst[(size_t)j * kp + e] = mla_bf16_to_f32(src[e]);
    }
}

mla_status mla_naive_flash_attention(const mla_problem *pb, const mla_flash_attention_tensors *x, float *out,
                                     float *lse)
{
    const char *who = "mla_naive_flash_attention";
    mla_status st = mla_ref_check_flash_attention(who, pb, x, out);
    if (st != MLA_STATUS_OK) return st;
    const int dq = pb->d + pb->p, d = pb->d, h = pb->h, t = pb->t, s = pb->s;
    double *K = malloc(sizeof(double) * (size_t)t * h * dq);
    double *V = malloc(sizeof(double) * (size_t)t * h * d);
    double *sc = malloc(sizeof(double) * (size_t)t);
    double *q = malloc(sizeof(double) * (size_t)dq);
    if (!K || !V || !sc || !q) {
        free(K), free(V), free(sc), free(q);
        return mla_fail(MLA_STATUS_OUT_OF_MEMORY, "%s: out of host memory", who);
    }
    for (int r = 0; r < pb->b; r++) {
        int t_r = seqlen(pb, x->seqlens, r);
        for (int j = 0; j < t_r; j++)
            for (int hh = 0; hh < h; hh++) {
                for (int e = 0; e < dq; e++)
                    K[((size_t)j * h + hh) * dq + e] = at4(x->k, x->k_strides, t, h, dq, r, j, hh, e);
                for (int e = 0; e < d; e++)
                    V[((size_t)j * h + hh) * d + e] = at4(x->v, x->v_strides, t, h, d, r, j, hh, e);
            }
        for (int i = 0; i < s; i++)
            for (int hh = 0; hh < h; hh++) {
                int vis = mla_ref_visible(t_r, s, i, pb->causal);
                float *o = out_row(pb, out, d, r, i, hh);
                if (vis == 0) {
                    write_empty(o, d, lse, lse_index(pb, r, i, hh));
                    continue;
                }
                for (int e = 0; e < dq; e++) q[e] = at4(x->q, x->q_strides, s, h, dq, r, i, hh, e);
                for (int j = 0; j < vis; j++) {
                    const double *kj = K + ((size_t)j * h + hh) * dq;
                    double a = 0.0;
                    for (int e = 0; e < dq; e++) a += q[e] * kj[e];
                    sc[j] = pb->scale * a;
                }
                double l = normalise(sc, vis);
                for (int e = 0; e < d; e++) {
                    double a = 0.0;
                    for (int j = 0; j < vis; j++) a += sc[j] * V[((size_t)j * h + hh) * d + e];
                    o[e] = (float)a;
                }
                if (lse) lse[lse_index(pb, r, i, hh)] = (float)l;
            }
    }
    free(K), free(V), free(sc), free(q);
    return MLA_STATUS_OK;
}

mla_status mla_naive_flash_mla(const mla_problem *pb, const mla_flash_mla_tensors *x, float *out, float *lse)
{
    const char *who = "mla_naive_flash_mla";
    mla_status st = mla_ref_check_flash_mla(who, pb, x, out);
    if (st != MLA_STATUS_OK) return st;
    const int kp = pb->k + pb->p, k = pb->k, h = pb->h, t = pb->t, s = pb->s;
    double *C = malloc(sizeof(double) * (size_t)t * kp);
    double *sc = malloc(sizeof(double) * (size_t)t);
    double *q = malloc(sizeof(double) * (size_t)kp);
    if (!C || !sc || !q) {
        free(C), free(sc), free(q);
        return mla_fail(MLA_STATUS_OUT_OF_MEMORY, "%s: out of host memory", who);
    }
    for (int r = 0; r < pb->b; r++) {
        int t_r = seqlen(pb, x->seqlens, r);
        gather_paged(pb, x->cache, x->block_table, x->max_pages, x->block_table_stride, r, t_r, C);
        for (int i = 0; i < s; i++)
            for (int hh = 0; hh < h; hh++) {
                int vis = mla_ref_visible(t_r, s, i, pb->causal);
                float *o = out_row(pb, out, k, r, i, hh);
                if (vis == 0) {
                    write_empty(o, k, lse, lse_index(pb, r, i, hh));
                    continue;
                }
                for (int e = 0; e < kp; e++) q[e] = at4(x->q, x->q_strides, s, h, kp, r, i, hh, e);
                for (int j = 0; j < vis; j++) {
                    double a = 0.0;
                    for (int e = 0; e < kp; e++) a += q[e] * C[(size_t)j * kp + e];
                    sc[j] = pb->scale * a;
                }
                double l = normalise(sc, vis);
                for (int e = 0; e < k; e++) {
                    double a = 0.0;
                    for (int j = 0; j < vis; j++) a += sc[j] * C[(size_t)j * kp + e];
                    o[e] = (float)a;
                }
                if (lse) lse[lse_index(pb, r, i, hh)] = (float)l;
            }
    }
    free(C), free(sc), free(q);
    return MLA_STATUS_OK;
}

mla_status mla_naive_var6_plus(const mla_problem *pb, const mla_var6_plus_tensors *x, float *out, float *lse)
{
    const char *who = "mla_naive_var6_plus";
    mla_status st = mla_ref_check_var6_plus(who, pb, x, out);
    if (st != MLA_STATUS_OK) return st;
    const int k = pb->k, d = pb->d, p = pb->p, kp = k + p, h = pb->h, t = pb->t, s = pb->s, n = pb->n;
    double *C = malloc(sizeof(double) * (size_t)t * kp);   /* old tokens, latent */
    double *P = malloc(sizeof(double) * (size_t)t * d);    /* old tokens projected for one head */
    double *W = malloc(sizeof(double) * (size_t)k * d);    /* w_uv[h] */
    double *sc = malloc(sizeof(double) * (size_t)t);
    double *ql = malloc(sizeof(double) * (size_t)(k + d + p));
    if (!C || !P || !W || !sc || !ql) {
        free(C), free(P), free(W), free(sc), free(ql);
        return mla_fail(MLA_STATUS_OUT_OF_MEMORY, "%s: out of host memory", who);
    }
    double *qn = ql + k, *qr = qn + d;
    for (int r = 0; r < pb->b; r++) {
        int t_r = seqlen(pb, x->seqlens, r);
        int o_r = t_r - n > 0 ? t_r - n : 0;
        gather_paged(pb, x->cache, x->block_table, x->max_pages, x->block_table_stride, r, o_r, C);
        for (int hh = 0; hh < h; hh++) {
            /* project every old token of this head: P[j] = C[j][:k] @ w_uv[hh] */
            if (o_r > 0) {
                const uint16_t *w = (const uint16_t *)x->w_uv + (size_t)hh * k * d;
                for (size_t e = 0; e < (size_t)k * d; e++) W[e] = mla_bf16_to_f32(w[e]);
                for (int j = 0; j < o_r; j++)
                    for (int e = 0; e < d; e++) {
                        double a = 0.0;
                        for (int c = 0; c < k; c++) a += C[(size_t)j * kp + c] * W[(size_t)c * d + e];
                        P[(size_t)j * d + e] = a;
                    }
            }
            for (int i = 0; i < s; i++) {
                int vis = mla_ref_visible(t_r, s, i, pb->causal);
                float *o = out_row(pb, out, d, r, i, hh);
                if (vis == 0) {
                    write_empty(o, d, lse, lse_index(pb, r, i, hh));
                    continue;
                }
                for (int e = 0; e < k; e++) ql[e] = at4(x->q_lat, x->q_lat_strides, s, h, k, r, i, hh, e);
                for (int e = 0; e < d; e++) qn[e] = at4(x->q_nope, x->q_nope_strides, s, h, d, r, i, hh, e);
                for (int e = 0; e < p; e++) qr[e] = at4(x->q_rope, x->q_rope_strides, s, h, p, r, i, hh, e);
                /* score of position j: old (latent) below o_r, new slot j - o_r above */
                for (int j = 0; j < vis; j++) {
                    double a = 0.0;
                    if (j < o_r) {
                        for (int e = 0; e < k; e++) a += ql[e] * C[(size_t)j * kp + e];
                        for (int e = 0; e < p; e++) a += qr[e] * C[(size_t)j * kp + k + e];
                    } else {
                        int sl = j - o_r;
                        for (int e = 0; e < d; e++)
                            a += qn[e] * at4(x->k_nope, x->k_nope_strides, n, h, d, r, sl, hh, e);
                        /* k_rope [b, n, p]: a 3-d tensor; index it as 4-d with a unit head dim */
                        int64_t krs[3] = {x->k_rope_strides[0] ? x->k_rope_strides[0] : (int64_t)n * p,
                                          x->k_rope_strides[1] ? x->k_rope_strides[1] : p, 0};
                        for (int e = 0; e < p; e++) a += qr[e] * at4(x->k_rope, krs, n, 1, p, r, sl, 0, e);
                    }
                    sc[j] = pb->scale * a;
                }
                double l = normalise(sc, vis);
                for (int e = 0; e < d; e++) {
                    double a = 0.0;
                    for (int j = 0; j < vis; j++)
                        a += sc[j] * (j < o_r ? P[(size_t)j * d + e]
                                              : at4(x->v, x->v_strides, n, h, d, r, j - o_r, hh, e));
                    o[e] = (float)a;
                }
                if (lse) lse[lse_index(pb, r, i, hh)] = (float)l;
            }
        }
    }
    free(C), free(P), free(W), free(sc), free(ql);
    return MLA_STATUS_OK;
}
