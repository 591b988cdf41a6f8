/*
 * The public API of libmla_var3 (include/mla_var3.h) and the planning steps of plan.h:
 * problem defaults, shape checks, cost formulas (MLA_SPEC.md), problem keys, planning
 * (device, kernel version, tiling from cache / autotune / override, validation), tensor checks
 * and the run entry points. Library code: never prints, returns a status + mla_fail message.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mla_var3.h"
#include "error.h"
#include "plan.h"
#include "registry.h"
#include "device.h"
#include "autotune.h"

/* ------------------------------------------------------------------------------------------ */
/* Problems                                                                                    */
/* ------------------------------------------------------------------------------------------ */

static int design_ok(mla_design d)
{
    return d == MLA_DESIGN_FLASH_ATTENTION || d == MLA_DESIGN_FLASH_MLA ||
           d == MLA_DESIGN_MLA_VAR6_PLUS;
}

/* Which dims a design reads; the others are ignored (not checked, not in the key). */
static int uses_d(mla_design d) { return d != MLA_DESIGN_FLASH_MLA; }
static int uses_k(mla_design d) { return d != MLA_DESIGN_FLASH_ATTENTION; }
static int uses_paged(mla_design d) { return d != MLA_DESIGN_FLASH_ATTENTION; }

static float default_scale(int d, int p)
{
    return (float)(1.0 / sqrt((double)(d + p)));
}

mla_status mla_problem_init(mla_problem *pb, mla_design design)
{
    if (!pb) return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "mla_problem_init: pb is NULL");
    if (!design_ok(design))
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "mla_problem_init: design = %d is not a mla_design",
                        (int)design);
    memset(pb, 0, sizeof *pb);
    pb->design = design;
    pb->b = 1;
    pb->s = 1;
    pb->t = 4096;
    pb->h = 128;
    pb->d = 128;
    pb->k = 512;
    pb->p = 64;
    pb->n = 0;
    pb->page_size = 64;
    pb->causal = 1;
    pb->scale = default_scale(128, 64);
    return MLA_STATUS_OK;
}

mla_status mla_problem_check(const mla_problem *pb, int for_kernels)
{
    if (!pb) return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "problem is NULL");
    if (!design_ok(pb->design))
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "design = %d is not a mla_design", (int)pb->design);
    const char *dn = mla_design_name(pb->design);
#define MLA_NEED_POS(field)                                                                  \
    do {                                                                                     \
        if (pb->field < 1)                                                                   \
            return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "%s: " #field " = %d must be >= 1", \
                            dn, pb->field);                                                  \
    } while (0)
    MLA_NEED_POS(b);
    MLA_NEED_POS(s);
    MLA_NEED_POS(t);
    MLA_NEED_POS(h);
    if (uses_d(pb->design)) MLA_NEED_POS(d);
    if (uses_k(pb->design)) MLA_NEED_POS(k);
    MLA_NEED_POS(p);
    if (uses_paged(pb->design)) MLA_NEED_POS(page_size);
#undef MLA_NEED_POS
    if (pb->s > pb->t)
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "%s: s = %d > t = %d (the queries are among the t tokens)",
                        dn, pb->s, pb->t);
    if (pb->design == MLA_DESIGN_MLA_VAR6_PLUS && (pb->n < 0 || pb->n > pb->t))
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "%s: n = %d must be in [0, t = %d]", dn, pb->n, pb->t);
    if (!isfinite(pb->scale) || !(pb->scale > 0.0f))
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "%s: scale = %g must be finite and > 0",
                        dn, (double)pb->scale);
    if (!for_kernels) return MLA_STATUS_OK;

    if (pb->h != 16 && pb->h != 32 && pb->h != 64 && pb->h != 128)
        return mla_fail(MLA_STATUS_UNSUPPORTED,
                        "%s: h = %d is not supported by any kernel (16, 32, 64, 128)", dn, pb->h);
    if (uses_d(pb->design) && pb->d != 128)
        return mla_fail(MLA_STATUS_UNSUPPORTED, "%s: d = %d is not supported by any kernel (128)", dn, pb->d);
    if (uses_k(pb->design) && pb->k != 512)
        return mla_fail(MLA_STATUS_UNSUPPORTED, "%s: k = %d is not supported by any kernel (512)", dn, pb->k);
    if (pb->p != 64)
        return mla_fail(MLA_STATUS_UNSUPPORTED, "%s: p = %d is not supported by any kernel (64)", dn, pb->p);
    if (uses_paged(pb->design) && pb->page_size != 64)
        return mla_fail(MLA_STATUS_UNSUPPORTED, "%s: page_size = %d is not supported by any kernel (64)",
                        dn, pb->page_size);
    return MLA_STATUS_OK;
}

