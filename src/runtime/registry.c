/*
 * The kernel registry over mla_registry_table (registry_table.c): names of tiers and designs,
 * tiling text <-> struct, lookup and the default version per design (the newest one that passes
 * the architecture gate), and the generic resource checks of a stage against a device.
 * Entries of the table may be NULL (a version not linked in): every function skips them.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime_api.h>
#include "registry.h"
#include "error.h"

extern const mla_kernel_version *const mla_registry_table[];
extern const int mla_registry_table_size;

const char *mla_tier_name(mla_tier t)
{
    switch (t) {
    case MLA_TIER_PORTABLE: return "portable";
    case MLA_TIER_HOPPER: return "hopper";
    }
    return "unknown";
}

static const char *const design_names[] = {"flash_attention", "flash_mla", "mla_var6_plus"};
#define NUM_DESIGNS ((int)(sizeof design_names / sizeof design_names[0]))

const char *mla_design_name(mla_design d)
{
    if ((int)d < 0 || (int)d >= NUM_DESIGNS) return "unknown";
    return design_names[d];
}

int mla_design_from_name(const char *name, mla_design *d)
{
    if (!name) return 0;
    for (int i = 0; i < NUM_DESIGNS; i++)
        if (strcmp(name, design_names[i]) == 0) {
            if (d) *d = (mla_design)i;
            return 1;
        }
    return 0;
}

/* ---- tiling -------------------------------------------------------------------------------- */

const char *const mla_tiling_field_names[MLA_TILING_NUM_FIELDS] = {"block_m", "block_n", "warps", "stages",
                                                                   "splits"};

int *mla_tiling_field(mla_tiling *t, int i)
{
    if (!t) return NULL;
    switch (i) {
    case 0: return &t->block_m;
    case 1: return &t->block_n;
    case 2: return &t->warps;
    case 3: return &t->stages;
    case 4: return &t->splits;
    }
    return NULL;
}

void mla_tiling_format(const mla_tiling *t, char *buf, size_t len)
{
    if (!buf || !len) return;
    buf[0] = '\0';
    if (!t) return;
    mla_tiling c = *t;   /* mla_tiling_field wants a mutable struct */
    size_t used = 0;
    for (int i = 0; i < MLA_TILING_NUM_FIELDS && used < len; i++) {
        int w = snprintf(buf + used, len - used, "%s%s=%d", i ? "," : "", mla_tiling_field_names[i],
                         *mla_tiling_field(&c, i));
        if (w < 0) break;
        used += (size_t)w;
    }
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t') s++;
    char *e = s + strlen(s);
    while (e > s && (e[-1] == ' ' || e[-1] == '\t')) *--e = '\0';
    return s;
}

mla_status mla_tiling_parse(const char *text, mla_tiling *t)
{
    if (!t) return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "tiling: the tiling pointer is NULL");
    if (!text) return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "tiling: the text is NULL");
    char *copy = strdup(text);
    if (!copy) return mla_fail(MLA_STATUS_OUT_OF_MEMORY, "tiling: out of host memory");
    /* Work on a copy of the struct so that a bad item leaves *t untouched. */
    mla_tiling r = *t;
    mla_status st = MLA_STATUS_OK;
    char *save = NULL;
    for (char *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        item = trim(item);
        if (!*item) continue;   /* "a=1,,b=2" and a trailing comma are harmless */
        char *eq = strchr(item, '=');
        if (!eq) {
            st = mla_fail(MLA_STATUS_INVALID_ARGUMENT, "tiling: \"%s\" is not key=value (keys: block_m, "
                          "block_n, warps, stages, splits)", item);
            break;
        }
        *eq = '\0';
        char *key = trim(item), *val = trim(eq + 1);
        int idx = -1;
        for (int i = 0; i < MLA_TILING_NUM_FIELDS; i++)
            if (strcmp(key, mla_tiling_field_names[i]) == 0) idx = i;
        if (idx < 0) {
            st = mla_fail(MLA_STATUS_INVALID_ARGUMENT, "tiling: unknown key \"%s\" (keys: block_m, block_n, "
                          "warps, stages, splits)", key);
            break;
        }
        char *end = NULL;
        errno = 0;
        long v = strtol(val, &end, 10);
        if (!*val || *end || errno || v < 0 || v > INT_MAX) {
            st = mla_fail(MLA_STATUS_INVALID_ARGUMENT,
                          "tiling: %s=\"%s\" is not a non-negative integer", key, val);
            break;
        }
        *mla_tiling_field(&r, idx) = (int)v;
    }
    free(copy);
    if (st == MLA_STATUS_OK) *t = r;
    return st;
}

