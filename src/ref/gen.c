/*
 * Seeded input generator: "one function, three representations" (MLA_SPEC.md). Draws the latent
 * source (c_kv, k_rope, q_nope, q_rope) and the weights (W_UK, W_UV) with splitmix64 + Box-Muller,
 * rounds them to bf16, and derives in double from those bf16 values the decompressed tensors
 * (flash_attention), the absorbed query and the paged latent cache (flash_mla), and the hybrid
 * buffers for pb.n (mla_var6_plus); every derived tensor is rounded to bf16 once. The O(b*t*h*d*k)
 * derivation runs over pthreads. Unused slots hold random values, never zeros.
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
/* PRNG                                                                                        */
/* ------------------------------------------------------------------------------------------ */

typedef struct rng {
    uint64_t s;
    int has_spare;
    double spare;
} rng;

static uint64_t rng_next(rng *g)
{
    uint64_t z = (g->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* uniform in (0, 1): never 0, so log() in Box-Muller is finite */
static double rng_uniform(rng *g) { return ((double)(rng_next(g) >> 11) + 0.5) * (1.0 / 9007199254740992.0); }

static double rng_randn(rng *g)
{
    if (g->has_spare) {
        g->has_spare = 0;
        return g->spare;
    }
    double u1 = rng_uniform(g), u2 = rng_uniform(g);
    double r = sqrt(-2.0 * log(u1)), th = 6.283185307179586 * u2;
    g->spare = r * sin(th);
    g->has_spare = 1;
    return r * cos(th);
}

/* uniform integer in [0, n) (n >= 1); the modulo bias is irrelevant here */
static int rng_below(rng *g, int n) { return (int)(rng_next(g) % (uint64_t)n); }

/* randn/10 clamped to [-1, 1], as bf16; redrawn if it rounds to zero so no slot is ever zero */
static uint16_t rand_val(rng *g)
{
    for (;;) {
        double v = rng_randn(g) / 10.0;
        if (v > 1.0) v = 1.0;
        if (v < -1.0) v = -1.0;
        uint16_t u = mla_f32_to_bf16((float)v);
        if ((u & 0x7fffu) != 0) return u;
    }
}

static void fill_rand(rng *g, uint16_t *a, size_t n)
{
    for (size_t i = 0; i < n; i++) a[i] = rand_val(g);
}

/* ------------------------------------------------------------------------------------------ */
/* parallel rows                                                                               */
/* ------------------------------------------------------------------------------------------ */

typedef void (*gen_row_fn)(const void *ctx, long row, double *scratch);

typedef struct gen_pool {
    gen_row_fn fn;
    const void *ctx;
    long rows;
    atomic_long next;
} gen_pool;

typedef struct gen_warg {
    gen_pool *p;
    double *scratch;
} gen_warg;

static void *gen_worker(void *a)
{
    gen_warg *w = a;
    long row;
    while ((row = atomic_fetch_add(&w->p->next, 1)) < w->p->rows) w->p->fn(w->p->ctx, row, w->scratch);
    return NULL;
}

static int gen_parallel(long rows, gen_row_fn fn, const void *ctx, size_t scratch_n)
{
    long nc = sysconf(_SC_NPROCESSORS_ONLN);
    int threads = nc > 0 ? (int)(nc > 256 ? 256 : nc) : 1;
    if (threads > rows) threads = rows > 0 ? (int)rows : 1;
    double *scratch = malloc(sizeof(double) * scratch_n * (size_t)threads);
    pthread_t *tid = malloc(sizeof(pthread_t) * (size_t)threads);
    gen_warg *args = malloc(sizeof(gen_warg) * (size_t)threads);
    if (!scratch || !tid || !args) {
        free(scratch), free(tid), free(args);
        return -1;
    }
    gen_pool p = {.fn = fn, .ctx = ctx, .rows = rows};
    atomic_init(&p.next, 0);
    int started = 0;
    for (int i = 1; i < threads; i++) {
        args[i] = (gen_warg){&p, scratch + scratch_n * (size_t)i};
        if (pthread_create(&tid[started + 1], NULL, gen_worker, &args[i]) != 0) break;
        started++;
    }
    args[0] = (gen_warg){&p, scratch};
    gen_worker(&args[0]);
    for (int i = 1; i <= started; i++) pthread_join(tid[i], NULL);
    free(scratch), free(tid), free(args);
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* derived tensors                                                                             */
/* ------------------------------------------------------------------------------------------ */

typedef struct derive_ctx {
    const mla_gen *g;
    const double *wukT;   /* [h, k, d]: W_UK[h]^T in double, so k_nope = sum_c c[c] * wukT[h][c][:] */
    const double *wuk;    /* [h, d, k] */
    const double *wuv;    /* [h, k, d] */
    int all_rows;         /* flash_attention requested: derive every position */
    int var6_rows;        /* mla_var6_plus requested: derive the positions in the new part */
} derive_ctx;

/* row = (r, position j): fa_k = [c_kv @ W_UK[h]^T, k_rope], fa_v = c_kv @ W_UV[h] for every head */
static void derive_kv(const void *cv, long row, double *scratch)
{
    const derive_ctx *cx = cv;
    const mla_gen *g = cx->g;
    const int k = g->pb.k, d = g->pb.d, p = g->pb.p, h = g->pb.h, dq = d + p;
    if (!cx->all_rows) {
        /* only mla_var6_plus's new slots need decompressed keys: positions o_r .. t_r-1 */
        const long t = g->pb.t, r = row / t, j = row % t, t_r = g->seqlens[r];
        const long o_r = t_r > g->pb.n ? t_r - g->pb.n : 0;
        if (!cx->var6_rows || j < o_r || j >= t_r) return;
    }
    double *c = scratch, *an = c + k, *av = an + d;
    const uint16_t *src = g->c_kv + (size_t)row * k;
    for (int i = 0; i < k; i++) c[i] = mla_bf16_to_f32(src[i]);
    const uint16_t *kr = g->k_rope + (size_t)row * p;
    for (int hh = 0; hh < h; hh++) {
        memset(an, 0, sizeof(double) * d);
        memset(av, 0, sizeof(double) * d);
        const double *wt = cx->wukT + (size_t)hh * k * d, *wv = cx->wuv + (size_t)hh * k * d;
        for (int cc = 0; cc < k; cc++) {
            double x = c[cc];
            const double *a = wt + (size_t)cc * d, *b = wv + (size_t)cc * d;
            for (int e = 0; e < d; e++) {
                an[e] += x * a[e];
                av[e] += x * b[e];
            }
        }
        uint16_t *fk = g->fa_k + ((size_t)row * h + hh) * dq;
        uint16_t *fv = g->fa_v + ((size_t)row * h + hh) * d;
        for (int e = 0; e < d; e++) {
            fk[e] = mla_f32_to_bf16((float)an[e]);
            fv[e] = mla_f32_to_bf16((float)av[e]);
        }
        memcpy(fk + d, kr, sizeof(uint16_t) * p);
    }
}

/* row = (r, query i): q_lat = q_nope @ W_UK[h]; mla_q = [q_lat, q_rope]; fa_q = [q_nope, q_rope] */
static void derive_q(const void *cv, long row, double *scratch)
{
    const derive_ctx *cx = cv;
    const mla_gen *g = cx->g;
    const int k = g->pb.k, d = g->pb.d, p = g->pb.p, h = g->pb.h;
    double *acc = scratch;
    for (int hh = 0; hh < h; hh++) {
        size_t rh = (size_t)row * h + hh;
        const uint16_t *qn = g->q_nope + rh * d, *qr = g->q_rope + rh * p;
        memset(acc, 0, sizeof(double) * k);
        const double *w = cx->wuk + (size_t)hh * d * k;
        for (int e = 0; e < d; e++) {
            double x = mla_bf16_to_f32(qn[e]);
            const double *a = w + (size_t)e * k;
            for (int cc = 0; cc < k; cc++) acc[cc] += x * a[cc];
        }
        uint16_t *ql = g->q_lat + rh * k, *mq = g->mla_q + rh * (k + p), *fq = g->fa_q + rh * (d + p);
        for (int cc = 0; cc < k; cc++) ql[cc] = mla_f32_to_bf16((float)acc[cc]);
        memcpy(mq, ql, sizeof(uint16_t) * k);
        memcpy(mq + k, qr, sizeof(uint16_t) * p);
        memcpy(fq, qn, sizeof(uint16_t) * d);
        memcpy(fq + d, qr, sizeof(uint16_t) * p);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* create / destroy                                                                            */
/* ------------------------------------------------------------------------------------------ */

void mla_gen_destroy(mla_gen *g)
{
    if (!g) return;
    free(g->seqlens), free(g->c_kv), free(g->k_rope), free(g->q_nope), free(g->q_rope);
    free(g->w_uk), free(g->w_uv), free(g->fa_q), free(g->fa_k), free(g->fa_v);
    free(g->mla_q), free(g->q_lat), free(g->cache), free(g->block_table);
    free(g->v6_k_nope), free(g->v6_v), free(g->v6_k_rope);
    memset(g, 0, sizeof *g);
}

/* malloc of n elements of `size` (at least one, so pointers are never NULL on success) */
static void *alloc_n(size_t n, size_t size) { return malloc((n ? n : 1) * size); }

mla_status mla_gen_create(const mla_problem *pb, const mla_gen_options *opt, mla_gen *g)
{
    if (!pb || !g) return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "mla_gen_create: NULL problem or output");
    memset(g, 0, sizeof *g);
    if (pb->b < 1 || pb->s < 1 || pb->t < 1 || pb->h < 1 || pb->d < 1 || pb->k < 1 || pb->p < 0 ||
        pb->page_size < 1 || pb->n < 0 || pb->n > pb->t)
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT,
                        "mla_gen_create: bad problem (b=%d s=%d t=%d h=%d d=%d k=%d p=%d n=%d page=%d)", pb->b,
                        pb->s, pb->t, pb->h, pb->d, pb->k, pb->p, pb->n, pb->page_size);
    mla_gen_options def = {.seed = 1};
    if (!opt) opt = &def;
    g->pb = *pb;
    const size_t b = pb->b, s = pb->s, t = pb->t, h = pb->h, d = pb->d, k = pb->k, p = pb->p, n = pb->n;
    const int page = pb->page_size;
    rng R = {.s = opt->seed};

    /* sequence lengths first, so the other draws do not depend on varlen */
    g->seqlens = alloc_n(b, sizeof(int32_t));
    if (!g->seqlens) goto oom;
    for (size_t r = 0; r < b; r++) g->seqlens[r] = pb->t;
    if (opt->varlen) {
        for (size_t r = 0; r < b; r++) g->seqlens[r] = rng_below(&R, pb->t + 1);
        if (opt->zero_length) {
            g->seqlens[0] = 0;
            if (b > 1) g->seqlens[1 + rng_below(&R, (int)b - 1)] = pb->t;   /* one full request */
        } else {
            g->seqlens[rng_below(&R, (int)b)] = pb->t;
        }
    }

    g->c_kv = alloc_n(b * t * k, 2);
    g->k_rope = alloc_n(b * t * p, 2);
    g->q_nope = alloc_n(b * s * h * d, 2);
    g->q_rope = alloc_n(b * s * h * p, 2);
    g->w_uk = alloc_n(h * d * k, 2);
    g->w_uv = alloc_n(h * k * d, 2);
    g->fa_q = alloc_n(b * s * h * (d + p), 2);
    g->fa_k = alloc_n(b * t * h * (d + p), 2);
    g->fa_v = alloc_n(b * t * h * d, 2);
    g->mla_q = alloc_n(b * s * h * (k + p), 2);
    g->q_lat = alloc_n(b * s * h * k, 2);
    g->v6_k_nope = alloc_n(b * n * h * d, 2);
    g->v6_v = alloc_n(b * n * h * d, 2);
    g->v6_k_rope = alloc_n(b * n * p, 2);
    if (!g->c_kv || !g->k_rope || !g->q_nope || !g->q_rope || !g->w_uk || !g->w_uv || !g->fa_q || !g->fa_k ||
        !g->fa_v || !g->mla_q || !g->q_lat || !g->v6_k_nope || !g->v6_v || !g->v6_k_rope)
        goto oom;

    fill_rand(&R, g->c_kv, b * t * k);
    fill_rand(&R, g->k_rope, b * t * p);
    fill_rand(&R, g->q_nope, b * s * h * d);
    fill_rand(&R, g->q_rope, b * s * h * p);
    if (opt->logit_trend && p > 0 && pb->scale > 0.f) {
        /* the same ramp in every request: score(tok) += trend * 40 * tok / (t - 1) after scaling */
        const double amp = 40.0 / pb->scale, dir = opt->logit_trend > 0 ? 1.0 : -1.0;
        for (size_t i = 0; i < b * s * h; i++) g->q_rope[i * p] = mla_f32_to_bf16(1.0f);
        for (size_t r = 0; r < b; r++)
            for (size_t tok = 0; tok < t; tok++)
                g->k_rope[(r * t + tok) * p] = mla_f32_to_bf16((float)(dir * amp * (t > 1 ? (double)tok / (t - 1) : 0.0)));
    }
    /* weights: randn/sqrt(k) keeps c_kv @ W (k terms of std 0.1) at std 0.1, and q_lat at 0.05 */
    {
        const double ws = 1.0 / sqrt((double)k);
        for (size_t i = 0; i < h * d * k; i++) g->w_uk[i] = mla_f32_to_bf16((float)(rng_randn(&R) * ws));
        for (size_t i = 0; i < h * k * d; i++) g->w_uv[i] = mla_f32_to_bf16((float)(rng_randn(&R) * ws));
    }

    /* derived tensors, in double from the bf16 sources */
    {
        double *wuk = malloc(sizeof(double) * h * d * k), *wukT = malloc(sizeof(double) * h * k * d);
        double *wuv = malloc(sizeof(double) * h * k * d);
        if (!wuk || !wukT || !wuv) {
            free(wuk), free(wukT), free(wuv);
            goto oom;
        }
        for (size_t hh = 0; hh < h; hh++)
            for (size_t e = 0; e < d; e++)
                for (size_t c = 0; c < k; c++) {
                    double w = mla_bf16_to_f32(g->w_uk[(hh * d + e) * k + c]);
                    wuk[(hh * d + e) * k + c] = w;
                    wukT[(hh * k + c) * d + e] = w;
                }
        for (size_t i = 0; i < h * k * d; i++) wuv[i] = mla_bf16_to_f32(g->w_uv[i]);
        const unsigned want = opt->designs ? opt->designs : 7u;
        derive_ctx cx = {.g = g, .wukT = wukT, .wuk = wuk, .wuv = wuv,
                         .all_rows = (want & (1u << MLA_DESIGN_FLASH_ATTENTION)) != 0,
                         .var6_rows = (want & (1u << MLA_DESIGN_MLA_VAR6_PLUS)) != 0};
        int e1 = gen_parallel((long)(b * t), derive_kv, &cx, k + 2 * d);
        int e2 = gen_parallel((long)(b * s), derive_q, &cx, k);
        free(wuk), free(wukT), free(wuv);
        if (e1 || e2) goto oom;
    }

    /* paged latent cache: ceil(t_r / page) pages per request, plus spare pages when permuted */
    {
        int total = 0;
        for (size_t r = 0; r < b; r++) total += (g->seqlens[r] + page - 1) / page;
        g->max_pages = (pb->t + page - 1) / page;
        g->num_pages = total + (opt->permute_pages ? 3 : 0);
        if (g->num_pages < 1) g->num_pages = 1;
        const size_t kp = k + p, np = (size_t)g->num_pages;
        g->cache = alloc_n(np * page * kp, 2);
        g->block_table = alloc_n(b * (size_t)g->max_pages, sizeof(int32_t));
        int *perm = alloc_n(np, sizeof(int));
        if (!g->cache || !g->block_table || !perm) {
            free(perm);
            goto oom;
        }
        fill_rand(&R, g->cache, np * page * kp);   /* spare pages and slots past t_r: random */
        for (int i = 0; i < g->num_pages; i++) perm[i] = i;
        if (opt->permute_pages)
            for (int i = g->num_pages - 1; i > 0; i--) {
                int j = rng_below(&R, i + 1), tmp = perm[i];
                perm[i] = perm[j];
                perm[j] = tmp;
            }
        int next = 0;
        for (size_t r = 0; r < b; r++) {
            int t_r = g->seqlens[r], np_r = (t_r + page - 1) / page;
            for (int q = 0; q < g->max_pages; q++) {
                /* entries past the request's pages still name a valid page */
                int pg = q < np_r ? perm[next++] : rng_below(&R, g->num_pages);
                g->block_table[r * g->max_pages + q] = pg;
            }
            for (int j = 0; j < t_r; j++) {
                int pg = g->block_table[r * g->max_pages + j / page];
                uint16_t *dst = g->cache + ((size_t)pg * page + j % page) * kp;
                memcpy(dst, g->c_kv + (r * t + j) * k, sizeof(uint16_t) * k);
                memcpy(dst + k, g->k_rope + (r * t + j) * p, sizeof(uint16_t) * p);
            }
        }
        free(perm);
    }

    /* mla_var6_plus new part: slot j of request r = position o_r + j; unused slots random */
    fill_rand(&R, g->v6_k_nope, b * n * h * d);
    fill_rand(&R, g->v6_v, b * n * h * d);
    fill_rand(&R, g->v6_k_rope, b * n * p);
    for (size_t r = 0; r < b; r++) {
        size_t t_r = g->seqlens[r], o_r = t_r > n ? t_r - n : 0;
        for (size_t j = 0; j < t_r - o_r; j++) {
            size_t pos = o_r + j;
            for (size_t hh = 0; hh < h; hh++) {
                memcpy(g->v6_k_nope + ((r * n + j) * h + hh) * d, g->fa_k + ((r * t + pos) * h + hh) * (d + p),
                       sizeof(uint16_t) * d);
                memcpy(g->v6_v + ((r * n + j) * h + hh) * d, g->fa_v + ((r * t + pos) * h + hh) * d,
                       sizeof(uint16_t) * d);
            }
            memcpy(g->v6_k_rope + (r * n + j) * p, g->k_rope + (r * t + pos) * p, sizeof(uint16_t) * p);
        }
    }
    return MLA_STATUS_OK;

oom:
    mla_gen_destroy(g);
    return mla_fail(MLA_STATUS_OUT_OF_MEMORY, "mla_gen_create: out of host memory (b=%d t=%d h=%d)", pb->b,
                    pb->t, pb->h);
}

/* ------------------------------------------------------------------------------------------ */
/* tensor structs                                                                              */
/* ------------------------------------------------------------------------------------------ */

static void strides3(int64_t st[3], int64_t n1, int64_t n2, int64_t n3)
{
    st[0] = n1 * n2 * n3;
    st[1] = n2 * n3;
    st[2] = n3;
}

void mla_gen_flash_attention_tensors(const mla_gen *g, mla_flash_attention_tensors *x)
{
    const mla_problem *pb = &g->pb;
    memset(x, 0, sizeof *x);
    x->q = g->fa_q;
    strides3(x->q_strides, pb->s, pb->h, pb->d + pb->p);
    x->k = g->fa_k;
    strides3(x->k_strides, pb->t, pb->h, pb->d + pb->p);
    x->v = g->fa_v;
    strides3(x->v_strides, pb->t, pb->h, pb->d);
    x->seqlens = g->seqlens;
    strides3(x->out_strides, pb->s, pb->h, pb->d);
}

void mla_gen_flash_mla_tensors(const mla_gen *g, mla_flash_mla_tensors *x)
{
    const mla_problem *pb = &g->pb;
    memset(x, 0, sizeof *x);
    x->q = g->mla_q;
    strides3(x->q_strides, pb->s, pb->h, pb->k + pb->p);
    x->cache = g->cache;
    x->num_pages = g->num_pages;
    x->block_table = g->block_table;
    x->max_pages = g->max_pages;
    x->block_table_stride = g->max_pages;
    x->seqlens = g->seqlens;
    strides3(x->out_strides, pb->s, pb->h, pb->k);
}

void mla_gen_var6_plus_tensors(const mla_gen *g, mla_var6_plus_tensors *x)
{
    const mla_problem *pb = &g->pb;
    memset(x, 0, sizeof *x);
    x->q_lat = g->q_lat;
    strides3(x->q_lat_strides, pb->s, pb->h, pb->k);
    x->q_nope = g->q_nope;
    strides3(x->q_nope_strides, pb->s, pb->h, pb->d);
    x->q_rope = g->q_rope;
    strides3(x->q_rope_strides, pb->s, pb->h, pb->p);
    x->cache = g->cache;
    x->num_pages = g->num_pages;
    x->block_table = g->block_table;
    x->max_pages = g->max_pages;
    x->block_table_stride = g->max_pages;
    x->k_nope = g->v6_k_nope;
    strides3(x->k_nope_strides, pb->n, pb->h, pb->d);
    x->v = g->v6_v;
    strides3(x->v_strides, pb->n, pb->h, pb->d);
    x->k_rope = g->v6_k_rope;
    x->k_rope_strides[0] = (int64_t)pb->n * pb->p;
    x->k_rope_strides[1] = pb->p;
    x->w_uv = g->w_uv;
    x->seqlens = g->seqlens;
    strides3(x->out_strides, pb->s, pb->h, pb->d);
}