mla_status mla_problem_validate(const mla_problem *pb) { return mla_problem_check(pb, 1); }

mla_status mla_problem_cost(const mla_problem *pb, double *flops, double *bytes)
{
    if (!flops || !bytes)
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "mla_problem_cost: %s is NULL", !flops ? "flops" : "bytes");
    mla_status st = mla_problem_check(pb, 0);
    if (st != MLA_STATUS_OK) return st;
    /* doubles: b*h*s*t*k overflows 32-bit ints on the benchmark grid */
    const double b = pb->b, s = pb->s, t = pb->t, h = pb->h, d = pb->d, k = pb->k, p = pb->p;
    switch (pb->design) {
    case MLA_DESIGN_FLASH_ATTENTION:
        *flops = 2.0 * b * h * s * t * (2.0 * d + p);
        *bytes = 2.0 * (b * t * h * (2.0 * d + p) + b * s * h * (2.0 * d + p) + b * s * h * d);
        break;
    case MLA_DESIGN_FLASH_MLA:
        *flops = 2.0 * b * h * s * t * (2.0 * k + p);
        *bytes = 2.0 * (b * t * (k + p) + b * s * h * (k + p) + b * s * h * k);
        break;
    case MLA_DESIGN_MLA_VAR6_PLUS: {
        const double n = pb->n, o = t - n;
        *flops = 2.0 * b * h * s * t * p + 4.0 * b * h * s * n * d + 4.0 * b * h * s * o * k +
                 2.0 * b * h * s * k * d;
        *bytes = 2.0 * (b * o * (k + p) + b * n * (2.0 * h * d + p) + b * s * h * (k + d + p) +
                        b * s * h * d + h * k * d);
        break;
    }
    }
    return MLA_STATUS_OK;
}

void mla_problem_key(const mla_problem *pb, char *buf, size_t len)
{
    if (!buf || len == 0) return;
    if (!pb) {
        snprintf(buf, len, "null");
        return;
    }
    size_t w = 0;
#define MLA_KEY_APPEND(...)                                                   \
    do {                                                                      \
        if (w < len) {                                                        \
            int r_ = snprintf(buf + w, len - w, __VA_ARGS__);                 \
            if (r_ > 0) w += (size_t)r_;                                      \
        }                                                                     \
    } while (0)
    MLA_KEY_APPEND("b%d_s%d_t%d_h%d", pb->b, pb->s, pb->t, pb->h);
    switch (pb->design) {
    case MLA_DESIGN_FLASH_ATTENTION: MLA_KEY_APPEND("_d%d_p%d", pb->d, pb->p); break;
    case MLA_DESIGN_FLASH_MLA: MLA_KEY_APPEND("_k%d_p%d_pg%d", pb->k, pb->p, pb->page_size); break;
    case MLA_DESIGN_MLA_VAR6_PLUS:
        MLA_KEY_APPEND("_d%d_k%d_p%d_n%d_pg%d", pb->d, pb->k, pb->p, pb->n, pb->page_size);
        break;
    default: MLA_KEY_APPEND("_design%d", (int)pb->design); break;
    }
    MLA_KEY_APPEND("_c%d", pb->causal ? 1 : 0);
    /* The scale only enters the key when it is not the default, so default keys stay short. */
    float def = default_scale(pb->d, pb->p);
    uint32_t bits, defbits;
    memcpy(&bits, &pb->scale, sizeof bits);
    memcpy(&defbits, &def, sizeof defbits);
    if (bits != defbits) MLA_KEY_APPEND("_sc%08x", (unsigned)bits);
#undef MLA_KEY_APPEND
}

/* ------------------------------------------------------------------------------------------ */
/* Plans                                                                                       */
/* ------------------------------------------------------------------------------------------ */

void mla_plan_options_init(mla_plan_options *opt)
{
    if (!opt) return;
    memset(opt, 0, sizeof *opt);
    opt->device = 0;
    opt->version = NULL;
    opt->tiling = NULL;
    opt->autotune = MLA_AUTOTUNE_OFF;
    opt->cache_dir = NULL;
}

