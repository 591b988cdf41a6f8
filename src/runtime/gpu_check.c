/*
 * gpu_check.c - the GPU --check: generate one problem (all representations), upload the
 * design's, plan, poison the outputs with NaN, run the kernel, run the naive fp32 GPU reference
 * (gpu_ref.cu) on the same device inputs, download both and compare by MLA_SPEC.md's bar.
 * Library code: every failure returns a status with mla_last_error set, and frees what it made.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <cuda_runtime_api.h>

#include "gpu_check.h"
#include "error.h"
#include "device.h"

#define CUDA_TRY(call, what)                                                                          \
    do {                                                                                              \
        cudaError_t e_ = (call);                                                                      \
        if (e_ != cudaSuccess) {                                                                      \
            st = mla_fail(e_ == cudaErrorMemoryAllocation ? MLA_STATUS_OUT_OF_MEMORY                  \
                                                          : MLA_STATUS_CUDA_ERROR,                    \
                          "gpu check: %s: %s", what, cudaGetErrorString(e_));                         \
            goto done;                                                                                \
        }                                                                                             \
    } while (0)

/* ------------------------------------------------------------------------------------------ */
/* device inputs                                                                               */
/* ------------------------------------------------------------------------------------------ */

/* cudaMalloc + upload of `bytes` from host `src` (may be NULL: allocate only). A few spare
 * bytes are allocated so that a zero-size tensor (n = 0) still has a valid, non-null pointer. */
static mla_status dev_put(mla_gpu_inputs *in, const void *src, size_t bytes, void **out)
{
    void *p = NULL;
    if (in->num_allocs >= (int)(sizeof in->allocs / sizeof in->allocs[0]))
        return mla_fail(MLA_STATUS_INTERNAL, "gpu check: too many device buffers");
    cudaError_t e = cudaMalloc(&p, bytes + 256);
    if (e != cudaSuccess)
        return mla_fail(e == cudaErrorMemoryAllocation ? MLA_STATUS_OUT_OF_MEMORY : MLA_STATUS_CUDA_ERROR,
                        "gpu check: cudaMalloc(%zu): %s", bytes, cudaGetErrorString(e));
    in->allocs[in->num_allocs++] = p;
    if (src && bytes) {
        e = cudaMemcpy(p, src, bytes, cudaMemcpyHostToDevice);
        if (e != cudaSuccess)
            return mla_fail(MLA_STATUS_CUDA_ERROR, "gpu check: upload of %zu bytes: %s", bytes,
                            cudaGetErrorString(e));
    }
    *out = p;
    return MLA_STATUS_OK;
}

void mla_gpu_inputs_free(mla_gpu_inputs *in)
{
    if (!in) return;
    for (int i = 0; i < in->num_allocs; i++) cudaFree(in->allocs[i]);
    memset(in, 0, sizeof *in);
}

#define PUT(src, bytes, dst)                                                                          \
    do {                                                                                              \
        void *p_ = NULL;                                                                              \
        st = dev_put(in, (src), (bytes), &p_);                                                        \
        if (st != MLA_STATUS_OK) goto fail;                                                           \
        (dst) = p_;                                                                                   \
    } while (0)

