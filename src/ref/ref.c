/*
 * CPU references of the three MLA designs (MLA_SPEC.md): one (request, query, head) row at a
 * time, online softmax in double, rows spread over pthreads (a shared atomic row counter, the
 * calling thread works too). Also the argument checks that mla_naive_* share, and
 * mla_ref_visible (the bottom-right causal rule). Library code: returns a status, never prints.
 */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ref.h"
#include "error.h"

/* ------------------------------------------------------------------------------------------ */
/* small helpers                                                                               */
/* ------------------------------------------------------------------------------------------ */

static inline double bf(uint16_t u)
{
    uint32_t x = (uint32_t)u << 16;
    float f;
    memcpy(&f, &x, sizeof f);
    return f;
}

/* q . x over n elements, q already decoded to double; four partial sums for ILP (the order is
 * fixed, so the result is deterministic). Products of two bf16 values are exact in double. */
static inline double dot_bf(const double *q, const uint16_t *x, int n)
{
    double a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    int i = 0;
    for (; i + 4 <= n; i += 4) {
        a0 += q[i] * bf(x[i]);
        a1 += q[i + 1] * bf(x[i + 1]);
        a2 += q[i + 2] * bf(x[i + 2]);
        a3 += q[i + 3] * bf(x[i + 3]);
    }
    for (; i < n; i++) a0 += q[i] * bf(x[i]);
    return (a0 + a1) + (a2 + a3);
}

static inline void decode(double *dst, const uint16_t *src, int n)
{
    for (int i = 0; i < n; i++) dst[i] = bf(src[i]);
}

/* acc += w * x (x bf16) */
static inline void axpy_bf(double *acc, double w, const uint16_t *x, int n)
{
    for (int i = 0; i < n; i++) acc[i] += w * bf(x[i]);
}

int mla_ref_visible(int t_r, int s, int i, int causal)
{
    if (!causal) return t_r;
    long v = (long)t_r - s + i + 1;
    if (v < 0) v = 0;
    if (v > t_r) v = t_r;
    return (int)v;
}

/* A stride of 0 means packed: use the packed value for that dimension. */
static int64_t stride_or(int64_t given, int64_t packed) { return given ? given : packed; }

static int ceil_div(int a, int b) { return (a + b - 1) / b; }

static int seqlen_of(const mla_problem *pb, const int32_t *seqlens, int r)
{
    return seqlens ? seqlens[r] : pb->t;
}

/* ------------------------------------------------------------------------------------------ */
/* argument checks                                                                             */
/* ------------------------------------------------------------------------------------------ */

static mla_status check_problem(const char *who, const mla_problem *pb)
{
    if (!pb) return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "%s: problem is NULL", who);
    if (pb->b < 1 || pb->s < 1 || pb->t < 1 || pb->h < 1)
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "%s: need b, s, t, h >= 1 (b=%d s=%d t=%d h=%d)",
                        who, pb->b, pb->s, pb->t, pb->h);
    if (pb->s > pb->t)
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "%s: s=%d > t=%d", who, pb->s, pb->t);
    if (pb->p < 0)
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "%s: p=%d < 0", who, pb->p);
    if (!(pb->scale > 0.0f) || !isfinite(pb->scale))
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "%s: scale=%g must be > 0 and finite", who,
                        (double)pb->scale);
    /* Keep every element count far below int64/size_t limits (and the double exactness range). */
    double big = (double)pb->b * pb->t * pb->h * ((double)pb->d + pb->k + pb->p + 1) * pb->s;
    if (big > 9e15)
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "%s: problem too large for the CPU reference", who);
    return MLA_STATUS_OK;
}

static mla_status check_seqlens(const char *who, const mla_problem *pb, const int32_t *seqlens)
{
    if (!seqlens) return MLA_STATUS_OK;
    for (int r = 0; r < pb->b; r++)
        if (seqlens[r] < 0 || seqlens[r] > pb->t)
            return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "%s: seqlens[%d]=%d outside [0, t=%d]", who, r,
                            (int)seqlens[r], pb->t);
    return MLA_STATUS_OK;
}

static mla_status check_strides(const char *who, const char *name, const int64_t *st, int n)
{
    for (int i = 0; i < n; i++)
        if (st[i] < 0)
            return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "%s: %s_strides[%d]=%lld < 0", who, name, i,
                            (long long)st[i]);
    return MLA_STATUS_OK;
}