/* "a, b, c" of the registry's names (for an unknown --version message). */
static void known_versions(char *buf, size_t len)
{
    size_t w = 0;
    buf[0] = '\0';
    int n = mla_registry_count();
    for (int i = 0; i < n && w < len; i++) {
        const mla_kernel_version *kv = mla_registry_get(i);
        if (!kv) continue;
        int r = snprintf(buf + w, len - w, "%s%s", w ? ", " : "", kv->name);
        if (r > 0) w += (size_t)r;
    }
    if (w == 0) snprintf(buf, len, "(none linked)");
}

static int tiling_equal(const mla_tiling *a, const mla_tiling *b)
{
    return a->block_m == b->block_m && a->block_n == b->block_n && a->warps == b->warps &&
           a->stages == b->stages && a->splits == b->splits;
}

/* Fill *out with the tune result's winner; 0 if it has none. */
static int tune_winner(const mla_tune_result *res, mla_tiling *out)
{
    if (res->winner < 0 || res->winner >= res->num_entries || res->winner >= MLA_MAX_CANDIDATES) return 0;
    if (!res->entries[res->winner].ok) return 0;
    *out = res->entries[res->winner].tiling;
    return 1;
}

mla_status mla_plan_create_internal(const mla_problem *pb, const mla_plan_options *opt_in,
                                    mla_plan_t *plan_out)
{
    if (!plan_out) return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "plan: the output pointer (plan) is NULL");
    *plan_out = NULL;
    mla_plan_options opt;
    if (opt_in)
        opt = *opt_in;
    else
        mla_plan_options_init(&opt);

    /* a) the problem */
    mla_status st = mla_problem_check(pb, 1);
    if (st != MLA_STATUS_OK) return st;
    if (opt.autotune != MLA_AUTOTUNE_OFF && opt.autotune != MLA_AUTOTUNE_CACHED &&
        opt.autotune != MLA_AUTOTUNE_FORCE)
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "plan: autotune = %d is not a mla_autotune_mode",
                        (int)opt.autotune);
    const char *dn = mla_design_name(pb->design);

    /* b) the device */
    int ndev = mla_device_count();
    if (ndev == 0)
        return mla_fail(MLA_STATUS_NO_DEVICE,
                        "no CUDA device: %s kernels need an NVIDIA GPU (sm_80 or newer) and a working "
                        "driver; none was found", dn);
    if (opt.device < 0 || opt.device >= ndev)
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "plan: device = %d is out of range (%d device%s)",
                        opt.device, ndev, ndev == 1 ? "" : "s");
    mla_device_info dev;
    memset(&dev, 0, sizeof dev);
    st = mla_device_query(opt.device, &dev);
    if (st != MLA_STATUS_OK) return st;

    /* c) the kernel version: explicit, or the newest one the architecture gate allows */
    char why[1024];
    why[0] = '\0';
    const mla_kernel_version *kv = NULL;
    if (opt.version && opt.version[0]) {
        kv = mla_registry_find(opt.version);
        if (!kv) {
            char names[512];
            known_versions(names, sizeof names);
            return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "plan: unknown kernel version \"%s\" (known: %s)",
                            opt.version, names);
        }
        if (kv->design != pb->design)
            return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "plan: kernel version %s is a %s kernel, the problem is %s",
                            kv->name, mla_design_name(kv->design), dn);
        /* The gate is absolute: an explicitly requested version is never launched off-target. */
        if (!mla_arch_allows(kv->target, dev.cc_major, dev.cc_minor, why, sizeof why))
            return mla_fail(MLA_STATUS_ARCH_MISMATCH, "plan: %s cannot run on %s: %s", kv->name, dev.name, why);
    } else {
        kv = mla_registry_default(pb->design, dev.cc_major, dev.cc_minor, why, sizeof why);
        if (!kv)
            return mla_fail(MLA_STATUS_ARCH_MISMATCH, "plan: no %s kernel runs on %s (cc %d.%d): %s", dn,
                            dev.name, dev.cc_major, dev.cc_minor, why);
    }
    if (kv->num_candidates < 1 || !kv->candidates)
        return mla_fail(MLA_STATUS_INTERNAL, "plan: kernel %s has no tiling candidates", kv->name);

    /* d) the tiling: default, cached winner, fresh autotune, then the user's overrides */
    mla_tiling tiling = kv->candidates[0];
    char source[32] = "default";
    char cache_path[512] = "";
    char cache_warning[256] = "";
    const char *cache_dir = opt.cache_dir ? opt.cache_dir : mla_tune_cache_default_dir();
    {
        mla_tune_cache_path(cache_dir, &dev, kv->name, pb, cache_path, sizeof cache_path);
        int have_cached = 0;
        mla_tune_result *res = (mla_tune_result *)calloc(1, sizeof *res);  /* ~10 KB: not on the stack */
        if (!res) return mla_fail(MLA_STATUS_OUT_OF_MEMORY, "plan: out of host memory");
        if (opt.autotune != MLA_AUTOTUNE_FORCE) {
            char warn[256];
            warn[0] = '\0';
            /* absent, stale or corrupt: simply not used (OFF) or re-tuned (CACHED) */
            if (mla_tune_cache_load(cache_path, kv->name, pb, res, warn, sizeof warn) == MLA_STATUS_OK &&
                tune_winner(res, &tiling)) {
                have_cached = 1;
                snprintf(source, sizeof source, "cache");
            }
            /* the library does not print: the plan keeps the warning for its caller */
            snprintf(cache_warning, sizeof cache_warning, "%s", warn);
        }
        if (!have_cached && opt.autotune != MLA_AUTOTUNE_OFF) {
            memset(res, 0, sizeof *res);
            st = mla_autotune(kv, pb, &dev, NULL, NULL, res);
            if (st != MLA_STATUS_OK) {
                free(res);
                return st;
            }
            if (!tune_winner(res, &tiling)) {
                char reasons[768];
                size_t w = 0;
                reasons[0] = '\0';
                for (int i = 0; i < res->num_entries && i < MLA_MAX_CANDIDATES && w < sizeof reasons; i++) {
                    char tb[128];
                    mla_tiling_format(&res->entries[i].tiling, tb, sizeof tb);
                    int r = snprintf(reasons + w, sizeof reasons - w, "%s[%s] %s", w ? "; " : "", tb,
                                     res->entries[i].error);
                    if (r > 0) w += (size_t)r;
                }
                free(res);
                return mla_fail(MLA_STATUS_UNSUPPORTED, "plan: autotuning %s ran no candidate: %s", kv->name,
                                reasons[0] ? reasons : "(no candidates)");
            }
            snprintf(source, sizeof source, "autotune");
            /* A cache that cannot be written costs a re-tune next time, not this plan. */
            (void)mla_tune_cache_store_problem(cache_path, res, pb);
        }
        free(res);
    }
    int overridden = 0;
    if (opt.tiling && opt.tiling[0]) {
        st = mla_tiling_parse(opt.tiling, &tiling);
        if (st != MLA_STATUS_OK) return st;
        overridden = 1;
        snprintf(source, sizeof source, "override");
    }

    /* e) validation against the kernel's rules and the device's resources */
    why[0] = '\0';
    if (!mla_validate_tiling(kv, &tiling, pb, &dev, NULL, why, sizeof why)) {
        char tb[128];
        mla_tiling_format(&tiling, tb, sizeof tb);
        if (overridden)
            return mla_fail(MLA_STATUS_UNSUPPORTED, "plan: tiling %s is not valid for %s on %s: %s", tb, kv->name,
                            dev.name, why);
        /* The default (or a cached winner gone stale) does not fit: take the first candidate that does. */
        char reasons[1024];
        size_t w = 0;
        int r = snprintf(reasons, sizeof reasons, "[%s] %s", tb, why);
        if (r > 0) w = (size_t)r;
        const mla_tiling failed = tiling;
        int found = 0;
        for (int i = 0; i < kv->num_candidates && !found; i++) {
            if (tiling_equal(&kv->candidates[i], &failed)) continue;
            why[0] = '\0';
            if (mla_validate_tiling(kv, &kv->candidates[i], pb, &dev, NULL, why, sizeof why)) {
                tiling = kv->candidates[i];
                snprintf(source, sizeof source, "default");
                found = 1;
            } else if (w < sizeof reasons) {
                mla_tiling_format(&kv->candidates[i], tb, sizeof tb);
                r = snprintf(reasons + w, sizeof reasons - w, "; [%s] %s", tb, why);
                if (r > 0) w += (size_t)r;
            }
        }
        if (!found)
            return mla_fail(MLA_STATUS_UNSUPPORTED, "plan: no tiling of %s fits this problem on %s: %s", kv->name,
                            dev.name, reasons);
    }

    /* f) prepare the functions (shared memory opt-in), g) workspace */
    if (kv->prepare) {
        st = kv->prepare(&tiling, pb, &dev);
        if (st != MLA_STATUS_OK) return st;
    }
    size_t ws = kv->workspace_bytes ? kv->workspace_bytes(&tiling, pb, &dev) : 0;

    struct mla_plan_s *plan = (struct mla_plan_s *)calloc(1, sizeof *plan);
    if (!plan) return mla_fail(MLA_STATUS_OUT_OF_MEMORY, "plan: out of host memory");
    plan->pb = *pb;
    plan->dev = dev;
    plan->kv = kv;
    plan->tiling = tiling;
    plan->workspace_bytes = ws;
    snprintf(plan->tiling_source, sizeof plan->tiling_source, "%s", source);
    snprintf(plan->cache_path, sizeof plan->cache_path, "%s", cache_path);
    snprintf(plan->cache_warning, sizeof plan->cache_warning, "%s", cache_warning);
    *plan_out = plan;
    mla_clear_error();  /* an absent tune cache is not an error of this (successful) call */
    return MLA_STATUS_OK;
}

