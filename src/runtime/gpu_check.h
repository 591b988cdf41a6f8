/*
 * GPU --check: one problem's inputs built by the generator (all three representations), uploaded,
 * outputs poisoned with NaN, the plan run, then compared by MLA_SPEC.md's bar with a naive fp32
 * GPU reference (itself tested against the CPU reference on small shapes).
 */
#ifndef MLA_GPU_CHECK_H
#define MLA_GPU_CHECK_H
#include "mla_var3.h"
#include "ref.h"
#ifdef __cplusplus
extern "C" {
#endif

/* Naive fp32 GPU references: one thread block per (request, query, head) row, fp32 math,
 * two passes over the visible keys. Same input conventions as the kernels (device tensors);
 * out fp32 packed [b, s, h, dv], lse fp32 packed [b, h, s]. */
mla_status mla_gpu_ref_flash_attention(const mla_problem *pb, const mla_flash_attention_tensors *x,
                                       float *out, float *lse, void *stream);
mla_status mla_gpu_ref_flash_mla(const mla_problem *pb, const mla_flash_mla_tensors *x,
                                 float *out, float *lse, void *stream);
mla_status mla_gpu_ref_var6_plus(const mla_problem *pb, const mla_var6_plus_tensors *x,
                                 float *out, float *lse, void *stream);

typedef struct mla_gpu_check_options {
    uint64_t seed;
    int varlen, zero_length, permute_pages;   /* as mla_gen_options */
    const char *version;                      /* kernel version name, NULL = default */
    const char *tiling;                       /* tiling override or NULL */
    int device;
    int out_pad;   /* > 0 (a multiple of 8): the kernel writes out with row and request strides
                      padded by out_pad elements, into a poisoned buffer; its rows are then compared
                      as usual, and every padding element must still be poisoned */
} mla_gpu_check_options;

/* Generate, upload, plan, poison, run the kernel, run the GPU reference, compare.
 * OK with rep->pass telling the verdict; another status when something could not run
 * (mla_last_error tells why; UNSUPPORTED / ARCH_MISMATCH mean "skip"). */
mla_status mla_gpu_check(const mla_problem *pb, const mla_gpu_check_options *opt,
                         mla_check_report *rep);


/* ---- Added by the gpucheck helper (additive): the steps of mla_gpu_check as parts, so that
 * tests can reuse one generated problem across designs and versions, and capture runs in graphs. */

/* Device copies of a generated problem in one design's representation. The design's tensor
 * struct holds device pointers (out bf16 [b,s,h,dv] and lse fp32 [b,h,s] allocated too); the
 * other two structs are zero. */
typedef struct mla_gpu_inputs {
    mla_problem pb;
    int dv;                              /* out's last dim: d, or k for flash_mla */
    size_t out_elems, lse_elems;
    mla_flash_attention_tensors fa;
    mla_flash_mla_tensors mla;
    mla_var6_plus_tensors v6;
    void *allocs[16];
    int num_allocs;
} mla_gpu_inputs;

/* Upload g (made by mla_gen_create with the same b, s, t, h, d, k, p, page_size, and for
 * mla_var6_plus the same n) for pb->design. OUT_OF_MEMORY / CUDA_ERROR on failure (freed). */
mla_status mla_gpu_inputs_upload(const mla_problem *pb, const mla_gen *g, mla_gpu_inputs *in);
void mla_gpu_inputs_free(mla_gpu_inputs *in);
/* The design's tensor struct (for mla_*_run), by design. */
const void *mla_gpu_inputs_tensors(const mla_gpu_inputs *in);
/* Fill out and lse with 0xFF bytes (NaN in bf16 and fp32) on `stream`. */
mla_status mla_gpu_inputs_poison(const mla_gpu_inputs *in, void *stream);
/* mla_*_run of the design. */
mla_status mla_gpu_inputs_run(mla_plan_t plan, const mla_gpu_inputs *in, void *workspace,
                              size_t workspace_bytes, void *stream);
/* The GPU reference into device fp32 buffers ref_out [b,s,h,dv], ref_lse [b,h,s]. */
mla_status mla_gpu_inputs_reference(const mla_gpu_inputs *in, float *ref_out, float *ref_lse,
                                    void *stream);
/* Copy the kernel's out (bf16 -> float) and lse to host arrays (synchronous). */
mla_status mla_gpu_inputs_download(const mla_gpu_inputs *in, float *out, float *lse);

/* mla_gpu_check on an already generated problem (opt's seed/varlen/... are then unused). */
mla_status mla_gpu_check_gen(const mla_problem *pb, const mla_gen *g, const mla_gpu_check_options *opt,
                             mla_check_report *rep);

/* Device-generated random inputs of pb->design, with no CPU generator (for big shapes, where
 * the generator's O(b*t*h*d*k) derivation dominates a check). Values randn/10 clamped to
 * [-1, 1] and never 0 (w_uv randn/sqrt(k)), unused slots random too; seqlens (varlen,
 * zero_length) and the page permutation (plus spare pages) follow opt as mla_gen_create's do. */
mla_status mla_gpu_inputs_random(const mla_problem *pb, const mla_gen_options *opt, mla_gpu_inputs *in);
/* mla_gpu_check on inputs already on the device (`in` is not freed; its outputs are written). */
mla_status mla_gpu_check_inputs(const mla_problem *pb, const mla_gpu_inputs *in,
                                const mla_gpu_check_options *opt, mla_check_report *rep);
/* Fill `count` bf16 with randn * stddev clamped to [-1, 1], never 0 (gpu_ref.cu). */
mla_status mla_gpu_fill_randn_bf16(void *dst, size_t count, uint64_t seed, float stddev, void *stream);

#ifdef __cplusplus
}
#endif
#endif
