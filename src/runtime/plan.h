/* The plan object behind mla_plan_t, and the planning steps the CLI reuses. */
#ifndef MLA_PLAN_H
#define MLA_PLAN_H
#include "mla_var3.h"
#include "registry.h"
#include "device.h"
#ifdef __cplusplus
extern "C" {
#endif

struct mla_plan_s {
    mla_problem pb;
    mla_device_info dev;
    const mla_kernel_version *kv;
    mla_tiling tiling;
    size_t workspace_bytes;
    char tiling_source[32];      /* "default", "override", "cache", "autotune" */
    char cache_path[512];        /* the tune-cache file consulted ("" if none) */
    char cache_warning[256];     /* why a present cache file was not used (corrupt, stale); "" */
};

/* Shape checks shared by every entry point (also used with no GPU): INVALID_ARGUMENT for
 * impossible shapes (sizes < 1, s > t, n > t, bad page size, scale not > 0), UNSUPPORTED for
 * valid MLA no kernel serves (h not in {16,32,64,128}, d != 128, k != 512, p != 64). */
mla_status mla_problem_check(const mla_problem *pb, int for_kernels);

/* Plan for any design (the public per-design functions call this after checking the design). */
mla_status mla_plan_create_internal(const mla_problem *pb, const mla_plan_options *opt,
                                    mla_plan_t *plan);

/* Validate a run's tensors against the plan (null pointers, alignment, strides). Packed
 * strides (0) are replaced by the real ones in *resolved. */
mla_status mla_tensors_check(const struct mla_plan_s *plan, const void *tensors, void *resolved);

/* Problem key used by the tune cache and run folders: "b32_s16_t4096_h128_n0_c1" etc. */
void mla_problem_key(const mla_problem *pb, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