static mla_status plan_for(mla_design want, const char *fn, const mla_problem *pb,
                           const mla_plan_options *opt, mla_plan_t *plan)
{
    if (plan) *plan = NULL;
    if (!plan) return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "%s: plan (the output pointer) is NULL", fn);
    if (!pb) return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "%s: problem is NULL", fn);
    if (pb->design != want)
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "%s: problem design is %s (%d), expected %s", fn,
                        design_ok(pb->design) ? mla_design_name(pb->design) : "invalid", (int)pb->design,
                        mla_design_name(want));
    return mla_plan_create_internal(pb, opt, plan);
}

mla_status mla_flash_attention_plan(const mla_problem *pb, const mla_plan_options *opt, mla_plan_t *plan)
{
    return plan_for(MLA_DESIGN_FLASH_ATTENTION, "mla_flash_attention_plan", pb, opt, plan);
}

mla_status mla_flash_mla_plan(const mla_problem *pb, const mla_plan_options *opt, mla_plan_t *plan)
{
    return plan_for(MLA_DESIGN_FLASH_MLA, "mla_flash_mla_plan", pb, opt, plan);
}

mla_status mla_var6_plus_plan(const mla_problem *pb, const mla_plan_options *opt, mla_plan_t *plan)
{
    return plan_for(MLA_DESIGN_MLA_VAR6_PLUS, "mla_var6_plus_plan", pb, opt, plan);
}

