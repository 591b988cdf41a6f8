/*
 * test_gpu_ref: the naive fp32 GPU reference (gpu_ref.cu) against the fp64 CPU reference
 * (mla_ref_*) on small shapes of all three designs: causal and not, varlen with a zero-length
 * request, permuted pages, mla_var6_plus with n in {0, s, t/2, t}, h in {16, 128}, and inputs
 * with non-packed strides (padding filled with NaN so a wrong stride shows). fp32 vs fp64 on the
 * same bf16 inputs should agree to ~1e-6; the bar is rel L2 <= 1e-4, |lse diff| <= 1e-4, -inf
 * exactly where the CPU says the row is empty, out exactly 0 there. Exit 77 without a GPU.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime_api.h>

#include "mla_var3.h"
#include "ref.h"
#include "gpu_check.h"
#include "device.h"
#include "registry.h"

typedef struct tcase {
    mla_design design;
    int b, s, t, h, causal, varlen, zero, permute, n, padded;
} tcase;

static const tcase cases[] = {
    /* flash_attention */
    {MLA_DESIGN_FLASH_ATTENTION, 1, 1, 1, 16, 1, 0, 0, 0, 0, 0},
    {MLA_DESIGN_FLASH_ATTENTION, 2, 5, 70, 16, 1, 0, 0, 0, 0, 0},
    {MLA_DESIGN_FLASH_ATTENTION, 3, 16, 300, 128, 1, 1, 1, 0, 0, 0},
    {MLA_DESIGN_FLASH_ATTENTION, 3, 2, 130, 16, 0, 1, 0, 0, 0, 0},
    {MLA_DESIGN_FLASH_ATTENTION, 2, 4, 100, 16, 1, 1, 1, 0, 0, 1},
    /* flash_mla */
    {MLA_DESIGN_FLASH_MLA, 1, 1, 1, 16, 1, 0, 0, 0, 0, 0},
    {MLA_DESIGN_FLASH_MLA, 3, 5, 200, 16, 1, 1, 1, 1, 0, 0},
    {MLA_DESIGN_FLASH_MLA, 2, 16, 300, 128, 1, 0, 0, 1, 0, 0},
    {MLA_DESIGN_FLASH_MLA, 3, 3, 65, 128, 0, 1, 0, 0, 0, 0},
    {MLA_DESIGN_FLASH_MLA, 2, 2, 130, 16, 1, 1, 1, 1, 0, 1},
    /* mla_var6_plus: n in {0, s, t/2, t} */
    {MLA_DESIGN_MLA_VAR6_PLUS, 1, 1, 1, 16, 1, 0, 0, 0, 1, 0},
    {MLA_DESIGN_MLA_VAR6_PLUS, 3, 5, 200, 16, 1, 1, 1, 1, 0, 0},
    {MLA_DESIGN_MLA_VAR6_PLUS, 2, 5, 200, 16, 1, 0, 0, 1, 5, 0},
    {MLA_DESIGN_MLA_VAR6_PLUS, 3, 16, 300, 128, 1, 1, 1, 0, 150, 0},
    {MLA_DESIGN_MLA_VAR6_PLUS, 2, 2, 130, 16, 0, 0, 0, 1, 130, 0},
    {MLA_DESIGN_MLA_VAR6_PLUS, 3, 4, 100, 16, 1, 1, 1, 1, 50, 1},
    {MLA_DESIGN_MLA_VAR6_PLUS, 2, 3, 65, 128, 1, 1, 0, 1, 3, 0},
};

/* ------------------------------------------------------------------------------------------ */
/* device buffers                                                                              */
/* ------------------------------------------------------------------------------------------ */

static void *allocs[64];
static int nallocs;

static void free_all(void)
{
    for (int i = 0; i < nallocs; i++) cudaFree(allocs[i]);
    nallocs = 0;
}

static void *dput(const void *src, size_t bytes)
{
    void *p = NULL;
    if (nallocs >= 64 || cudaMalloc(&p, bytes + 256) != cudaSuccess) return NULL;
    allocs[nallocs++] = p;
    if (src && bytes && cudaMemcpy(p, src, bytes, cudaMemcpyHostToDevice) != cudaSuccess) return NULL;
    return p;
}

