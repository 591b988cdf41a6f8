/*
 * CPU references of the three MLA designs (MLA_SPEC.md), and the seeded input generator that
 * builds one attention in all three representations. Host memory only; C11 with pthreads;
 * double accumulation. Library code: returns a status, never prints.
 */
#ifndef MLA_REF_H
#define MLA_REF_H

#include <stdint.h>
#include <stddef.h>
#include "mla_var3.h"

#ifdef __cplusplus
extern "C" {
#endif

/* bf16 <-> float on the host (round to nearest even, NaN kept). */
uint16_t mla_f32_to_bf16(float f);
float mla_bf16_to_f32(uint16_t b);

/* The references read the design's tensor struct with HOST pointers (bf16 as uint16_t, the
 * strides honoured, seqlens/block_table host int32) and write fp32 results:
 *   out [b, s, h, dv] packed (dv = d for flash_attention and mla_var6_plus, k for flash_mla)
 *   lse [b, h, s] packed (natural log; -inf where the visible set is empty, out = 0 there)
 * The tensor struct's own out/lse fields are ignored. threads <= 0 picks the core count.
 * Returns MLA_STATUS_INVALID_ARGUMENT (with mla_last_error set) on a bad problem or pointer. */
mla_status mla_ref_flash_attention(const mla_problem *pb, const mla_flash_attention_tensors *x,
                                   float *out, float *lse, int threads);
mla_status mla_ref_flash_mla(const mla_problem *pb, const mla_flash_mla_tensors *x,
                             float *out, float *lse, int threads);
mla_status mla_ref_var6_plus(const mla_problem *pb, const mla_var6_plus_tensors *x,
                             float *out, float *lse, int threads);

/* Naive formulas for tests and the CLI's no-GPU --check: single-threaded, the full score row
 * materialised, max and sum in two separate passes, double. Same conventions as mla_ref_*;
 * mla_naive_var6_plus computes each token's score from its own representation directly. */
mla_status mla_naive_flash_attention(const mla_problem *pb, const mla_flash_attention_tensors *x,
                                     float *out, float *lse);
mla_status mla_naive_flash_mla(const mla_problem *pb, const mla_flash_mla_tensors *x,
                               float *out, float *lse);
mla_status mla_naive_var6_plus(const mla_problem *pb, const mla_var6_plus_tensors *x,
                               float *out, float *lse);

/* Number of key positions query i (0-based) of a request of length t_r sees under the causal
 * rule (bottom-right): clamp(t_r - s + i + 1, 0, t_r); t_r when not causal. */
int mla_ref_visible(int t_r, int s, int i, int causal);

/* Argument checks shared by mla_ref_* and mla_naive_* (`who` names the caller in the message):
 * OK, or INVALID_ARGUMENT with mla_last_error set. `lse` may be NULL (then it is not written). */
mla_status mla_ref_check_flash_attention(const char *who, const mla_problem *pb,
                                         const mla_flash_attention_tensors *x, const float *out);
mla_status mla_ref_check_flash_mla(const char *who, const mla_problem *pb,
                                   const mla_flash_mla_tensors *x, const float *out);
mla_status mla_ref_check_var6_plus(const char *who, const mla_problem *pb,
                                   const mla_var6_plus_tensors *x, const float *out);

/* ------------------------------------------------------------------------------------------ */
/* Input generator: "one function, three representations" (MLA_SPEC.md).                      */
/* ------------------------------------------------------------------------------------------ */

typedef struct mla_gen_options {
    uint64_t seed;
    int varlen;          /* 1: draw t_r per request in [0, t] (at least one request has t) */
    int zero_length;     /* 1 (with varlen): force request 0 to length 0 */
    int permute_pages;   /* 1: pages of the latent cache in a random permutation, plus spare pages */
    unsigned designs;    /* bit (1u << mla_design) for each representation to derive; 0 = all.
                            Skipping flash_attention skips the O(b*t*h*d*k) decompression of the
                            positions no requested design reads (those fa_k/fa_v rows are left
                            unset). */
    int logit_trend;     /* +1 / -1: add to every score a term that rises / falls by ~40 (after the
                            softmax scale) from the first token to the last, through the first
                            RoPE dim (q_rope[.., 0] = 1, k_rope[tok, 0] = the ramp), so that a
                            row's running max moves on every 64-token page / never after the
                            first; 0: none. Needs p >= 1 and scale > 0. */
} mla_gen_options;

/* All host arrays, bf16 stored as uint16_t, packed row-major in the shapes of MLA_SPEC.md.
 * The problem `pb` gives b, s, t, h, d, k, p, n, page_size, causal, scale (design ignored). */
typedef struct mla_gen {
    mla_problem pb;
    int32_t *seqlens;          /* [b] */
    /* latent source (per request) and weights (shared by the batch) */
    uint16_t *c_kv;            /* [b, t, k] */
    uint16_t *k_rope;          /* [b, t, p] */
    uint16_t *q_nope;          /* [b, s, h, d] */
    uint16_t *q_rope;          /* [b, s, h, p] */
    uint16_t *w_uk;            /* [h, d, k] */
    uint16_t *w_uv;            /* [h, k, d] */
    /* decompressed (flash_attention) */
    uint16_t *fa_q;            /* [b, s, h, d+p]  = [q_nope, q_rope] */
    uint16_t *fa_k;            /* [b, t, h, d+p]  = [c_kv @ W_UK[h]^T, k_rope] */
    uint16_t *fa_v;            /* [b, t, h, d]    = c_kv @ W_UV[h] */
    /* absorbed (flash_mla) */
    uint16_t *mla_q;           /* [b, s, h, k+p]  = [q_nope @ W_UK[h], q_rope] */
    uint16_t *q_lat;           /* [b, s, h, k]    = q_nope @ W_UK[h] */
    int num_pages, max_pages;
    uint16_t *cache;           /* [num_pages, page_size, k+p]: full requests (all t_r tokens) */
    int32_t *block_table;      /* [b, max_pages] */
    /* hybrid (mla_var6_plus) for pb.n: old tokens in `cache` (the same pages), new in these */
    uint16_t *v6_k_nope;       /* [b, n, h, d] slot j = position o_r + j */
    uint16_t *v6_v;            /* [b, n, h, d] */
    uint16_t *v6_k_rope;       /* [b, n, p] */
} mla_gen;

/* Build every representation. Values: randn/10 clamped to [-1, 1] for c_kv, k_rope, q; the
 * weights randn/sqrt(k) resp. randn/sqrt(d)-scaled so derived tensors stay O(0.1).
 * Unused slots (beyond t_r) hold random data too, never zeros. Returns OK or OUT_OF_MEMORY. */
mla_status mla_gen_create(const mla_problem *pb, const mla_gen_options *opt, mla_gen *g);
void mla_gen_destroy(mla_gen *g);

/* Host tensor structs pointing into g (packed strides filled in; out/lse left NULL). */
void mla_gen_flash_attention_tensors(const mla_gen *g, mla_flash_attention_tensors *x);
void mla_gen_flash_mla_tensors(const mla_gen *g, mla_flash_mla_tensors *x);
void mla_gen_var6_plus_tensors(const mla_gen *g, mla_var6_plus_tensors *x);

/* Compare a result with a reference by MLA_SPEC.md's bar. rows = b*s*h, each of `dv`
 * (out packed [b, s, h, dv]; lse packed [b, h, s]). The report names the worst element. */
typedef struct mla_check_report {
    int pass;
    double rel_l2;             /* ||out - ref|| / ||ref|| */
    double max_abs_err;        /* max |out - ref| */
    double max_abs_ref;        /* max |ref| */
    double max_lse_err;        /* max |lse - ref_lse| over finite entries */
    long nan_count;            /* NaN/Inf in out, or NaN in lse */
    long lse_inf_mismatch;     /* -inf where the reference is finite, or the reverse */
    int worst_b, worst_s, worst_h, worst_i;  /* the element with the largest |out - ref| */
    char message[512];         /* a one-line verdict */
} mla_check_report;

void mla_check_compare(const mla_problem *pb, int dv, const float *out, const float *lse,
                       const float *ref_out, const float *ref_lse, mla_check_report *rep);

#ifdef __cplusplus
}
#endif

#endif