mla_status mla_plan_workspace_size(mla_plan_t plan, size_t *bytes)
{
    if (!plan) return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "mla_plan_workspace_size: plan is NULL");
    if (!bytes) return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "mla_plan_workspace_size: bytes is NULL");
    *bytes = plan->workspace_bytes;
    return MLA_STATUS_OK;
}

mla_status mla_plan_describe(mla_plan_t plan, char *buf, size_t len)
{
    if (!plan) return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "mla_plan_describe: plan is NULL");
    if (!buf || len == 0) return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "mla_plan_describe: buf is NULL or len is 0");
    if (!plan->kv) return mla_fail(MLA_STATUS_INTERNAL, "mla_plan_describe: plan has no kernel");
    char tb[160];
    mla_tiling_format(&plan->tiling, tb, sizeof tb);
    snprintf(buf, len, "%s [%s %s] %s (%s)", plan->kv->name, mla_tier_name(plan->kv->tier),
             mla_target_name(plan->kv->target), tb, plan->tiling_source[0] ? plan->tiling_source : "default");
    return MLA_STATUS_OK;
}

void mla_plan_destroy(mla_plan_t plan) { free(plan); }

/* ------------------------------------------------------------------------------------------ */
/* Tensor checks                                                                               */
/* ------------------------------------------------------------------------------------------ */