/* The paged cache: `tokens_of(r)` tokens of request r must map to pages inside the cache. */
static mla_status check_paged(const char *who, const mla_problem *pb, const void *cache, int num_pages,
                              const int32_t *block_table, int max_pages, int64_t bt_stride,
                              const int32_t *seqlens, int old_only)
{
    if (pb->page_size < 1)
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "%s: page_size=%d < 1", who, pb->page_size);
    if (!cache) return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "%s: cache is NULL", who);
    if (!block_table) return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "%s: block_table is NULL", who);
    if (num_pages < 1)
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "%s: num_pages=%d < 1", who, num_pages);
    int need_t = old_only ? (pb->t - pb->n > 0 ? pb->t - pb->n : 0) : pb->t;
    if (max_pages < ceil_div(need_t, pb->page_size) || max_pages < 1)
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "%s: max_pages=%d < ceil(%d / %d)", who, max_pages,
                        need_t, pb->page_size);
    if (bt_stride != 0 && bt_stride < max_pages)
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "%s: block_table_stride=%lld < max_pages=%d", who,
                        (long long)bt_stride, max_pages);
    int64_t bts = stride_or(bt_stride, max_pages);
    for (int r = 0; r < pb->b; r++) {
        int t_r = seqlen_of(pb, seqlens, r);
        int tok = old_only ? (t_r - pb->n > 0 ? t_r - pb->n : 0) : t_r;
        for (int q = 0; q < ceil_div(tok, pb->page_size); q++) {
            int32_t pg = block_table[r * bts + q];
            if (pg < 0 || pg >= num_pages)
                return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "%s: block_table[%d][%d]=%d outside [0, %d)",
                                who, r, q, (int)pg, num_pages);
        }
    }
    return MLA_STATUS_OK;
}

#define TRY(x)                                  \
    do {                                        \
        mla_status st_ = (x);                   \
        if (st_ != MLA_STATUS_OK) return st_;   \
    } while (0)

mla_status mla_ref_check_flash_attention(const char *who, const mla_problem *pb,
                                         const mla_flash_attention_tensors *x, const float *out)
{
    TRY(check_problem(who, pb));
    if (pb->d < 1) return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "%s: d=%d < 1", who, pb->d);
    if (!x) return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "%s: tensors are NULL", who);
    if (!out) return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "%s: out is NULL", who);
    if (!x->q || !x->k || !x->v)
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "%s: q, k or v is NULL", who);
    TRY(check_strides(who, "q", x->q_strides, 3));
    TRY(check_strides(who, "k", x->k_strides, 3));
    TRY(check_strides(who, "v", x->v_strides, 3));
    return check_seqlens(who, pb, x->seqlens);
}

mla_status mla_ref_check_flash_mla(const char *who, const mla_problem *pb, const mla_flash_mla_tensors *x,
                                   const float *out)
{
    TRY(check_problem(who, pb));
    if (pb->k < 1) return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "%s: k=%d < 1", who, pb->k);
    if (!x) return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "%s: tensors are NULL", who);
    if (!out) return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "%s: out is NULL", who);
    if (!x->q) return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "%s: q is NULL", who);
    TRY(check_strides(who, "q", x->q_strides, 3));
    TRY(check_seqlens(who, pb, x->seqlens));
    return check_paged(who, pb, x->cache, x->num_pages, x->block_table, x->max_pages,
                       x->block_table_stride, x->seqlens, 0);
}

