// Host-side helpers shared by the kernel versions: split-count choice, CUDA error mapping,
// and the table of compiled tile instantiations each version dispatches over.
#pragma once
#include <cuda_runtime.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "error.h"
#include "registry.h"
#include "attn_core.cuh"

namespace mla {

// Splits of the KV range so that base_ctas * splits fills the GPU in whole waves: the
// estimated time ceil(base*s / slots) / s (per unit of work) plus a small cost per split for
// the combine. `slots` = SMs x CTAs per SM. Never more splits than KV tiles.
inline int choose_splits(long long base_ctas, int kv_tiles, int sm_count, int ctas_per_sm,
                         int max_splits)
{
    if (base_ctas <= 0 || kv_tiles <= 1) return 1;
    const long long slots = (long long)sm_count * (ctas_per_sm > 0 ? ctas_per_sm : 1);
    if (base_ctas >= slots) return 1;
    int best = 1;
    double best_cost = 1e30;
    const int lim = kv_tiles < max_splits ? kv_tiles : max_splits;
    for (int s = 1; s <= lim; ++s) {
        const double waves = (double)((base_ctas * s + slots - 1) / slots);
        const double cost = waves / s + 0.03 * (s > 1 ? s : 0) / 8.0;
        if (cost < best_cost - 1e-9) {
            best_cost = cost;
            best = s;
        }
    }
    return best;
}

inline mla_status cuda_fail(cudaError_t e, const char *what)
{
    return mla_fail(MLA_STATUS_CUDA_ERROR, "%s: %s (%s)", what, cudaGetErrorString(e),
                    cudaGetErrorName(e));
}

inline size_t align_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

inline void set_cfg(mla_stage_config *cfg, const void *fn, unsigned gx, unsigned gy, unsigned gz,
                    unsigned threads, size_t smem)
{
    cfg->func = fn;
    cfg->grid[0] = gx; cfg->grid[1] = gy; cfg->grid[2] = gz;
    cfg->block[0] = threads; cfg->block[1] = 1; cfg->block[2] = 1;
    cfg->smem_dynamic = smem;
}

inline int why(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
inline int why(char *buf, size_t len, const char *fmt, ...)
{
    if (buf && len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(buf, len, fmt, ap);
        va_end(ap);
    }
    return 0;
}

}  // namespace mla

namespace mla {

// One compiled tile of a version: the tiling it implements and how to launch it.
template <class Args>
struct TileInst {
    int bm, bn, warps, stages;
    const void *fn;
    size_t smem;
    void (*launch)(dim3 grid, size_t smem, cudaStream_t st, const Args &a, int nsplits,
                   float scale_log2, TileOut to);
};

template <class Args, size_t N>
const TileInst<Args> *find_tile(const TileInst<Args> (&tab)[N], const mla_tiling *t)
{
    for (size_t i = 0; i < N; ++i)
        if (tab[i].bm == t->block_m && tab[i].bn == t->block_n && tab[i].warps == t->warps &&
            tab[i].stages == t->stages)
            return &tab[i];
    return nullptr;
}

// Grid and split-KV workspace of one attention stage.
struct SplitPlan {
    int splits;
    dim3 grid;           // (row blocks, splits, groups)
    long long rows;      // global rows (b * s * h)
    size_t ws_o, ws_lse; // partial output / lse bytes (0 when not partial)
};

// row_blocks x groups CTAs before splitting; kv_tokens the longest KV range; always_partial:
// the stage feeds a combine even with one split (mla_var6_plus).
inline SplitPlan plan_splits(int row_blocks, long long groups, int kv_tokens, int bn, size_t smem,
                             int requested, const mla_device_info *dev, long long rows, int dv,
                             bool always_partial)
{
    SplitPlan p;
    const int kv_tiles = kv_tokens > 0 ? (kv_tokens + bn - 1) / bn : 1;
    int per_sm = dev && dev->smem_per_sm ? (int)(dev->smem_per_sm / (smem + 1024)) : 1;
    if (per_sm < 1) per_sm = 1;
    const int sms = dev && dev->sm_count > 0 ? dev->sm_count : 132;
    p.splits = requested > 0 ? (requested < kv_tiles ? requested : kv_tiles)
                             : choose_splits((long long)row_blocks * groups, kv_tiles, sms, per_sm, 32);
    if (p.splits < 1) p.splits = 1;
    p.grid = dim3(row_blocks, p.splits, (unsigned)groups);
    p.rows = rows;
    const bool partial = always_partial || p.splits > 1;
    p.ws_o = partial ? align_up((size_t)rows * p.splits * dv * sizeof(float), 256) : 0;
    p.ws_lse = partial ? align_up((size_t)rows * p.splits * sizeof(float), 256) : 0;
    return p;
}

inline mla_status set_smem(const void *fn, size_t smem, const char *name)
{
    cudaError_t e = cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    return e == cudaSuccess ? MLA_STATUS_OK : cuda_fail(e, name);
}

inline mla_status check_launch(const char *name)
{
    cudaError_t e = cudaGetLastError();
    return e == cudaSuccess ? MLA_STATUS_OK : cuda_fail(e, name);
}

}  // namespace mla