/* A bf16 tensor's pointer: present (unless optional) and 16-byte aligned for vector loads. */
static mla_status check_bf16_ptr(const char *name, const void *ptr)
{
    if (!ptr) return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "x->%s is NULL", name);
    if ((uintptr_t)ptr % 16 != 0)
        return mla_fail(MLA_STATUS_UNSUPPORTED, "x->%s = %p is not 16-byte aligned (the kernels load 16-byte vectors)",
                        name, ptr);
    return MLA_STATUS_OK;
}

static mla_status check_4b_ptr(const char *name, const void *ptr)
{
    if (ptr && (uintptr_t)ptr % 4 != 0)
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "x->%s = %p is not 4-byte aligned", name, ptr);
    return MLA_STATUS_OK;
}

/* Resolve and check the outer strides of a tensor whose dims are `sizes` (the last, contiguous
 * one included) and whose `ns` strides cover the first ns dims. 0 means packed; otherwise a
 * stride must be at least the packed extent of the dims inside it (so that indices of an
 * ordered layout never alias) and a multiple of 8 elements (16-byte rows for bf16). A dim of
 * size 1 is never indexed, so its stride only needs the alignment. */
static mla_status resolve_strides(const char *name, int ns, const int64_t *sizes, const int64_t *in,
                                  int64_t *out)
{
    for (int i = ns - 1; i >= 0; i--) {
        int64_t packed = 1;
        for (int j = i + 1; j <= ns; j++) packed *= sizes[j];
        int64_t v = in[i];
        if (v == 0) {
            out[i] = packed;
            continue;
        }
        if ((v < packed && sizes[i] > 1) || v < 0)
            return mla_fail(MLA_STATUS_UNSUPPORTED,
                            "x->%s_strides[%d] = %lld is smaller than the packed extent %lld of the inner dims",
                            name, i, (long long)v, (long long)packed);
        if (v % 8 != 0)
            return mla_fail(MLA_STATUS_UNSUPPORTED, "x->%s_strides[%d] = %lld is not a multiple of 8 elements",
                            name, i, (long long)v);
        out[i] = v;
    }
    return MLA_STATUS_OK;
}

static mla_status check_paged(const mla_problem *pb, int tokens, const void *cache, int num_pages,
                              const int32_t *block_table, int max_pages, int64_t bt_stride,
                              int64_t *bt_stride_out)
{
    mla_status st;
    *bt_stride_out = bt_stride ? bt_stride : max_pages;
    if (tokens <= 0) return MLA_STATUS_OK;  /* nothing lives in the cache */
    if ((st = check_bf16_ptr("cache", cache)) != MLA_STATUS_OK) return st;
    if (!block_table) return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "x->block_table is NULL");
    if ((st = check_4b_ptr("block_table", block_table)) != MLA_STATUS_OK) return st;
    if (num_pages < 1) return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "x->num_pages = %d must be >= 1", num_pages);
    int need = (tokens + pb->page_size - 1) / pb->page_size;
    if (max_pages < need)
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT,
                        "x->max_pages = %d < ceil(%d / page_size %d) = %d pages per request", max_pages, tokens,
                        pb->page_size, need);
    if (bt_stride != 0 && bt_stride < max_pages)
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "x->block_table_stride = %lld < max_pages = %d",
                        (long long)bt_stride, max_pages);
    return MLA_STATUS_OK;
}

#define MLA_TRY(expr)                               \
    do {                                            \
        mla_status st_ = (expr);                    \
        if (st_ != MLA_STATUS_OK) return st_;       \
    } while (0)

static mla_status check_fa(const mla_problem *pb, const mla_flash_attention_tensors *x,
                           mla_flash_attention_tensors *r)
{
    const int64_t b = pb->b, s = pb->s, t = pb->t, h = pb->h, d = pb->d, p = pb->p;
    *r = *x;
    MLA_TRY(check_bf16_ptr("q", x->q));
    MLA_TRY(check_bf16_ptr("k", x->k));
    MLA_TRY(check_bf16_ptr("v", x->v));
    MLA_TRY(check_bf16_ptr("out", x->out));
    MLA_TRY(check_4b_ptr("seqlens", x->seqlens));
    MLA_TRY(check_4b_ptr("lse", x->lse));
    const int64_t q_sz[4] = {b, s, h, d + p}, k_sz[4] = {b, t, h, d + p}, v_sz[4] = {b, t, h, d},
                  o_sz[4] = {b, s, h, d};
    MLA_TRY(resolve_strides("q", 3, q_sz, x->q_strides, r->q_strides));
    MLA_TRY(resolve_strides("k", 3, k_sz, x->k_strides, r->k_strides));
    MLA_TRY(resolve_strides("v", 3, v_sz, x->v_strides, r->v_strides));
    MLA_TRY(resolve_strides("out", 3, o_sz, x->out_strides, r->out_strides));
    return MLA_STATUS_OK;
}