mla_status mla_gpu_inputs_upload(const mla_problem *pb, const mla_gen *g, mla_gpu_inputs *in)
{
    if (!pb || !g || !in) return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "mla_gpu_inputs_upload: null argument");
    memset(in, 0, sizeof *in);
    const mla_problem *gp = &g->pb;
    if (gp->b != pb->b || gp->s != pb->s || gp->t != pb->t || gp->h != pb->h || gp->d != pb->d ||
        gp->k != pb->k || gp->p != pb->p || gp->page_size != pb->page_size ||
        (pb->design == MLA_DESIGN_MLA_VAR6_PLUS && gp->n != pb->n))
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT,
                        "mla_gpu_inputs_upload: generated shape (b=%d s=%d t=%d h=%d n=%d) differs from the "
                        "problem (b=%d s=%d t=%d h=%d n=%d)",
                        gp->b, gp->s, gp->t, gp->h, gp->n, pb->b, pb->s, pb->t, pb->h, pb->n);
    in->pb = *pb;
    mla_status st = MLA_STATUS_OK;
    const size_t b = pb->b, s = pb->s, t = pb->t, h = pb->h, d = pb->d, k = pb->k, p = pb->p;
    const size_t n = pb->n, bf = 2;
    const size_t cache_bytes = (size_t)g->num_pages * pb->page_size * (k + p) * bf;
    const size_t bt_bytes = b * (size_t)g->max_pages * sizeof(int32_t);
    const int32_t *seq_d = NULL;
    PUT(g->seqlens, b * sizeof(int32_t), seq_d);
    in->lse_elems = b * h * s;

    switch (pb->design) {
    case MLA_DESIGN_FLASH_ATTENTION: {
        mla_flash_attention_tensors *x = &in->fa;
        mla_gen_flash_attention_tensors(g, x);
        in->dv = pb->d;
        PUT(g->fa_q, b * s * h * (d + p) * bf, x->q);
        PUT(g->fa_k, b * t * h * (d + p) * bf, x->k);
        PUT(g->fa_v, b * t * h * d * bf, x->v);
        x->seqlens = seq_d;
        in->out_elems = b * s * h * d;
        PUT(NULL, in->out_elems * bf, x->out);
        PUT(NULL, in->lse_elems * sizeof(float), x->lse);
        break;
    }
    case MLA_DESIGN_FLASH_MLA: {
        mla_flash_mla_tensors *x = &in->mla;
        mla_gen_flash_mla_tensors(g, x);
        in->dv = pb->k;
        PUT(g->mla_q, b * s * h * (k + p) * bf, x->q);
        PUT(g->cache, cache_bytes, x->cache);
        PUT(g->block_table, bt_bytes, x->block_table);
        x->seqlens = seq_d;
        in->out_elems = b * s * h * k;
        PUT(NULL, in->out_elems * bf, x->out);
        PUT(NULL, in->lse_elems * sizeof(float), x->lse);
        break;
    }
    case MLA_DESIGN_MLA_VAR6_PLUS: {
        mla_var6_plus_tensors *x = &in->v6;
        mla_gen_var6_plus_tensors(g, x);
        in->dv = pb->d;
        PUT(g->q_lat, b * s * h * k * bf, x->q_lat);
        PUT(g->q_nope, b * s * h * d * bf, x->q_nope);
        PUT(g->q_rope, b * s * h * p * bf, x->q_rope);
        PUT(g->cache, cache_bytes, x->cache);
        PUT(g->block_table, bt_bytes, x->block_table);
        PUT(g->v6_k_nope, b * n * h * d * bf, x->k_nope);
        PUT(g->v6_v, b * n * h * d * bf, x->v);
        PUT(g->v6_k_rope, b * n * p * bf, x->k_rope);
        PUT(g->w_uv, h * k * d * bf, x->w_uv);
        x->seqlens = seq_d;
        in->out_elems = b * s * h * d;
        PUT(NULL, in->out_elems * bf, x->out);
        PUT(NULL, in->lse_elems * sizeof(float), x->lse);
        break;
    }
    default:
        st = mla_fail(MLA_STATUS_INVALID_ARGUMENT, "mla_gpu_inputs_upload: unknown design %d", (int)pb->design);
        goto fail;
    }
    return MLA_STATUS_OK;
fail:
    mla_gpu_inputs_free(in);
    return st;
}

/* ------------------------------------------------------------------------------------------ */
/* device-generated random inputs                                                              */
/* ------------------------------------------------------------------------------------------ */

static uint64_t rnd_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int rnd_below(uint64_t *s, int n) { return (int)(rnd_next(s) % (uint64_t)n); }

static void packed3(int64_t st[3], int64_t n1, int64_t n2, int64_t n3)
{
    st[0] = n1 * n2 * n3;
    st[1] = n2 * n3;
    st[2] = n3;
}

/* allocate `count` bf16 and fill them with randn * sd */
#define PUTR(count, sd, dst)                                                                          \
    do {                                                                                              \
        void *p_ = NULL;                                                                              \
        st = dev_put(in, NULL, (size_t)(count) * 2, &p_);                                             \
        if (st != MLA_STATUS_OK) goto fail;                                                           \
        st = mla_gpu_fill_randn_bf16(p_, (size_t)(count), rnd_next(&seed), (sd), NULL);               \
        if (st != MLA_STATUS_OK) goto fail;                                                           \
        (dst) = p_;                                                                                   \
    } while (0)

