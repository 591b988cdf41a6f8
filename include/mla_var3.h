/*
 * mla_var3.h - the public C API of libmla_var3: Multi-head Latent Attention (MLA) kernels
 * for NVIDIA GPUs (DeepSeek-V3/R1, Kimi-class models).
 *
 * The only header a user includes. It pulls in no CUDA header: streams are passed as
 * `void *` (a cudaStream_t), tensors as device pointers with element strides.
 *
 * Usage: describe the problem (mla_problem), make a plan once (mla_*_plan), ask its workspace
 * size, allocate that workspace, then call the design's run function as often as you like on
 * your stream. A run allocates nothing and never synchronises the host, so it can be captured
 * in a CUDA graph. Every function returns an mla_status; on failure mla_last_error() holds a
 * message (per thread). The library never prints, exits or aborts.
 *
 * The math of the three designs is in MLA_SPEC.md: flash_attention (decompressed), flash_mla
 * (absorbed, paged latent cache) and mla_var6_plus (old tokens latent, newest n decompressed).
 */
#ifndef MLA_VAR3_H
#define MLA_VAR3_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MLA_VAR3_VERSION_MAJOR 0
#define MLA_VAR3_VERSION_MINOR 1
#define MLA_VAR3_VERSION_PATCH 0

/* ------------------------------------------------------------------------------------------ */
/* Status and errors                                                                           */
/* ------------------------------------------------------------------------------------------ */

typedef enum mla_status {
    MLA_STATUS_OK = 0,
    MLA_STATUS_INVALID_ARGUMENT = 1,   /* a null pointer, a bad size, an impossible shape */
    MLA_STATUS_UNSUPPORTED = 2,        /* valid MLA, but no kernel serves it (e.g. h = 48) */
    MLA_STATUS_NO_DEVICE = 3,          /* no CUDA device is present or usable */
    MLA_STATUS_ARCH_MISMATCH = 4,      /* the chosen kernel version does not run on this GPU */
    MLA_STATUS_CUDA_ERROR = 5,         /* a CUDA call failed; the message has its text */
    MLA_STATUS_OUT_OF_MEMORY = 6,      /* an allocation made by plan failed */
    MLA_STATUS_WORKSPACE_TOO_SMALL = 7,/* run was given less workspace than the plan needs */
    MLA_STATUS_IO_ERROR = 8,           /* a file (device table, tune cache) could not be used */
    MLA_STATUS_INTERNAL = 9            /* a bug in mla_var3: please report it */
} mla_status;

/* The message of the last failed call on this thread ("" if none). Valid until the next call. */
const char *mla_last_error(void);

/* A constant name for a status, e.g. "MLA_STATUS_INVALID_ARGUMENT". */
const char *mla_status_name(mla_status status);

/* The library version, e.g. "0.1.0"; and its parts (any pointer may be NULL). */
const char *mla_version_string(void);
void mla_version(int *major, int *minor, int *patch);

/* ------------------------------------------------------------------------------------------ */
/* Problems                                                                                    */
/* ------------------------------------------------------------------------------------------ */

typedef enum mla_design {
    MLA_DESIGN_FLASH_ATTENTION = 0,  /* decompressed multi-head attention */
    MLA_DESIGN_FLASH_MLA = 1,        /* absorbed attention over the paged latent cache */
    MLA_DESIGN_MLA_VAR6_PLUS = 2     /* hybrid: old tokens latent, newest n decompressed */
} mla_design;

/* The shape of one attention call; a plan is made for one problem.
 * Sizes are elements. `t` is the longest request (seqlens may be shorter, see the tensors). */