mla_status mla_ref_check_var6_plus(const char *who, const mla_problem *pb, const mla_var6_plus_tensors *x,
                                   const float *out)
{
    TRY(check_problem(who, pb));
    if (pb->k < 1 || pb->d < 1)
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "%s: need d, k >= 1 (d=%d k=%d)", who, pb->d, pb->k);
    if (pb->n < 0 || pb->n > pb->t)
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "%s: n=%d outside [0, t=%d]", who, pb->n, pb->t);
    if (!x) return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "%s: tensors are NULL", who);
    if (!out) return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "%s: out is NULL", who);
    if (!x->q_lat || !x->q_nope || !x->q_rope)
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "%s: q_lat, q_nope or q_rope is NULL", who);
    TRY(check_strides(who, "q_lat", x->q_lat_strides, 3));
    TRY(check_strides(who, "q_nope", x->q_nope_strides, 3));
    TRY(check_strides(who, "q_rope", x->q_rope_strides, 3));
    TRY(check_strides(who, "k_nope", x->k_nope_strides, 3));
    TRY(check_strides(who, "v", x->v_strides, 3));
    TRY(check_strides(who, "k_rope", x->k_rope_strides, 2));
    TRY(check_seqlens(who, pb, x->seqlens));
    /* Only the parts some request uses must exist (n = 0: no new part; n >= t_r: no old part). */
    int any_old = 0, any_new = 0;
    for (int r = 0; r < pb->b; r++) {
        int t_r = seqlen_of(pb, x->seqlens, r);
        int o_r = t_r - pb->n > 0 ? t_r - pb->n : 0;
        any_old |= o_r > 0;
        any_new |= t_r - o_r > 0;
    }
    if (any_old) {
        if (!x->w_uv) return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "%s: w_uv is NULL", who);
        TRY(check_paged(who, pb, x->cache, x->num_pages, x->block_table, x->max_pages,
                        x->block_table_stride, x->seqlens, 1));
    }
    if (any_new && (!x->k_nope || !x->v || !x->k_rope))
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "%s: k_nope, v or k_rope is NULL (n=%d)", who, pb->n);
    return MLA_STATUS_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* rows over threads                                                                           */
/* ------------------------------------------------------------------------------------------ */

typedef void (*row_fn)(const void *ctx, long row, double *scratch);

typedef struct pool {
    row_fn fn;
    const void *ctx;
    long rows;
    atomic_long next;
} pool;

typedef struct worker_arg {
    pool *p;
    double *scratch;
} worker_arg;

static void *worker(void *a)
{
    worker_arg *w = a;
    long row;
    while ((row = atomic_fetch_add(&w->p->next, 1)) < w->p->rows) w->p->fn(w->p->ctx, row, w->scratch);
    return NULL;
}

/* Run fn on rows 0..rows-1 with `threads` workers (<= 0: the core count), each with `scratch_n`
 * doubles of scratch. If a thread cannot be started, the others (and the caller) take its rows. */
static mla_status run_rows(const char *who, long rows, int threads, row_fn fn, const void *ctx,
                           size_t scratch_n)
{
    if (threads <= 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        threads = n > 0 ? (int)(n > 1024 ? 1024 : n) : 1;
    }
    if (threads > rows) threads = rows > 0 ? (int)rows : 1;
    double *scratch = malloc(sizeof(double) * scratch_n * (size_t)threads);
    pthread_t *tid = malloc(sizeof(pthread_t) * (size_t)threads);
    worker_arg *args = malloc(sizeof(worker_arg) * (size_t)threads);
    if (!scratch || !tid || !args) {
        free(scratch);
        free(tid);
        free(args);
        return mla_fail(MLA_STATUS_OUT_OF_MEMORY, "%s: cannot allocate %d threads' scratch", who, threads);
    }
    pool p = {.fn = fn, .ctx = ctx, .rows = rows};
    atomic_init(&p.next, 0);
    int started = 0;
    for (int i = 1; i < threads; i++) {
        args[i] = (worker_arg){&p, scratch + scratch_n * (size_t)i};
        if (pthread_create(&tid[started + 1], NULL, worker, &args[i]) != 0) break;
        started++;
    }
    args[0] = (worker_arg){&p, scratch};
    worker(&args[0]);
    for (int i = 1; i <= started; i++) pthread_join(tid[i], NULL);
    free(scratch);
    free(tid);
    free(args);
    return MLA_STATUS_OK;
}

/* Online-softmax state of one row: running max m, running sum l (relative to m). */
typedef struct softmax {
    double m, l;
} softmax;

/* Add a score; returns the weight of the new term, and *corr the factor the accumulators must
 * be multiplied by first (1 if the max did not change). */
static inline double softmax_add(softmax *sm, double score, double *corr)
{
    *corr = 1.0;
    if (score > sm->m) {
        *corr = exp(sm->m - score);   /* m = -inf at the start: exp(-inf) = 0 */
        sm->l *= *corr;
        sm->m = score;
    }
    double w = exp(score - sm->m);
    sm->l += w;
    return w;
}

static inline void scale_vec(double *v, int n, double c)
{
    if (c != 1.0)
        for (int i = 0; i < n; i++) v[i] *= c;
}