/* ---- the table ----------------------------------------------------------------------------- */

int mla_registry_count(void)
{
    int n = 0;
    for (int i = 0; i < mla_registry_table_size; i++)
        if (mla_registry_table[i]) n++;
    return n;
}

const mla_kernel_version *mla_registry_get(int i)
{
    if (i < 0) return NULL;
    for (int j = 0; j < mla_registry_table_size; j++)
        if (mla_registry_table[j] && i-- == 0) return mla_registry_table[j];
    return NULL;
}

const mla_kernel_version *mla_registry_find(const char *name)
{
    if (!name) return NULL;
    for (int j = 0; j < mla_registry_table_size; j++)
        if (mla_registry_table[j] && mla_registry_table[j]->name && strcmp(mla_registry_table[j]->name, name) == 0)
            return mla_registry_table[j];
    return NULL;
}

/* Append printf text to why (truncating quietly). */
static void why_append(char *why, size_t why_len, const char *fmt, const char *a)
{
    if (!why || !why_len) return;
    size_t used = strlen(why);
    if (used + 1 >= why_len) return;
    snprintf(why + used, why_len - used, fmt, a);
}

int mla_registry_prefers(const mla_kernel_version *kv, const mla_kernel_version *best)
{
    return !best || (best->not_default && !kv->not_default) ||
           (best->not_default == kv->not_default && kv->version > best->version);
}

const mla_kernel_version *mla_registry_default(mla_design design, int cc_major, int cc_minor, char *why,
                                               size_t why_len)
{
    if (why && why_len) why[0] = '\0';
    const mla_kernel_version *best = NULL;
    int any = 0;
    for (int j = 0; j < mla_registry_table_size; j++) {
        const mla_kernel_version *kv = mla_registry_table[j];
        if (!kv || kv->design != design) continue;
        any = 1;
        if (!mla_arch_allows(kv->target, cc_major, cc_minor, NULL, 0)) continue;
        if (mla_registry_prefers(kv, best)) best = kv;
    }
    if (best) return best;
    if (!any) {
        if (why && why_len)
            snprintf(why, why_len, "no version of %s is linked into the registry", mla_design_name(design));
        return NULL;
    }
    if (why && why_len)
        snprintf(why, why_len, "no version of %s runs on compute capability %d.%d:", mla_design_name(design),
                 cc_major, cc_minor);
    /* Consecutive versions skipped for the same reason share it ("a, b skipped (r);"), so the
     * message stays within a caller's buffer as a design's line of versions grows. */
    char prev[160] = "";
    for (int j = 0; j < mla_registry_table_size; j++) {
        const mla_kernel_version *kv = mla_registry_table[j];
        if (!kv || kv->design != design) continue;
        char r[160];
        mla_arch_allows(kv->target, cc_major, cc_minor, r, sizeof r);
        const char *name = kv->name ? kv->name : "(unnamed)";
        if (prev[0] && strcmp(r, prev) == 0) {
            why_append(why, why_len, ", %s", name);
            continue;
        }
        if (prev[0]) why_append(why, why_len, " skipped (%s);", prev);
        why_append(why, why_len, " %s", name);
        snprintf(prev, sizeof prev, "%s", r[0] ? r : "not allowed");
    }
    if (prev[0]) why_append(why, why_len, " skipped (%s);", prev);
    size_t n = why && why_len ? strlen(why) : 0;
    if (n && why[n - 1] == ';') why[n - 1] = '\0';
    return NULL;
}