static mla_status check_mla(const mla_problem *pb, const mla_flash_mla_tensors *x, mla_flash_mla_tensors *r)
{
    const int64_t b = pb->b, s = pb->s, h = pb->h, k = pb->k, p = pb->p;
    *r = *x;
    MLA_TRY(check_bf16_ptr("q", x->q));
    MLA_TRY(check_bf16_ptr("out", x->out));
    MLA_TRY(check_4b_ptr("seqlens", x->seqlens));
    MLA_TRY(check_4b_ptr("lse", x->lse));
    MLA_TRY(check_paged(pb, pb->t, x->cache, x->num_pages, x->block_table, x->max_pages, x->block_table_stride,
                        &r->block_table_stride));
    const int64_t q_sz[4] = {b, s, h, k + p}, o_sz[4] = {b, s, h, k};
    MLA_TRY(resolve_strides("q", 3, q_sz, x->q_strides, r->q_strides));
    MLA_TRY(resolve_strides("out", 3, o_sz, x->out_strides, r->out_strides));
    return MLA_STATUS_OK;
}

static mla_status check_var6(const mla_problem *pb, const mla_var6_plus_tensors *x, mla_var6_plus_tensors *r)
{
    const int64_t b = pb->b, s = pb->s, h = pb->h, d = pb->d, k = pb->k, p = pb->p, n = pb->n;
    const int o = pb->t - pb->n;
    *r = *x;
    MLA_TRY(check_bf16_ptr("q_lat", x->q_lat));
    MLA_TRY(check_bf16_ptr("q_nope", x->q_nope));
    MLA_TRY(check_bf16_ptr("q_rope", x->q_rope));
    MLA_TRY(check_bf16_ptr("w_uv", x->w_uv));
    MLA_TRY(check_bf16_ptr("out", x->out));
    MLA_TRY(check_4b_ptr("seqlens", x->seqlens));
    MLA_TRY(check_4b_ptr("lse", x->lse));
    /* o = 0: no latent tokens, the cache may be absent; n = 0: no decompressed ones. */
    MLA_TRY(check_paged(pb, o, x->cache, x->num_pages, x->block_table, x->max_pages, x->block_table_stride,
                        &r->block_table_stride));
    if (n > 0) {
        MLA_TRY(check_bf16_ptr("k_nope", x->k_nope));
        MLA_TRY(check_bf16_ptr("v", x->v));
        MLA_TRY(check_bf16_ptr("k_rope", x->k_rope));
    }
    const int64_t ql_sz[4] = {b, s, h, k}, qn_sz[4] = {b, s, h, d}, qr_sz[4] = {b, s, h, p},
                  kn_sz[4] = {b, n, h, d}, kr_sz[3] = {b, n, p}, o_sz[4] = {b, s, h, d};
    MLA_TRY(resolve_strides("q_lat", 3, ql_sz, x->q_lat_strides, r->q_lat_strides));
    MLA_TRY(resolve_strides("q_nope", 3, qn_sz, x->q_nope_strides, r->q_nope_strides));
    MLA_TRY(resolve_strides("q_rope", 3, qr_sz, x->q_rope_strides, r->q_rope_strides));
    MLA_TRY(resolve_strides("k_nope", 3, kn_sz, x->k_nope_strides, r->k_nope_strides));
    MLA_TRY(resolve_strides("v", 3, kn_sz, x->v_strides, r->v_strides));
    MLA_TRY(resolve_strides("k_rope", 2, kr_sz, x->k_rope_strides, r->k_rope_strides));
    MLA_TRY(resolve_strides("out", 3, o_sz, x->out_strides, r->out_strides));
    return MLA_STATUS_OK;
}