mla_status mla_gpu_inputs_random(const mla_problem *pb, const mla_gen_options *opt, mla_gpu_inputs *in)
{
    if (!pb || !in) return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "mla_gpu_inputs_random: null argument");
    memset(in, 0, sizeof *in);
    if (pb->b < 1 || pb->s < 1 || pb->t < 1 || pb->h < 1 || pb->d < 1 || pb->k < 1 || pb->p < 0 ||
        pb->page_size < 1 || pb->n < 0 || pb->n > pb->t)
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "mla_gpu_inputs_random: bad problem (b=%d s=%d t=%d h=%d n=%d)",
                        pb->b, pb->s, pb->t, pb->h, pb->n);
    mla_gen_options def = {.seed = 1};
    if (!opt) opt = &def;
    if (opt->logit_trend)   /* the device draw has no trend: say so rather than ignore it */
        return mla_fail(MLA_STATUS_UNSUPPORTED, "mla_gpu_inputs_random: logit_trend needs the CPU generator");
    in->pb = *pb;
    mla_status st = MLA_STATUS_OK;
    uint64_t seed = opt->seed ^ 0x6a09e667f3bcc909ull;
    const size_t b = pb->b, s = pb->s, t = pb->t, h = pb->h, d = pb->d, k = pb->k, p = pb->p, n = pb->n;
    const int page = pb->page_size;
    const float sd = 0.1f;
    int32_t *seq = malloc(sizeof(int32_t) * b), *bt = NULL, *perm = NULL;
    if (!seq) return mla_fail(MLA_STATUS_OUT_OF_MEMORY, "mla_gpu_inputs_random: host memory");

    /* sequence lengths and the page table, drawn as mla_gen_create draws them */
    for (size_t r = 0; r < b; r++) seq[r] = pb->t;
    if (opt->varlen) {
        for (size_t r = 0; r < b; r++) seq[r] = rnd_below(&seed, pb->t + 1);
        if (opt->zero_length) {
            seq[0] = 0;
            if (b > 1) seq[1 + rnd_below(&seed, (int)b - 1)] = pb->t;
        } else {
            seq[rnd_below(&seed, (int)b)] = pb->t;
        }
    }
    int total = 0;
    for (size_t r = 0; r < b; r++) total += (seq[r] + page - 1) / page;
    const int max_pages = (pb->t + page - 1) / page;
    int num_pages = total + (opt->permute_pages ? 3 : 0);
    if (num_pages < 1) num_pages = 1;
    bt = malloc(sizeof(int32_t) * b * (size_t)max_pages);
    perm = malloc(sizeof(int) * (size_t)num_pages);
    if (!bt || !perm) {
        st = mla_fail(MLA_STATUS_OUT_OF_MEMORY, "mla_gpu_inputs_random: host memory");
        goto fail;
    }
    for (int i = 0; i < num_pages; i++) perm[i] = i;
    if (opt->permute_pages)
        for (int i = num_pages - 1; i > 0; i--) {
            int j = rnd_below(&seed, i + 1), tmp = perm[i];
            perm[i] = perm[j];
            perm[j] = tmp;
        }
    {
        int next = 0;
        for (size_t r = 0; r < b; r++) {
            int np_r = (seq[r] + page - 1) / page;
            for (int q = 0; q < max_pages; q++)
                bt[r * max_pages + q] = q < np_r ? perm[next++] : rnd_below(&seed, num_pages);
        }
    }

    const int32_t *seq_d = NULL;
    PUT(seq, b * sizeof(int32_t), seq_d);
    in->lse_elems = b * h * s;
    const size_t cache_elems = (size_t)num_pages * page * (k + p);
    switch (pb->design) {
    case MLA_DESIGN_FLASH_ATTENTION: {
        mla_flash_attention_tensors *x = &in->fa;
        in->dv = pb->d;
        PUTR(b * s * h * (d + p), sd, x->q);
        PUTR(b * t * h * (d + p), sd, x->k);
        PUTR(b * t * h * d, sd, x->v);
        packed3(x->q_strides, s, h, d + p);
        packed3(x->k_strides, t, h, d + p);
        packed3(x->v_strides, t, h, d);
        packed3(x->out_strides, s, h, d);
        x->seqlens = seq_d;
        in->out_elems = b * s * h * d;
        PUT(NULL, in->out_elems * 2, x->out);
        PUT(NULL, in->lse_elems * sizeof(float), x->lse);
        break;
    }
    case MLA_DESIGN_FLASH_MLA: {
        mla_flash_mla_tensors *x = &in->mla;
        in->dv = pb->k;
        PUTR(b * s * h * (k + p), sd, x->q);
        PUTR(cache_elems, sd, x->cache);
        PUT(bt, b * (size_t)max_pages * sizeof(int32_t), x->block_table);
        packed3(x->q_strides, s, h, k + p);
        packed3(x->out_strides, s, h, k);
        x->num_pages = num_pages;
        x->max_pages = max_pages;
        x->block_table_stride = max_pages;
        x->seqlens = seq_d;
        in->out_elems = b * s * h * k;
        PUT(NULL, in->out_elems * 2, x->out);
        PUT(NULL, in->lse_elems * sizeof(float), x->lse);
        break;
    }
    case MLA_DESIGN_MLA_VAR6_PLUS: {
        mla_var6_plus_tensors *x = &in->v6;
        in->dv = pb->d;
        PUTR(b * s * h * k, sd, x->q_lat);
        PUTR(b * s * h * d, sd, x->q_nope);
        PUTR(b * s * h * p, sd, x->q_rope);
        PUTR(cache_elems, sd, x->cache);
        PUT(bt, b * (size_t)max_pages * sizeof(int32_t), x->block_table);
        PUTR(b * n * h * d, sd, x->k_nope);
        PUTR(b * n * h * d, sd, x->v);
        PUTR(b * n * p, sd, x->k_rope);
        PUTR(h * k * d, (float)(1.0 / sqrt((double)k)), x->w_uv);
        packed3(x->q_lat_strides, s, h, k);
        packed3(x->q_nope_strides, s, h, d);
        packed3(x->q_rope_strides, s, h, p);
        packed3(x->k_nope_strides, n, h, d);
        packed3(x->v_strides, n, h, d);
        x->k_rope_strides[0] = (int64_t)(n * p);
        x->k_rope_strides[1] = (int64_t)p;
        packed3(x->out_strides, s, h, d);
        x->num_pages = num_pages;
        x->max_pages = max_pages;
        x->block_table_stride = max_pages;
        x->seqlens = seq_d;
        in->out_elems = b * s * h * d;
        PUT(NULL, in->out_elems * 2, x->out);
        PUT(NULL, in->lse_elems * sizeof(float), x->lse);
        break;
    }
    default:
        st = mla_fail(MLA_STATUS_INVALID_ARGUMENT, "mla_gpu_inputs_random: unknown design %d", (int)pb->design);
        goto fail;
    }
    {
        cudaError_t e = cudaDeviceSynchronize();   /* the fills ran on the legacy stream */
        if (e != cudaSuccess) {
            st = mla_fail(MLA_STATUS_CUDA_ERROR, "mla_gpu_inputs_random: fill: %s", cudaGetErrorString(e));
            goto fail;
        }
    }
    free(seq), free(bt), free(perm);
    return MLA_STATUS_OK;