/* Row index -> (request, query, head); out row offset row*dv; lse at [r, h, i]. */
typedef struct row_id {
    int r, i, hh;
} row_id;

static inline row_id split_row(const mla_problem *pb, long row)
{
    row_id id;
    id.hh = (int)(row % pb->h);
    id.i = (int)((row / pb->h) % pb->s);
    id.r = (int)(row / ((long)pb->h * pb->s));
    return id;
}

static inline void write_row(const mla_problem *pb, float *out, float *lse, row_id id, long row, int dv,
                             const double *acc, const softmax *sm)
{
    float *o = out + row * dv;
    size_t li = ((size_t)id.r * pb->h + id.hh) * pb->s + id.i;
    if (sm->l <= 0.0) {   /* empty visible set */
        for (int e = 0; e < dv; e++) o[e] = 0.0f;
        if (lse) lse[li] = -INFINITY;
        return;
    }
    for (int e = 0; e < dv; e++) o[e] = (float)(acc[e] / sm->l);
    if (lse) lse[li] = (float)(sm->m + log(sm->l));
}

/* ------------------------------------------------------------------------------------------ */
/* flash_attention                                                                             */
/* ------------------------------------------------------------------------------------------ */

typedef struct fa_ctx {
    const mla_problem *pb;
    const mla_flash_attention_tensors *x;
    int64_t qs[3], ks[3], vs[3];
    float *out, *lse;
} fa_ctx;

static void fa_row(const void *c, long row, double *scratch)
{
    const fa_ctx *cx = c;
    const mla_problem *pb = cx->pb;
    const int dq = pb->d + pb->p, d = pb->d;
    row_id id = split_row(pb, row);
    int t_r = seqlen_of(pb, cx->x->seqlens, id.r);
    int vis = mla_ref_visible(t_r, pb->s, id.i, pb->causal);
    double *q = scratch, *acc = scratch + dq;
    softmax sm = {-INFINITY, 0.0};
    memset(acc, 0, sizeof(double) * d);
    if (vis > 0) {
        const uint16_t *Q = cx->x->q, *K = cx->x->k, *V = cx->x->v;
        decode(q, Q + id.r * cx->qs[0] + id.i * cx->qs[1] + id.hh * cx->qs[2], dq);
        for (int j = 0; j < vis; j++) {
            const uint16_t *kj = K + id.r * cx->ks[0] + j * cx->ks[1] + id.hh * cx->ks[2];
            const uint16_t *vj = V + id.r * cx->vs[0] + j * cx->vs[1] + id.hh * cx->vs[2];
            double corr, w = softmax_add(&sm, pb->scale * dot_bf(q, kj, dq), &corr);
            scale_vec(acc, d, corr);
            axpy_bf(acc, w, vj, d);
        }
    }
    write_row(pb, cx->out, cx->lse, id, row, d, acc, &sm);
}

mla_status mla_ref_flash_attention(const mla_problem *pb, const mla_flash_attention_tensors *x, float *out,
                                   float *lse, int threads)
{
    const char *who = "mla_ref_flash_attention";
    TRY(mla_ref_check_flash_attention(who, pb, x, out));
    const int64_t dq = pb->d + pb->p, h = pb->h;
    fa_ctx c = {.pb = pb, .x = x, .out = out, .lse = lse};
    c.qs[0] = stride_or(x->q_strides[0], pb->s * h * dq);
    c.qs[1] = stride_or(x->q_strides[1], h * dq);
    c.qs[2] = stride_or(x->q_strides[2], dq);
    c.ks[0] = stride_or(x->k_strides[0], pb->t * h * dq);
    c.ks[1] = stride_or(x->k_strides[1], h * dq);
    c.ks[2] = stride_or(x->k_strides[2], dq);
    c.vs[0] = stride_or(x->v_strides[0], pb->t * h * pb->d);
    c.vs[1] = stride_or(x->v_strides[1], h * pb->d);
    c.vs[2] = stride_or(x->v_strides[2], pb->d);
    return run_rows(who, (long)pb->b * pb->s * pb->h, threads, fa_row, &c, (size_t)(dq + pb->d));
}

/* ------------------------------------------------------------------------------------------ */
/* flash_mla                                                                                   */
/* ------------------------------------------------------------------------------------------ */