mla_status mla_tensors_check(const struct mla_plan_s *plan, const void *tensors, void *resolved)
{
    if (!plan) return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "tensors check: plan is NULL");
    if (!tensors) return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "tensors check: tensors (x) is NULL");
    const mla_problem *pb = &plan->pb;
    switch (pb->design) {
    case MLA_DESIGN_FLASH_ATTENTION: {
        mla_flash_attention_tensors tmp;
        MLA_TRY(check_fa(pb, (const mla_flash_attention_tensors *)tensors, &tmp));
        if (resolved) memcpy(resolved, &tmp, sizeof tmp);
        return MLA_STATUS_OK;
    }
    case MLA_DESIGN_FLASH_MLA: {
        mla_flash_mla_tensors tmp;
        MLA_TRY(check_mla(pb, (const mla_flash_mla_tensors *)tensors, &tmp));
        if (resolved) memcpy(resolved, &tmp, sizeof tmp);
        return MLA_STATUS_OK;
    }
    case MLA_DESIGN_MLA_VAR6_PLUS: {
        mla_var6_plus_tensors tmp;
        MLA_TRY(check_var6(pb, (const mla_var6_plus_tensors *)tensors, &tmp));
        if (resolved) memcpy(resolved, &tmp, sizeof tmp);
        return MLA_STATUS_OK;
    }
    }
    return mla_fail(MLA_STATUS_INTERNAL, "tensors check: plan has an invalid design %d", (int)pb->design);
}

/* ------------------------------------------------------------------------------------------ */
/* Runs: checks only, then the version's launch. No allocation, no synchronisation.            */
/* ------------------------------------------------------------------------------------------ */

static mla_status run_common(mla_design want, const char *fn, mla_plan_t plan, const void *x,
                             void *resolved, void *workspace, size_t workspace_bytes, void *stream)
{
    if (!plan) return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "%s: plan is NULL", fn);
    if (!x) return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "%s: tensors (x) is NULL", fn);
    if (plan->pb.design != want)
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "%s: the plan is for %s, not %s", fn,
                        design_ok(plan->pb.design) ? mla_design_name(plan->pb.design) : "an invalid design",
                        mla_design_name(want));
    if (!plan->kv || !plan->kv->launch)
        return mla_fail(MLA_STATUS_INTERNAL, "%s: the plan has no kernel to launch", fn);
    if (workspace_bytes < plan->workspace_bytes)
        return mla_fail(MLA_STATUS_WORKSPACE_TOO_SMALL, "%s: workspace_bytes = %zu < %zu the plan needs", fn,
                        workspace_bytes, plan->workspace_bytes);
    if (plan->workspace_bytes > 0 && !workspace)
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "%s: workspace is NULL but the plan needs %zu bytes", fn,
                        plan->workspace_bytes);
    if (plan->workspace_bytes > 0 && (uintptr_t)workspace % 256 != 0)
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "%s: workspace = %p is not 256-byte aligned", fn, workspace);
    MLA_TRY(mla_tensors_check(plan, x, resolved));
    mla_launch_args args;
    memset(&args, 0, sizeof args);
    args.pb = &plan->pb;
    args.tensors = resolved;
    args.workspace = workspace;
    args.workspace_bytes = workspace_bytes;
    args.stream = stream;
    args.stage_mask = ~0u;
    args.dev = &plan->dev;
    return plan->kv->launch(&plan->tiling, &args);
}

mla_status mla_flash_attention_run(mla_plan_t plan, const mla_flash_attention_tensors *x,
                                   void *workspace, size_t workspace_bytes, void *stream)
{
    mla_flash_attention_tensors r;
    return run_common(MLA_DESIGN_FLASH_ATTENTION, "mla_flash_attention_run", plan, x, &r, workspace,
                      workspace_bytes, stream);
}

mla_status mla_flash_mla_run(mla_plan_t plan, const mla_flash_mla_tensors *x,
                             void *workspace, size_t workspace_bytes, void *stream)
{
    mla_flash_mla_tensors r;
    return run_common(MLA_DESIGN_FLASH_MLA, "mla_flash_mla_run", plan, x, &r, workspace, workspace_bytes, stream);
}

mla_status mla_var6_plus_run(mla_plan_t plan, const mla_var6_plus_tensors *x,
                             void *workspace, size_t workspace_bytes, void *stream)
{
    mla_var6_plus_tensors r;
    return run_common(MLA_DESIGN_MLA_VAR6_PLUS, "mla_var6_plus_run", plan, x, &r, workspace, workspace_bytes,
                      stream);
}