fail:
    free(seq), free(bt), free(perm);
    mla_gpu_inputs_free(in);
    return st;
}

const void *mla_gpu_inputs_tensors(const mla_gpu_inputs *in)
{
    switch (in->pb.design) {
    case MLA_DESIGN_FLASH_ATTENTION: return &in->fa;
    case MLA_DESIGN_FLASH_MLA: return &in->mla;
    case MLA_DESIGN_MLA_VAR6_PLUS: return &in->v6;
    }
    return NULL;
}

static void *out_ptr(const mla_gpu_inputs *in, float **lse)
{
    switch (in->pb.design) {
    case MLA_DESIGN_FLASH_ATTENTION: *lse = in->fa.lse; return in->fa.out;
    case MLA_DESIGN_FLASH_MLA: *lse = in->mla.lse; return in->mla.out;
    case MLA_DESIGN_MLA_VAR6_PLUS: *lse = in->v6.lse; return in->v6.out;
    }
    *lse = NULL;
    return NULL;
}

mla_status mla_gpu_inputs_poison(const mla_gpu_inputs *in, void *stream)
{
    float *lse;
    void *out = out_ptr(in, &lse);
    if (!out || !lse) return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "mla_gpu_inputs_poison: no outputs");
    cudaError_t e = cudaMemsetAsync(out, 0xFF, in->out_elems * 2, (cudaStream_t)stream);
    if (e == cudaSuccess) e = cudaMemsetAsync(lse, 0xFF, in->lse_elems * sizeof(float), (cudaStream_t)stream);
    if (e != cudaSuccess)
        return mla_fail(MLA_STATUS_CUDA_ERROR, "gpu check: poisoning outputs: %s", cudaGetErrorString(e));
    return MLA_STATUS_OK;
}