/* Upload a packed [B0, B1, B2, D] bf16 tensor into a padded layout (every stride grown, the
 * gaps NaN) and return the strides of B0, B1, B2. */
static const void *pad_upload(const uint16_t *src, size_t B0, size_t B1, size_t B2, size_t D, int64_t st[3])
{
    st[2] = (int64_t)D + 8;
    st[1] = (int64_t)B2 * st[2] + 16;
    st[0] = (int64_t)B1 * st[1] + 24;
    size_t total = B0 * (size_t)st[0];
    uint16_t *h = malloc(total * 2 + 2);
    if (!h) return NULL;
    for (size_t i = 0; i < total; i++) h[i] = 0xFFFF;
    for (size_t a = 0; a < B0; a++)
        for (size_t b = 0; b < B1; b++)
            for (size_t c = 0; c < B2; c++)
                memcpy(h + a * st[0] + b * st[1] + c * st[2], src + ((a * B1 + b) * B2 + c) * D, D * 2);
    const void *p = dput(h, total * 2);
    free(h);
    return p;
}

/* [B0, B1, D] with two strides */
static const void *pad_upload2(const uint16_t *src, size_t B0, size_t B1, size_t D, int64_t st[2])
{
    int64_t s3[3];
    const void *p = pad_upload(src, 1, B0, B1, D, s3);
    st[0] = s3[1];
    st[1] = s3[2];
    return p;
}

static const int32_t *bt_upload(const int32_t *bt, int b, int max_pages, int64_t *stride)
{
    *stride = max_pages + 5;
    int32_t *h = malloc(sizeof(int32_t) * (size_t)b * (size_t)*stride);
    if (!h) return NULL;
    for (int64_t i = 0; i < b * *stride; i++) h[i] = -1;   /* a read of the gap is a bad page */
    for (int r = 0; r < b; r++) memcpy(h + r * *stride, bt + (size_t)r * max_pages, sizeof(int32_t) * max_pages);
    const int32_t *p = dput(h, sizeof(int32_t) * (size_t)b * (size_t)*stride);
    free(h);
    return p;
}

/* ------------------------------------------------------------------------------------------ */

