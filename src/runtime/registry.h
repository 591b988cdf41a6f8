/*
 * The kernel registry: every kernel version registers itself as data (mla_kernel_version) and
 * one table lists them all. Dispatch, `mla_var3 list`, the tests and the CLI read that table.
 */
#ifndef MLA_REGISTRY_H
#define MLA_REGISTRY_H
#include <stddef.h>
#include "mla_var3.h"
#include "device.h"
#ifdef __cplusplus
extern "C" {
#endif

#define MLA_MAX_STAGES 4
#define MLA_MAX_CANDIDATES 32

typedef enum mla_tier { MLA_TIER_PORTABLE = 0, MLA_TIER_HOPPER = 1 } mla_tier;
const char *mla_tier_name(mla_tier t);       /* "portable", "hopper" */
const char *mla_design_name(mla_design d);   /* "flash_attention", "flash_mla", "mla_var6_plus" */
int mla_design_from_name(const char *name, mla_design *d);  /* 1 if known */

/* The tiling knobs of a version. One struct for all versions keeps the runtime simple; each
 * version documents which fields it reads, and 0 in a field means "not used / automatic". */
typedef struct mla_tiling {
    int block_m;   /* query rows per CTA */
    int block_n;   /* KV tokens per pipeline stage */
    int warps;     /* warps per CTA of the main stage */
    int stages;    /* cp.async / TMA pipeline depth */
    int splits;    /* KV splits per (request, row block); 0 = chosen from the SM count */
} mla_tiling;

#define MLA_TILING_NUM_FIELDS 5
extern const char *const mla_tiling_field_names[MLA_TILING_NUM_FIELDS];
int *mla_tiling_field(mla_tiling *t, int i);
/* "block_m=64,block_n=64,warps=8,stages=2,splits=0" */
void mla_tiling_format(const mla_tiling *t, char *buf, size_t len);
/* Apply "key=value,..." on top of *t; INVALID_ARGUMENT naming the bad key or value. */
mla_status mla_tiling_parse(const char *text, mla_tiling *t);

/* How one stage is launched for a tiling and problem. */
typedef struct mla_stage_config {
    const void *func;          /* the __global__ function (for cudaFuncGetAttributes) */
    unsigned grid[3];
    unsigned block[3];
    size_t smem_dynamic;       /* bytes of dynamic shared memory */
} mla_stage_config;

/* Resources of a compiled kernel (cudaFuncGetAttributes). */
typedef struct mla_func_attrs {
    int num_regs;
    size_t smem_static;
    size_t local_bytes;        /* spills / stack per thread */
    int max_threads_per_block;
    int binary_version, ptx_version;
} mla_func_attrs;

typedef struct mla_launch_args {
    const mla_problem *pb;
    const void *tensors;       /* the design's mla_*_tensors, device pointers */
    void *workspace;
    size_t workspace_bytes;
    void *stream;              /* cudaStream_t */
    unsigned stage_mask;       /* bit i: launch stage i (all: ~0u) */
    const mla_device_info *dev;
} mla_launch_args;

typedef struct mla_kernel_version {
    const char *name;          /* "flash_mla_v0": also the name of its __global__ function */
    mla_design design;
    int version;               /* N of _vN, unique per design across tiers */
    mla_tier tier;
    mla_target target;
    const char *note;          /* one line: what changed in this version */
    int num_stages;
    const char *stage_names[MLA_MAX_STAGES];   /* "main", "combine" */
    int num_candidates;
    const mla_tiling *candidates;              /* [0] is the default */
    /* Kernel-specific rules (divisibility, supported h/dims, ...): 1 valid, else 0 and `why`. */
    int (*validate)(const mla_tiling *t, const mla_problem *pb, const mla_device_info *dev,
                    char *why, size_t why_len);
    /* Launch configuration of stage i; 0 when the stage does not run for this problem. */
    int (*stage_config)(const mla_tiling *t, const mla_problem *pb, const mla_device_info *dev,
                        int stage, mla_stage_config *cfg);
    size_t (*workspace_bytes)(const mla_tiling *t, const mla_problem *pb, const mla_device_info *dev);
    /* Prepare the function for launch (raise the dynamic shared memory limit). */
    mla_status (*prepare)(const mla_tiling *t, const mla_problem *pb, const mla_device_info *dev);
    /* Enqueue the stages in args->stage_mask on args->stream. No allocation, no sync. */
    mla_status (*launch)(const mla_tiling *t, const mla_launch_args *args);
    /* 1: never picked by default while another version passes the gate (a kept experiment
     * that measured slower than an older version); it still runs when named. */
    int not_default;
} mla_kernel_version;

/* The table, in registry order (design, then version). */
int mla_registry_count(void);
const mla_kernel_version *mla_registry_get(int i);
const mla_kernel_version *mla_registry_find(const char *name);
/* 1 if `name` is one of the comma-separated names in `list` ("flash_mla_v1,flash_mla_v2"). */
int mla_name_in_list(const char *list, const char *name);

/* The default-pick order: 1 if `kv` beats `best` (NULL beats nothing): a version without
 * not_default beats any with it, then the newer wins. */
int mla_registry_prefers(const mla_kernel_version *kv, const mla_kernel_version *best);

/* Newest version of `design` that passes the architecture gate for cc major.minor, preferring
 * versions without not_default (mla_registry_prefers); NULL and a reason if none. */
const mla_kernel_version *mla_registry_default(mla_design design, int cc_major, int cc_minor,
                                               char *why, size_t why_len);

/* Generic resource checks of one stage against a device: threads, shared memory (static +
 * dynamic vs opt-in), registers (as compiled) x threads vs the SM and block limits, and at least
 * one block per SM. 1 fits; else 0 and `why` ("smem 240 KB > 227 KB opt-in"). Pure function. */
int mla_check_stage_resources(const char *stage, const mla_stage_config *cfg,
                              const mla_func_attrs *attrs, const mla_device_info *dev,
                              char *why, size_t why_len);

/* Full validation of a tiling: kernel rules, then every stage's resources as compiled
 * (needs a live device for cudaFuncGetAttributes; with dev->present == 0 the resource step
 * uses `fake_attrs` if given, else is skipped). */
int mla_validate_tiling(const mla_kernel_version *kv, const mla_tiling *t, const mla_problem *pb,
                        const mla_device_info *dev, const mla_func_attrs *fake_attrs,
                        char *why, size_t why_len);

/* cudaFuncGetAttributes wrapper (CUDA_ERROR without a device). */
mla_status mla_func_attributes(const void *func, mla_func_attrs *out);

#ifdef __cplusplus
}
#endif
#endif