mla_status mla_gpu_inputs_run(mla_plan_t plan, const mla_gpu_inputs *in, void *workspace,
                              size_t workspace_bytes, void *stream)
{
    switch (in->pb.design) {
    case MLA_DESIGN_FLASH_ATTENTION: return mla_flash_attention_run(plan, &in->fa, workspace, workspace_bytes, stream);
    case MLA_DESIGN_FLASH_MLA: return mla_flash_mla_run(plan, &in->mla, workspace, workspace_bytes, stream);
    case MLA_DESIGN_MLA_VAR6_PLUS: return mla_var6_plus_run(plan, &in->v6, workspace, workspace_bytes, stream);
    }
    return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "mla_gpu_inputs_run: unknown design");
}

mla_status mla_gpu_inputs_reference(const mla_gpu_inputs *in, float *ref_out, float *ref_lse, void *stream)
{
    switch (in->pb.design) {
    case MLA_DESIGN_FLASH_ATTENTION: return mla_gpu_ref_flash_attention(&in->pb, &in->fa, ref_out, ref_lse, stream);
    case MLA_DESIGN_FLASH_MLA: return mla_gpu_ref_flash_mla(&in->pb, &in->mla, ref_out, ref_lse, stream);
    case MLA_DESIGN_MLA_VAR6_PLUS: return mla_gpu_ref_var6_plus(&in->pb, &in->v6, ref_out, ref_lse, stream);
    }
    return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "mla_gpu_inputs_reference: unknown design");
}

mla_status mla_gpu_inputs_download(const mla_gpu_inputs *in, float *out, float *lse)
{
    float *lse_d;
    void *out_d = out_ptr(in, &lse_d);
    if (!out_d || !out || !lse) return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "mla_gpu_inputs_download: null");
    uint16_t *tmp = malloc(in->out_elems * 2 + 2);
    if (!tmp) return mla_fail(MLA_STATUS_OUT_OF_MEMORY, "gpu check: host buffer of %zu bytes", in->out_elems * 2);
    cudaError_t e = cudaMemcpy(tmp, out_d, in->out_elems * 2, cudaMemcpyDeviceToHost);
    if (e == cudaSuccess) e = cudaMemcpy(lse, lse_d, in->lse_elems * sizeof(float), cudaMemcpyDeviceToHost);
    if (e != cudaSuccess) {
        free(tmp);
        return mla_fail(MLA_STATUS_CUDA_ERROR, "gpu check: download: %s", cudaGetErrorString(e));
    }
    for (size_t i = 0; i < in->out_elems; i++) out[i] = mla_bf16_to_f32(tmp[i]);
    free(tmp);
    return MLA_STATUS_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* the check                                                                                   */
/* ------------------------------------------------------------------------------------------ */

static mla_status plan_design(const mla_problem *pb, const mla_plan_options *po, mla_plan_t *plan)
{
    switch (pb->design) {
    case MLA_DESIGN_FLASH_ATTENTION: return mla_flash_attention_plan(pb, po, plan);
    case MLA_DESIGN_FLASH_MLA: return mla_flash_mla_plan(pb, po, plan);
    case MLA_DESIGN_MLA_VAR6_PLUS: return mla_var6_plus_plan(pb, po, plan);
    }
    return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "gpu check: unknown design %d", (int)pb->design);
}