typedef struct mla_ctx {
    const mla_problem *pb;
    const mla_flash_mla_tensors *x;
    int64_t qs[3], bts;
    float *out, *lse;
} mla_ctx;

/* Token j of request r in the paged cache (row of k+p elements). */
static inline const uint16_t *cache_token(const uint16_t *cache, const int32_t *bt, int64_t bts, int page,
                                          int kp, int r, int j)
{
    int32_t pg = bt[r * bts + j / page];
    return cache + ((size_t)pg * page + (size_t)(j % page)) * kp;
}

static void mla_row(const void *c, long row, double *scratch)
{
    const mla_ctx *cx = c;
    const mla_problem *pb = cx->pb;
    const int kp = pb->k + pb->p, k = pb->k;
    row_id id = split_row(pb, row);
    int t_r = seqlen_of(pb, cx->x->seqlens, id.r);
    int vis = mla_ref_visible(t_r, pb->s, id.i, pb->causal);
    double *q = scratch, *acc = scratch + kp;
    softmax sm = {-INFINITY, 0.0};
    memset(acc, 0, sizeof(double) * k);
    if (vis > 0) {
        const uint16_t *Q = cx->x->q;
        decode(q, Q + id.r * cx->qs[0] + id.i * cx->qs[1] + id.hh * cx->qs[2], kp);
        for (int j = 0; j < vis; j++) {
            const uint16_t *cj = cache_token(cx->x->cache, cx->x->block_table, cx->bts, pb->page_size, kp,
                                             id.r, j);
            double corr, w = softmax_add(&sm, pb->scale * dot_bf(q, cj, kp), &corr);
            scale_vec(acc, k, corr);
            axpy_bf(acc, w, cj, k);   /* V is the first k dims of the same cache row */
        }
    }
    write_row(pb, cx->out, cx->lse, id, row, k, acc, &sm);
}

mla_status mla_ref_flash_mla(const mla_problem *pb, const mla_flash_mla_tensors *x, float *out, float *lse,
                             int threads)
{
    const char *who = "mla_ref_flash_mla";
    TRY(mla_ref_check_flash_mla(who, pb, x, out));
    const int64_t kp = pb->k + pb->p, h = pb->h;
    mla_ctx c = {.pb = pb, .x = x, .out = out, .lse = lse};
    c.qs[0] = stride_or(x->q_strides[0], pb->s * h * kp);
    c.qs[1] = stride_or(x->q_strides[1], h * kp);
    c.qs[2] = stride_or(x->q_strides[2], kp);
    c.bts = stride_or(x->block_table_stride, x->max_pages);
    return run_rows(who, (long)pb->b * pb->s * pb->h, threads, mla_row, &c, (size_t)(kp + pb->k));
}

/* ------------------------------------------------------------------------------------------ */
/* mla_var6_plus                                                                               */
/* ------------------------------------------------------------------------------------------ */

typedef struct v6_ctx {
    const mla_problem *pb;
    const mla_var6_plus_tensors *x;
    int64_t qls[3], qns[3], qrs[3], kns[3], vs[3], krs[2], bts;
    float *out, *lse;
} v6_ctx;