/* ---- resources ----------------------------------------------------------------------------- */

/* "240 KB", or "240.5 KB" when not a whole number of KB. */
static void fmt_kb(char *buf, size_t len, size_t bytes)
{
    if (bytes % 1024 == 0)
        snprintf(buf, len, "%zu KB", bytes / 1024);
    else
        snprintf(buf, len, "%.1f KB", (double)bytes / 1024.0);
}

int mla_check_stage_resources(const char *stage, const mla_stage_config *cfg, const mla_func_attrs *attrs,
                              const mla_device_info *dev, char *why, size_t why_len)
{
    char dummy[8];
    if (!why || !why_len) {
        why = dummy;
        why_len = sizeof dummy;
    }
    why[0] = '\0';
    if (!stage) stage = "?";
    if (!cfg || !dev) {
        snprintf(why, why_len, "stage %s: no launch configuration or device to check", stage);
        return 0;
    }

    /* Launch shape. */
    unsigned long long threads = (unsigned long long)cfg->block[0] * cfg->block[1] * cfg->block[2];
    if (threads == 0 || cfg->grid[0] == 0 || cfg->grid[1] == 0 || cfg->grid[2] == 0) {
        snprintf(why, why_len, "stage %s: empty launch (grid %ux%ux%u, block %ux%ux%u)", stage, cfg->grid[0],
                 cfg->grid[1], cfg->grid[2], cfg->block[0], cfg->block[1], cfg->block[2]);
        return 0;
    }
    if (cfg->grid[0] > 2147483647u || cfg->grid[1] > 65535u || cfg->grid[2] > 65535u) {
        snprintf(why, why_len, "stage %s: grid %ux%ux%u exceeds the CUDA limits (2^31-1 x 65535 x 65535)", stage,
                 cfg->grid[0], cfg->grid[1], cfg->grid[2]);
        return 0;
    }
    if (dev->max_threads_per_block > 0 && threads > (unsigned long long)dev->max_threads_per_block) {
        snprintf(why, why_len, "stage %s: %llu threads per block > %d device limit", stage, threads,
                 dev->max_threads_per_block);
        return 0;
    }
    if (dev->max_threads_per_sm > 0 && threads > (unsigned long long)dev->max_threads_per_sm) {
        snprintf(why, why_len, "stage %s: %llu threads per block > %d threads per SM", stage, threads,
                 dev->max_threads_per_sm);
        return 0;
    }
    if (attrs && attrs->max_threads_per_block > 0 && threads > (unsigned long long)attrs->max_threads_per_block) {
        snprintf(why, why_len, "stage %s: %llu threads per block > %d allowed by the compiled kernel", stage,
                 threads, attrs->max_threads_per_block);
        return 0;
    }

    /* Shared memory: static + dynamic against the opt-in per-block limit (which on sm_80+ is the
     * SM's capacity less the 1 KB the runtime reserves per block, so it also covers "fits on an SM"). */
    size_t smem = cfg->smem_dynamic + (attrs ? attrs->smem_static : 0);
    if (dev->smem_per_block_optin > 0 && smem > dev->smem_per_block_optin) {
        char a[32], b[32];
        fmt_kb(a, sizeof a, smem);
        fmt_kb(b, sizeof b, dev->smem_per_block_optin);
        snprintf(why, why_len, "stage %s: smem %s > %s opt-in (static %zu + dynamic %zu bytes)", stage, a, b,
                 attrs ? attrs->smem_static : (size_t)0, cfg->smem_dynamic);
        return 0;
    }

    /* Registers as compiled: the block limit on the raw count, and one block per SM with the
     * allocation granularity (registers are handed out per warp in units of 256). */
    if (attrs && attrs->num_regs > 0) {
        unsigned long long raw = (unsigned long long)attrs->num_regs * threads;
        if (dev->regs_per_block > 0 && raw > (unsigned long long)dev->regs_per_block) {
            snprintf(why, why_len, "stage %s: %d regs x %llu threads = %llu > %d per block", stage, attrs->num_regs,
                     threads, raw, dev->regs_per_block);
            return 0;
        }
        unsigned long long per_warp = ((unsigned long long)attrs->num_regs * 32 + 255) / 256 * 256;
        unsigned long long alloc = per_warp * ((threads + 31) / 32);
        if (dev->regs_per_sm > 0 && alloc > (unsigned long long)dev->regs_per_sm) {
            snprintf(why, why_len, "stage %s: %d regs x %llu threads = %llu (allocated per warp) > %d per SM",
                     stage, attrs->num_regs, threads, alloc, dev->regs_per_sm);
            return 0;
        }
    }
    /* local_bytes (spills, stack) costs speed, not correctness: not a rejection. */
    return 1;
}