/* The check. Inputs: `in_given` (already on the device), else `g_in` uploaded, else generated
 * after planning (so a skipped plan costs no generation). */
/* out_pad's layout: row pitch dv + pad, request stride s * h * (dv + pad) + pad (elements). */
static size_t padded_out_elems(const mla_gpu_inputs *in, int pad)
{
    const size_t rows = (size_t)in->pb.s * in->pb.h, pitch = (size_t)in->dv + pad;
    return (size_t)in->pb.b * (rows * pitch + pad);
}

/* A copy of `in` whose design's out is `buf` with out_pad's strides. */
static void padded_inputs(const mla_gpu_inputs *in, int pad, void *buf, mla_gpu_inputs *r)
{
    const int64_t pitch = in->dv + pad, st[3] = {(int64_t)in->pb.s * in->pb.h * pitch + pad,
                                                 (int64_t)in->pb.h * pitch, pitch};
    *r = *in;
    r->num_allocs = 0;   /* owns nothing */
    int64_t *dst = NULL;
    switch (in->pb.design) {
    case MLA_DESIGN_FLASH_ATTENTION: r->fa.out = buf, dst = r->fa.out_strides; break;
    case MLA_DESIGN_FLASH_MLA: r->mla.out = buf, dst = r->mla.out_strides; break;
    default: r->v6.out = buf, dst = r->v6.out_strides; break;
    }
    memcpy(dst, st, sizeof st);
}

/* The kernel's rows out of the padded buffer into in's packed out (device to device), and the
 * number of padding elements that are no longer the poison (0xFFFF). */
static mla_status unpad_out(const mla_gpu_inputs *in, int pad, const void *buf, size_t *touched)
{
    mla_status st = MLA_STATUS_OK;
    const size_t rows = (size_t)in->pb.s * in->pb.h, dv = in->dv, pitch = dv + pad, req = rows * pitch + pad;
    void *out = in->pb.design == MLA_DESIGN_FLASH_ATTENTION ? in->fa.out
                : in->pb.design == MLA_DESIGN_FLASH_MLA   ? in->mla.out
                                                          : in->v6.out;
    for (int r = 0; r < in->pb.b; r++)
        CUDA_TRY(cudaMemcpy2D((uint16_t *)out + r * rows * dv, dv * 2, (const uint16_t *)buf + r * req, pitch * 2,
                              dv * 2, rows, cudaMemcpyDeviceToDevice),
                 "padded out copy");
    const size_t n = padded_out_elems(in, pad);
    uint16_t *h = malloc(n * sizeof *h + 2);
    if (!h) return mla_fail(MLA_STATUS_OUT_OF_MEMORY, "gpu check: padded out host copy");
    cudaError_t e = cudaMemcpy(h, buf, n * sizeof *h, cudaMemcpyDeviceToHost);
    if (e != cudaSuccess) {
        free(h);
        return mla_fail(MLA_STATUS_CUDA_ERROR, "padded out download: %s", cudaGetErrorString(e));
    }
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        const size_t in_req = i % req;
        const int is_pad = in_req >= rows * pitch || in_req % pitch >= dv;
        if (is_pad && h[i] != 0xFFFFu) bad++;
    }
    free(h);
    *touched = bad;
done:
    return st;
}

