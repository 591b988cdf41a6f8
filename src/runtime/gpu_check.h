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
} mla_gpu_check_options;

/* Generate, upload, plan, poison, run the kernel, run the GPU reference, compare.
 * OK with rep->pass telling the verdict; another status when something could not run
 * (mla_last_error tells why; UNSUPPORTED / ARCH_MISMATCH mean "skip"). */
mla_status mla_gpu_check(const mla_problem *pb, const mla_gpu_check_options *opt,
                         mla_check_report *rep);

#ifdef __cplusplus
}
#endif
#endif