typedef struct mla_problem {
    mla_design design;
    int b;          /* requests in the batch (>= 1) */
    int s;          /* query tokens per request (>= 1, <= t) */
    int t;          /* KV tokens of the longest request, the queries included (>= 1) */
    int h;          /* query heads (kernels serve 16, 32, 64, 128) */
    int d;          /* no-RoPE q/k dim and value dim: flash_attention, mla_var6_plus (128) */
    int k;          /* latent dim (kv_lora_rank): flash_mla, mla_var6_plus (512) */
    int p;          /* RoPE dim (64) */
    int n;          /* mla_var6_plus only: newest tokens decompressed, 0 <= n <= t */
    int page_size;  /* latent cache page: flash_mla, mla_var6_plus (64) */
    int causal;     /* 1: bottom-right causal (query i sees j <= t_r - s + i); 0: none */
    float scale;    /* softmax scale, > 0 and finite; the default is 1/sqrt(d + p) */
} mla_problem;

/* Fill `pb` with DeepSeek-V3's defaults for `design`: b = 1, s = 1, t = 4096, h = 128, d = 128,
 * k = 512, p = 64, n = 0, page_size = 64, causal = 1, scale = 1/sqrt(192). */
mla_status mla_problem_init(mla_problem *pb, mla_design design);

/* Check a problem without planning (the same checks plan makes). */
mla_status mla_problem_validate(const mla_problem *pb);

/* FLOPs and bytes of a problem by MLA_SPEC.md's formulas (the roofline inputs). */
mla_status mla_problem_cost(const mla_problem *pb, double *flops, double *bytes);

/* ------------------------------------------------------------------------------------------ */
/* Tensors (device pointers). bf16 unless noted; strides are in elements, the last dimension   */
/* is always contiguous. A stride argument of 0 means "packed" (row-major, no gaps).           */
/* `lse` is fp32 [b, h, s] packed, natural log; it may be NULL if the caller does not need it. */
/* `seqlens` is int32 [b] on the device; NULL means every request has `t` tokens.             */
/* ------------------------------------------------------------------------------------------ */

typedef struct mla_flash_attention_tensors {
    const void *q;   int64_t q_strides[3];    /* [b, s, h, d+p]: strides of b, s, h */
    const void *k;   int64_t k_strides[3];    /* [b, t, h, d+p] */
    const void *v;   int64_t v_strides[3];    /* [b, t, h, d]   */
    const int32_t *seqlens;                   /* [b] or NULL */
    void *out;       int64_t out_strides[3];  /* [b, s, h, d]   */
    float *lse;                               /* [b, h, s] or NULL */
} mla_flash_attention_tensors;

typedef struct mla_flash_mla_tensors {
    const void *q;   int64_t q_strides[3];    /* [b, s, h, k+p]: q_nope @ W_UK, then q_rope */
    const void *cache;                        /* [num_pages, page_size, k+p] packed */
    int num_pages;
    const int32_t *block_table;               /* int32 [b, max_pages]: page of each 64-token block */
    int max_pages;                            /* >= ceil(t / page_size) */
    int64_t block_table_stride;               /* elements between rows; 0 = max_pages */
    const int32_t *seqlens;                   /* [b] or NULL */
    void *out;       int64_t out_strides[3];  /* [b, s, h, k] (latent space) */
    float *lse;                               /* [b, h, s] or NULL */
} mla_flash_mla_tensors;

/* mla_var6_plus: request r has t_r tokens; its oldest o_r = max(t_r - n, 0) live in the paged
 * latent cache (positions 0..o_r-1) and the rest in the decompressed buffers, slot j holding
 * position o_r + j (slots j >= t_r - o_r are unused). */