static int run_case(const tcase *c)
{
    mla_problem pb;
    mla_problem_init(&pb, c->design);
    pb.b = c->b, pb.s = c->s, pb.t = c->t, pb.h = c->h, pb.causal = c->causal;
    pb.n = c->design == MLA_DESIGN_MLA_VAR6_PLUS ? c->n : 0;
    mla_gen g;
    mla_gen_options go = {.seed = 1234 + (uint64_t)c->t * 7 + (uint64_t)c->s, .varlen = c->varlen,
                          .zero_length = c->zero, .permute_pages = c->permute};
    char name[160];
    snprintf(name, sizeof name, "%s b=%d s=%d t=%d h=%d n=%d causal=%d varlen=%d zero=%d permute=%d padded=%d",
             mla_design_name(c->design), c->b, c->s, c->t, c->h, pb.n, c->causal, c->varlen, c->zero, c->permute,
             c->padded);
    if (mla_gen_create(&pb, &go, &g) != MLA_STATUS_OK) {
        printf("FAIL %s: generator: %s\n", name, mla_last_error());
        return 0;
    }
    const size_t b = pb.b, s = pb.s, t = pb.t, h = pb.h, d = pb.d, k = pb.k, p = pb.p, n = pb.n;
    const int dv = c->design == MLA_DESIGN_FLASH_MLA ? pb.k : pb.d;
    const size_t on = b * s * h * (size_t)dv, ln = b * h * s;
    float *cpu_out = malloc(on * 4), *cpu_lse = malloc(ln * 4), *gpu_out = malloc(on * 4), *gpu_lse = malloc(ln * 4);
    int ok = 0;
    mla_status st = MLA_STATUS_INTERNAL;
    float *out_d = dput(NULL, on * 4), *lse_d = dput(NULL, ln * 4);
    const int32_t *seq_d = dput(g.seqlens, b * 4);
    const size_t cache_bytes = (size_t)g.num_pages * pb.page_size * (k + p) * 2;
    if (!cpu_out || !cpu_lse || !gpu_out || !gpu_lse || !out_d || !lse_d || !seq_d) {
        printf("FAIL %s: allocation\n", name);
        goto done;
    }
    cudaMemset(out_d, 0xFF, on * 4);
    cudaMemset(lse_d, 0xFF, ln * 4);

    if (c->design == MLA_DESIGN_FLASH_ATTENTION) {
        mla_flash_attention_tensors x;
        mla_gen_flash_attention_tensors(&g, &x);
        st = mla_ref_flash_attention(&pb, &x, cpu_out, cpu_lse, 0);
        if (st != MLA_STATUS_OK) goto refail;
        if (c->padded) {
            x.q = pad_upload(g.fa_q, b, s, h, d + p, x.q_strides);
            x.k = pad_upload(g.fa_k, b, t, h, d + p, x.k_strides);
            x.v = pad_upload(g.fa_v, b, t, h, d, x.v_strides);
        } else {
            x.q = dput(g.fa_q, b * s * h * (d + p) * 2);
            x.k = dput(g.fa_k, b * t * h * (d + p) * 2);
            x.v = dput(g.fa_v, b * t * h * d * 2);
            memset(x.q_strides, 0, sizeof x.q_strides);   /* 0 = packed, also exercised */
        }
        x.seqlens = seq_d;
        if (!x.q || !x.k || !x.v) goto allocfail;
        st = mla_gpu_ref_flash_attention(&pb, &x, out_d, lse_d, NULL);
    } else if (c->design == MLA_DESIGN_FLASH_MLA) {
        mla_flash_mla_tensors x;
        mla_gen_flash_mla_tensors(&g, &x);
        st = mla_ref_flash_mla(&pb, &x, cpu_out, cpu_lse, 0);
        if (st != MLA_STATUS_OK) goto refail;
        x.cache = dput(g.cache, cache_bytes);
        if (c->padded) {
            x.q = pad_upload(g.mla_q, b, s, h, k + p, x.q_strides);
            x.block_table = bt_upload(g.block_table, pb.b, g.max_pages, &x.block_table_stride);
        } else {
            x.q = dput(g.mla_q, b * s * h * (k + p) * 2);
            x.block_table = dput(g.block_table, b * (size_t)g.max_pages * 4);
            x.block_table_stride = 0;
        }
        x.seqlens = seq_d;
        if (!x.q || !x.cache || !x.block_table) goto allocfail;
        st = mla_gpu_ref_flash_mla(&pb, &x, out_d, lse_d, NULL);
    } else {
        mla_var6_plus_tensors x;
        mla_gen_var6_plus_tensors(&g, &x);
        st = mla_ref_var6_plus(&pb, &x, cpu_out, cpu_lse, 0);
        if (st != MLA_STATUS_OK) goto refail;
        x.cache = dput(g.cache, cache_bytes);
        x.w_uv = dput(g.w_uv, h * k * d * 2);
        if (c->padded) {
            x.q_lat = pad_upload(g.q_lat, b, s, h, k, x.q_lat_strides);
            x.q_nope = pad_upload(g.q_nope, b, s, h, d, x.q_nope_strides);
            x.q_rope = pad_upload(g.q_rope, b, s, h, p, x.q_rope_strides);
            x.k_nope = pad_upload(g.v6_k_nope, b, n, h, d, x.k_nope_strides);
            x.v = pad_upload(g.v6_v, b, n, h, d, x.v_strides);
            x.k_rope = pad_upload2(g.v6_k_rope, b, n, p, x.k_rope_strides);
            x.block_table = bt_upload(g.block_table, pb.b, g.max_pages, &x.block_table_stride);
        } else {
            x.q_lat = dput(g.q_lat, b * s * h * k * 2);
            x.q_nope = dput(g.q_nope, b * s * h * d * 2);
            x.q_rope = dput(g.q_rope, b * s * h * p * 2);
            x.k_nope = dput(g.v6_k_nope, b * n * h * d * 2);
            x.v = dput(g.v6_v, b * n * h * d * 2);
            x.k_rope = dput(g.v6_k_rope, b * n * p * 2);
            x.block_table = dput(g.block_table, b * (size_t)g.max_pages * 4);
        }
        x.seqlens = seq_d;
        if (!x.q_lat || !x.q_nope || !x.q_rope || !x.k_nope || !x.v || !x.k_rope || !x.cache || !x.w_uv ||
            !x.block_table)
            goto allocfail;
        st = mla_gpu_ref_var6_plus(&pb, &x, out_d, lse_d, NULL);
    }
    if (st != MLA_STATUS_OK) {
        printf("FAIL %s: gpu reference: %s: %s\n", name, mla_status_name(st), mla_last_error());
        goto done;
    }
    cudaError_t e = cudaDeviceSynchronize();
    if (e == cudaSuccess) e = cudaMemcpy(gpu_out, out_d, on * 4, cudaMemcpyDeviceToHost);
    if (e == cudaSuccess) e = cudaMemcpy(gpu_lse, lse_d, ln * 4, cudaMemcpyDeviceToHost);
    if (e != cudaSuccess) {
        printf("FAIL %s: CUDA: %s\n", name, cudaGetErrorString(e));
        goto done;
    }

    {
        double num = 0, den = 0, max_abs = 0, max_lse = 0;
        long nan_out = 0, inf_mis = 0, nonzero_empty = 0, worst = -1;
        for (size_t i = 0; i < on; i++) {
            double gv = gpu_out[i], cv = cpu_out[i];
            if (!isfinite(gv)) {
                nan_out++;
                continue;
            }
            double df = fabs(gv - cv);
            num += df * df, den += cv * cv;
            if (df > max_abs) max_abs = df, worst = (long)i;
        }
        for (size_t i = 0; i < ln; i++) {
            float gl = gpu_lse[i], cl = cpu_lse[i];
            int ce = isinf(cl) && cl < 0, ge = isinf(gl) && gl < 0;
            if (isnan(gl) || ce != ge) {
                inf_mis++;
                continue;
            }
            if (ce) {
                /* an empty row: its outputs must be exactly 0 (lse [b,h,s] -> out [b,s,h,dv]) */
                size_t r = i / (h * s), hh = (i / s) % h, qi = i % s;
                const float *o = gpu_out + ((r * s + qi) * h + hh) * (size_t)dv;
                for (int c2 = 0; c2 < dv; c2++) nonzero_empty += o[c2] != 0.f;
                continue;
            }
            double df = fabs((double)gl - (double)cl);
            if (df > max_lse) max_lse = df;
        }
        double rel = den > 0 ? sqrt(num / den) : sqrt(num);
        ok = nan_out == 0 && inf_mis == 0 && nonzero_empty == 0 && rel <= 1e-4 && max_lse <= 1e-4;
        printf("%s %s: rel_l2=%.3g max_abs=%.3g max_lse=%.3g nan=%ld lse_inf_mismatch=%ld nonzero_empty=%ld",
               ok ? "PASS" : "FAIL", name, rel, max_abs, max_lse, nan_out, inf_mis, nonzero_empty);
        if (!ok && worst >= 0) printf(" worst[%ld] gpu=%g cpu=%g", worst, gpu_out[worst], cpu_out[worst]);
        printf("\n");
    }
    goto done;

refail:
    printf("FAIL %s: cpu reference: %s: %s\n", name, mla_status_name(st), mla_last_error());
    goto done;
allocfail:
    printf("FAIL %s: device allocation/upload\n", name);
done:
    free(cpu_out), free(cpu_lse), free(gpu_out), free(gpu_lse);
    free_all();
    mla_gen_destroy(&g);
    return ok;
}

int main(void)
{
    if (mla_device_count() == 0) {
        printf("SKIP: no CUDA device\n");
        return 77;
    }
    int passed = 0, failed = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (run_case(&cases[i])) passed++;
        else failed++;
        fflush(stdout);
    }
    printf("%d passed, %d failed, 0 skipped\n", passed, failed);
    return failed ? 1 : 0;
}