mla_status mla_func_attributes(const void *func, mla_func_attrs *out)
{
    if (!func || !out) return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "mla_func_attributes: NULL argument");
    memset(out, 0, sizeof *out);
    struct cudaFuncAttributes a;
    memset(&a, 0, sizeof a);
    cudaError_t e = cudaFuncGetAttributes(&a, func);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();   /* not sticky for later calls */
        return mla_fail(MLA_STATUS_CUDA_ERROR, "cudaFuncGetAttributes: %s", cudaGetErrorString(e));
    }
    out->num_regs = a.numRegs;
    out->smem_static = a.sharedSizeBytes;
    out->local_bytes = a.localSizeBytes;
    out->max_threads_per_block = a.maxThreadsPerBlock;
    out->binary_version = a.binaryVersion;
    out->ptx_version = a.ptxVersion;
    return MLA_STATUS_OK;
}

int mla_validate_tiling(const mla_kernel_version *kv, const mla_tiling *t, const mla_problem *pb,
                        const mla_device_info *dev, const mla_func_attrs *fake_attrs, char *why, size_t why_len)
{
    char dummy[8];
    if (!why || !why_len) {
        why = dummy;
        why_len = sizeof dummy;
    }
    why[0] = '\0';
    if (!kv || !t || !pb || !dev) {
        snprintf(why, why_len, "validate: kernel version, tiling, problem and device are all required");
        return 0;
    }
    if (kv->validate && !kv->validate(t, pb, dev, why, why_len)) {
        if (!why[0]) snprintf(why, why_len, "%s: the kernel's rules reject this tiling", kv->name);
        return 0;
    }
    if (!kv->stage_config) return 1;
    int nst = kv->num_stages < MLA_MAX_STAGES ? kv->num_stages : MLA_MAX_STAGES;
    for (int i = 0; i < nst; i++) {
        mla_stage_config cfg;
        memset(&cfg, 0, sizeof cfg);
        if (!kv->stage_config(t, pb, dev, i, &cfg)) continue;   /* stage does not run */
        char sname[32];
        const char *stage = kv->stage_names[i];
        if (!stage) {
            snprintf(sname, sizeof sname, "%d", i);
            stage = sname;
        }
        mla_func_attrs a;
        const mla_func_attrs *attrs;
        if (dev->present) {
            if (mla_func_attributes(cfg.func, &a) != MLA_STATUS_OK) {
                snprintf(why, why_len, "stage %s: %s", stage, mla_last_error());
                return 0;
            }
            attrs = &a;
        } else if (fake_attrs) {
            attrs = fake_attrs;
        } else {
            continue;   /* no compiled resources to check against: the resource step is skipped */
        }
        if (!mla_check_stage_resources(stage, &cfg, attrs, dev, why, why_len)) return 0;
    }
    return 1;
}

int mla_name_in_list(const char *list, const char *name)
{
    if (!list || !name) return 0;
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0) return 1;
        if (!e) break;
        p = e + 1;
    }
    return 0;
}