typedef struct mla_var6_plus_tensors {
    const void *q_lat;  int64_t q_lat_strides[3];   /* [b, s, h, k] */
    const void *q_nope; int64_t q_nope_strides[3];  /* [b, s, h, d] */
    const void *q_rope; int64_t q_rope_strides[3];  /* [b, s, h, p] */
    const void *cache;                              /* [num_pages, page_size, k+p] packed */
    int num_pages;
    const int32_t *block_table;                     /* [b, max_pages] */
    int max_pages;
    int64_t block_table_stride;
    const void *k_nope; int64_t k_nope_strides[3];  /* [b, n, h, d] */
    const void *v;      int64_t v_strides[3];       /* [b, n, h, d] */
    const void *k_rope; int64_t k_rope_strides[2];  /* [b, n, p] shared by all heads */
    const void *w_uv;                               /* [h, k, d] packed */
    const int32_t *seqlens;                         /* [b] or NULL */
    void *out;          int64_t out_strides[3];     /* [b, s, h, d] (value space) */
    float *lse;                                     /* [b, h, s] or NULL */
} mla_var6_plus_tensors;

/* ------------------------------------------------------------------------------------------ */
/* Plans                                                                                       */
/* ------------------------------------------------------------------------------------------ */

typedef struct mla_plan_s *mla_plan_t;

typedef enum mla_autotune_mode {
    MLA_AUTOTUNE_OFF = 0,     /* default candidate (or the cached winner if one exists) */
    MLA_AUTOTUNE_CACHED = 1,  /* cached winner if present, else tune now and cache it */
    MLA_AUTOTUNE_FORCE = 2    /* tune now even if a cached winner exists, and rewrite it */
} mla_autotune_mode;

typedef struct mla_plan_options {
    int device;             /* CUDA device ordinal (default 0) */
    const char *version;    /* "flash_mla_v0", or NULL: newest version runnable on this GPU */
    const char *tiling;     /* "block_m=64,splits=8": override fields of the tiling, or NULL */
    mla_autotune_mode autotune;
    const char *cache_dir;  /* tune cache root; NULL: $MLA_VAR3_CACHE_DIR or .cache/kernel-autotune */
} mla_plan_options;

/* Defaults: device 0, newest runnable version, its default tiling, MLA_AUTOTUNE_OFF. */
void mla_plan_options_init(mla_plan_options *opt);

/* Make a plan: validate the problem, pick a kernel version that passes the architecture gate
 * and a tiling that fits the device (tuning by CUDA-graph replay if asked). `opt` may be NULL.
 * May allocate (only when autotuning) and synchronise; never call it inside graph capture. */
mla_status mla_flash_attention_plan(const mla_problem *pb, const mla_plan_options *opt, mla_plan_t *plan);
mla_status mla_flash_mla_plan(const mla_problem *pb, const mla_plan_options *opt, mla_plan_t *plan);
mla_status mla_var6_plus_plan(const mla_problem *pb, const mla_plan_options *opt, mla_plan_t *plan);

/* Bytes of device workspace a run of this plan needs (may be 0). */
mla_status mla_plan_workspace_size(mla_plan_t plan, size_t *bytes);

/* A one-line description: kernel version and tiling, e.g. "flash_mla_v0 block_m=64 ...". */
mla_status mla_plan_describe(mla_plan_t plan, char *buf, size_t len);

/* Run on `stream` (a cudaStream_t; NULL is the legacy default stream). No allocation, no host
 * synchronisation: capturable in a CUDA graph. `workspace` must hold the planned bytes and be
 * 256-byte aligned. Tensors must match the planned problem; pointers 16-byte aligned and the
 * strides of b/s/h multiples of 8 elements (the kernels load 16-byte vectors). */
mla_status mla_flash_attention_run(mla_plan_t plan, const mla_flash_attention_tensors *x,
                                   void *workspace, size_t workspace_bytes, void *stream);
mla_status mla_flash_mla_run(mla_plan_t plan, const mla_flash_mla_tensors *x,
                             void *workspace, size_t workspace_bytes, void *stream);
mla_status mla_var6_plus_run(mla_plan_t plan, const mla_var6_plus_tensors *x,
                             void *workspace, size_t workspace_bytes, void *stream);

/* Free a plan (NULL is allowed). */
void mla_plan_destroy(mla_plan_t plan);

#ifdef __cplusplus
}
#endif

#endif /* MLA_VAR3_H */