static void v6_row(const void *c, long row, double *scratch)
{
    const v6_ctx *cx = c;
    const mla_var6_plus_tensors *x = cx->x;
    const mla_problem *pb = cx->pb;
    const int k = pb->k, d = pb->d, p = pb->p, kp = k + p;
    row_id id = split_row(pb, row);
    int t_r = seqlen_of(pb, x->seqlens, id.r);
    int vis = mla_ref_visible(t_r, pb->s, id.i, pb->causal);
    int o_r = t_r - pb->n > 0 ? t_r - pb->n : 0;
    /* scratch: q_lat|q_rope (k+p, so the old score is one dot), q_nope (d), acc_lat (k), acc_v (d), out (d) */
    double *qlr = scratch, *qn = qlr + kp, *acc_lat = qn + d, *acc_v = acc_lat + k, *o = acc_v + d;
    softmax sm = {-INFINITY, 0.0};
    memset(acc_lat, 0, sizeof(double) * k);
    memset(acc_v, 0, sizeof(double) * d);
    int n_old = vis < o_r ? vis : o_r;       /* positions 0..n_old-1 */
    int n_new = vis - o_r > 0 ? vis - o_r : 0; /* slots 0..n_new-1 = positions o_r.. */
    if (vis > 0) {
        const uint16_t *QL = x->q_lat, *QN = x->q_nope, *QR = x->q_rope;
        decode(qlr, QL + id.r * cx->qls[0] + id.i * cx->qls[1] + id.hh * cx->qls[2], k);
        decode(qlr + k, QR + id.r * cx->qrs[0] + id.i * cx->qrs[1] + id.hh * cx->qrs[2], p);
        decode(qn, QN + id.r * cx->qns[0] + id.i * cx->qns[1] + id.hh * cx->qns[2], d);
        for (int j = 0; j < n_old; j++) {
            const uint16_t *cj = cache_token(x->cache, x->block_table, cx->bts, pb->page_size, kp, id.r, j);
            double corr, w = softmax_add(&sm, pb->scale * dot_bf(qlr, cj, kp), &corr);
            scale_vec(acc_lat, k, corr);
            scale_vec(acc_v, d, corr);
            axpy_bf(acc_lat, w, cj, k);
        }
        const uint16_t *KN = x->k_nope, *V = x->v, *KR = x->k_rope;
        for (int j = 0; j < n_new; j++) {
            const uint16_t *knj = KN + id.r * cx->kns[0] + j * cx->kns[1] + id.hh * cx->kns[2];
            const uint16_t *krj = KR + id.r * cx->krs[0] + j * cx->krs[1];
            const uint16_t *vj = V + id.r * cx->vs[0] + j * cx->vs[1] + id.hh * cx->vs[2];
            double score = pb->scale * (dot_bf(qn, knj, d) + dot_bf(qlr + k, krj, p));
            double corr, w = softmax_add(&sm, score, &corr);
            scale_vec(acc_lat, k, corr);
            scale_vec(acc_v, d, corr);
            axpy_bf(acc_v, w, vj, d);
        }
    }
    /* o = acc_lat @ w_uv[h] + acc_v; w_uv [h, k, d] packed */
    memcpy(o, acc_v, sizeof(double) * d);
    if (n_old > 0) {
        const uint16_t *W = (const uint16_t *)x->w_uv + (size_t)id.hh * k * d;
        for (int cc = 0; cc < k; cc++) axpy_bf(o, acc_lat[cc], W + (size_t)cc * d, d);
    }
    write_row(pb, cx->out, cx->lse, id, row, d, o, &sm);
}

mla_status mla_ref_var6_plus(const mla_problem *pb, const mla_var6_plus_tensors *x, float *out, float *lse,
                             int threads)
{
    const char *who = "mla_ref_var6_plus";
    TRY(mla_ref_check_var6_plus(who, pb, x, out));
    const int64_t h = pb->h, s = pb->s, n = pb->n, k = pb->k, d = pb->d, p = pb->p;
    v6_ctx c = {.pb = pb, .x = x, .out = out, .lse = lse};
    c.qls[0] = stride_or(x->q_lat_strides[0], s * h * k);
    c.qls[1] = stride_or(x->q_lat_strides[1], h * k);
    c.qls[2] = stride_or(x->q_lat_strides[2], k);
    c.qns[0] = stride_or(x->q_nope_strides[0], s * h * d);
    c.qns[1] = stride_or(x->q_nope_strides[1], h * d);
    c.qns[2] = stride_or(x->q_nope_strides[2], d);
    c.qrs[0] = stride_or(x->q_rope_strides[0], s * h * p);
    c.qrs[1] = stride_or(x->q_rope_strides[1], h * p);
    c.qrs[2] = stride_or(x->q_rope_strides[2], p);
    c.kns[0] = stride_or(x->k_nope_strides[0], n * h * d);
    c.kns[1] = stride_or(x->k_nope_strides[1], h * d);
    c.kns[2] = stride_or(x->k_nope_strides[2], d);
    c.vs[0] = stride_or(x->v_strides[0], n * h * d);
    c.vs[1] = stride_or(x->v_strides[1], h * d);
    c.vs[2] = stride_or(x->v_strides[2], d);
    c.krs[0] = stride_or(x->k_rope_strides[0], n * p);
    c.krs[1] = stride_or(x->k_rope_strides[1], p);
    c.bts = stride_or(x->block_table_stride, x->max_pages);
    return run_rows(who, (long)pb->b * pb->s * pb->h, threads, v6_row, &c,
                    (size_t)(k + p + d + k + d + d));
}