static mla_status check_core(const mla_problem *pb, const mla_gen *g_in, const mla_gpu_inputs *in_given,
                             const mla_gpu_check_options *opt, mla_check_report *rep)
{
    mla_gpu_check_options defo = {.seed = 1};
    if (!opt) opt = &defo;
    if (!pb || !rep) return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "mla_gpu_check: null problem or report");
    memset(rep, 0, sizeof *rep);
    if (mla_device_count() == 0) return mla_fail(MLA_STATUS_NO_DEVICE, "mla_gpu_check: no CUDA device");

    mla_status st = MLA_STATUS_OK;
    mla_plan_t plan = NULL;
    mla_gen gen;
    int have_gen = 0;
    mla_gpu_inputs own;
    memset(&own, 0, sizeof own);
    const mla_gpu_inputs *inp = &own;
    void *ws = NULL;
    float *ref_out_d = NULL, *ref_lse_d = NULL;
    float *out_h = NULL, *lse_h = NULL, *ref_out_h = NULL, *ref_lse_h = NULL;
    cudaStream_t stream = NULL;
    size_t ws_bytes = 0, pad_touched = 0;
    void *pad_d = NULL;   /* opt->out_pad's buffer */
    char desc[256] = "";

    CUDA_TRY(cudaSetDevice(opt->device), "cudaSetDevice");

    mla_plan_options po;
    mla_plan_options_init(&po);
    po.device = opt->device;
    po.version = opt->version;
    po.tiling = opt->tiling;
    po.autotune = MLA_AUTOTUNE_OFF;
    st = plan_design(pb, &po, &plan);
    if (st != MLA_STATUS_OK) goto done;   /* UNSUPPORTED / ARCH_MISMATCH: the caller skips */
    if (mla_plan_describe(plan, desc, sizeof desc) != MLA_STATUS_OK) desc[0] = '\0';
    st = mla_plan_workspace_size(plan, &ws_bytes);
    if (st != MLA_STATUS_OK) goto done;

    if (in_given) {
        const mla_problem *ip = &in_given->pb;
        if (ip->design != pb->design || ip->b != pb->b || ip->s != pb->s || ip->t != pb->t || ip->h != pb->h ||
            ip->d != pb->d || ip->k != pb->k || ip->p != pb->p || ip->n != pb->n ||
            ip->page_size != pb->page_size) {
            st = mla_fail(MLA_STATUS_INVALID_ARGUMENT, "mla_gpu_check_inputs: the inputs were made for another problem");
            goto done;
        }
        inp = in_given;
    } else {
        const mla_gen *g = g_in;
        if (!g) {
            mla_gen_options go = {.seed = opt->seed, .varlen = opt->varlen, .zero_length = opt->zero_length,
                                  .permute_pages = opt->permute_pages,
                                  .designs = 1u << pb->design};   /* derive only what is checked */
            st = mla_gen_create(pb, &go, &gen);
            if (st != MLA_STATUS_OK) goto done;
            have_gen = 1;
            g = &gen;
        }
        st = mla_gpu_inputs_upload(pb, g, &own);
        if (st != MLA_STATUS_OK) goto done;
        if (have_gen) {   /* the host copy is no longer needed: free it before the big buffers */
            mla_gen_destroy(&gen);
            have_gen = 0;
        }
    }

    if (ws_bytes) CUDA_TRY(cudaMalloc(&ws, ws_bytes), "workspace cudaMalloc");
    CUDA_TRY(cudaMalloc((void **)&ref_out_d, inp->out_elems * sizeof(float)), "reference cudaMalloc");
    CUDA_TRY(cudaMalloc((void **)&ref_lse_d, inp->lse_elems * sizeof(float)), "reference cudaMalloc");
    CUDA_TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");

    /* Poison (also the reference's buffers, so an unwritten reference element shows as NaN). */
    st = mla_gpu_inputs_poison(inp, stream);
    if (st != MLA_STATUS_OK) goto done;
    CUDA_TRY(cudaMemsetAsync(ref_out_d, 0xFF, inp->out_elems * sizeof(float), stream), "poison");
    CUDA_TRY(cudaMemsetAsync(ref_lse_d, 0xFF, inp->lse_elems * sizeof(float), stream), "poison");

    if (opt->out_pad > 0) {
        if (opt->out_pad % 8) {
            st = mla_fail(MLA_STATUS_INVALID_ARGUMENT, "gpu check: out_pad=%d is not a multiple of 8", opt->out_pad);
            goto done;
        }
        const size_t n = padded_out_elems(inp, opt->out_pad);
        CUDA_TRY(cudaMalloc(&pad_d, n * 2), "padded out cudaMalloc");
        CUDA_TRY(cudaMemsetAsync(pad_d, 0xFF, n * 2, stream), "poison");
        mla_gpu_inputs padded;
        padded_inputs(inp, opt->out_pad, pad_d, &padded);
        st = mla_gpu_inputs_run(plan, &padded, ws, ws_bytes, stream);
    } else {
        st = mla_gpu_inputs_run(plan, inp, ws, ws_bytes, stream);
    }
    if (st != MLA_STATUS_OK) goto done;
    CUDA_TRY(cudaStreamSynchronize(stream), "kernel run");
    CUDA_TRY(cudaGetLastError(), "kernel run");
    if (pad_d) {
        st = unpad_out(inp, opt->out_pad, pad_d, &pad_touched);
        if (st != MLA_STATUS_OK) goto done;
    }

    st = mla_gpu_inputs_reference(inp, ref_out_d, ref_lse_d, stream);
    if (st != MLA_STATUS_OK) goto done;
    CUDA_TRY(cudaStreamSynchronize(stream), "gpu reference run");
    CUDA_TRY(cudaGetLastError(), "gpu reference run");

    out_h = malloc(inp->out_elems * sizeof(float) + 4);
    ref_out_h = malloc(inp->out_elems * sizeof(float) + 4);
    lse_h = malloc(inp->lse_elems * sizeof(float) + 4);
    ref_lse_h = malloc(inp->lse_elems * sizeof(float) + 4);
    if (!out_h || !ref_out_h || !lse_h || !ref_lse_h) {
        st = mla_fail(MLA_STATUS_OUT_OF_MEMORY, "gpu check: host buffers (%zu outputs)", inp->out_elems);
        goto done;
    }
    st = mla_gpu_inputs_download(inp, out_h, lse_h);
    if (st != MLA_STATUS_OK) goto done;
    CUDA_TRY(cudaMemcpy(ref_out_h, ref_out_d, inp->out_elems * sizeof(float), cudaMemcpyDeviceToHost),
             "reference download");
    CUDA_TRY(cudaMemcpy(ref_lse_h, ref_lse_d, inp->lse_elems * sizeof(float), cudaMemcpyDeviceToHost),
             "reference download");

    mla_check_compare(pb, inp->dv, out_h, lse_h, ref_out_h, ref_lse_h, rep);
    if (pad_d) {
        char note[96];
        if (pad_touched) {
            rep->pass = 0;
            snprintf(note, sizeof note, "FAIL: %zu padding elements of the strided out written; ", pad_touched);
        } else {
            snprintf(note, sizeof note, "out strides padded by %d, padding untouched; ", opt->out_pad);
        }
        size_t nl = strlen(note), ml = strlen(rep->message);   /* note first, the verdict cut if need be */
        if (nl + ml >= sizeof rep->message) ml = sizeof rep->message - nl - 1;
        memmove(rep->message + nl, rep->message, ml);
        memcpy(rep->message, note, nl);
        rep->message[nl + ml] = '\0';
    }
    if (desc[0]) {
        size_t len = strlen(rep->message);
        if (len + 4 < sizeof rep->message)
            snprintf(rep->message + len, sizeof rep->message - len, " [%s]", desc);
    }
    st = MLA_STATUS_OK;

done:
    free(out_h), free(lse_h), free(ref_out_h), free(ref_lse_h);
    if (stream) cudaStreamDestroy(stream);
    if (ref_out_d) cudaFree(ref_out_d);
    if (ref_lse_d) cudaFree(ref_lse_d);
    if (ws) cudaFree(ws);
    if (pad_d) cudaFree(pad_d);
    mla_gpu_inputs_free(&own);
    if (have_gen) mla_gen_destroy(&gen);
    mla_plan_destroy(plan);
    if (st != MLA_STATUS_OK && !rep->message[0])
        snprintf(rep->message, sizeof rep->message, "%s: %s", mla_status_name(st), mla_last_error());
    return st;
}

mla_status mla_gpu_check(const mla_problem *pb, const mla_gpu_check_options *opt, mla_check_report *rep)
{
    return check_core(pb, NULL, NULL, opt, rep);
}

mla_status mla_gpu_check_gen(const mla_problem *pb, const mla_gen *g, const mla_gpu_check_options *opt,
                             mla_check_report *rep)
{
    if (!g) return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "mla_gpu_check_gen: null generator");
    return check_core(pb, g, NULL, opt, rep);
}

mla_status mla_gpu_check_inputs(const mla_problem *pb, const mla_gpu_inputs *in, const mla_gpu_check_options *opt,
                                mla_check_report *rep)
{
    if (!in) return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "mla_gpu_check_inputs: null inputs");
    return check_core(pb, NULL, in, opt, rep);
}
