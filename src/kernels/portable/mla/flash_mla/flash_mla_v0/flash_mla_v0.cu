// flash_mla_v0 (portable, sm_80+): absorbed MLA attention over the paged latent cache.
//
// Computes out[b, s, h, 512] = softmax(scale * q . c) @ c[:512] and lse[b, h, s] (MLA_SPEC.md
// design 2). Schedule: grid (row blocks of the s*h rows of a request, KV splits, requests); each
// CTA runs attn_tile (attn_core.cuh) with Q (BM x 576) resident in shared memory and the KV
// pages streaming through a cp.async ring; every row of a CTA reads the same tokens, so one KV
// tile serves BM (query, head) rows. With splits > 1 each CTA writes a normalised fp32 partial
// and its lse, and flash_mla_v0_combine merges them (a warp per row).
// Tiling knobs: block_m (rows per CTA), block_n (tokens per stage), warps, stages, splits
// (0 = chosen from the SM count so the grid fills whole waves).
#include "policies.cuh"
#include "kernel_host.cuh"

namespace {
using namespace mla;

template <int BM, int BN, int W, int ST>
using Cfg = AttnCfg<512, 64, 512, true, BM, BN, W / (BM / 16), ST>;

template <class C>
__global__ void __launch_bounds__(C::NTHREADS)
flash_mla_v0(const __grid_constant__ LatentArgs a, int nsplits, float scale_log2, TileOut to)
{
    extern __shared__ __align__(16) char smem[];
    LatentPolicy<512, 64> pol(&a, blockIdx.z);
    attn_tile<C>(pol, blockIdx.x * C::BM, blockIdx.y, nsplits, scale_log2, to, smem);
}

__global__ void __launch_bounds__(256)
flash_mla_v0_combine(const __grid_constant__ LatentArgs a, int nsplits, long long rows,
                     const float *ws_o, const float *ws_lse)
{
    const long long row = (long long)blockIdx.x * 8 + (threadIdx.x >> 5);
    if (row >= rows) return;
    combine_row<512>(ws_o, ws_lse, nsplits, row, out_at(a.out, a.os, row, a.s, a.h),
                     lse_at_row(a.lse, row, a.s, a.h));
}

template <int BM, int BN, int W, int ST>
void launch_main(dim3 grid, size_t smem, cudaStream_t st, const LatentArgs &a, int ns, float sl2,
                 TileOut to)
{
    flash_mla_v0<Cfg<BM, BN, W, ST>><<<grid, W * 32, smem, st>>>(a, ns, sl2, to);
}

// The compiled tiles. 64x64x2 needs ~233 KB of shared memory: it is listed so that the
// runtime's validation rejects it with its reason on every current GPU (227 KB opt-in).
#define TILE(bm, bn, w, st) \
    {bm, bn, w, st, (const void *)flash_mla_v0<Cfg<bm, bn, w, st>>, Cfg<bm, bn, w, st>::SMEM_BYTES, launch_main<bm, bn, w, st>}
const TileInst<LatentArgs> kInst[] = {
    TILE(64, 32, 8, 2), TILE(64, 32, 8, 3), TILE(32, 64, 8, 2), TILE(16, 64, 4, 2), TILE(64, 64, 8, 2),
};
#undef TILE
const mla_tiling kCandidates[] = {
    {64, 32, 8, 2, 0}, {64, 32, 8, 3, 0}, {32, 64, 8, 2, 0}, {16, 64, 4, 2, 0}, {64, 64, 8, 2, 0},
};

bool resolve(const mla_tiling *t, const mla_problem *pb, const mla_device_info *dev,
             const TileInst<LatentArgs> **inst, SplitPlan *sp)
{
    *inst = find_tile(kInst, t);
    if (!*inst) return false;
    const int row_blocks = (pb->s * pb->h + t->block_m - 1) / t->block_m;
    *sp = plan_splits(row_blocks, pb->b, pb->t, t->block_n, (*inst)->smem, t->splits, dev,
                      (long long)pb->b * pb->s * pb->h, 512, false);
    return true;
}

int validate(const mla_tiling *t, const mla_problem *pb, const mla_device_info *dev, char *w, size_t wl)
{
    if (pb->design != MLA_DESIGN_FLASH_MLA) return why(w, wl, "flash_mla_v0 runs the flash_mla design only");
    if (pb->k != 512 || pb->p != 64 || pb->page_size != 64)
        return why(w, wl, "flash_mla_v0 is compiled for k=512, p=64, page 64");
    if (!find_tile(kInst, t))
        return why(w, wl, "tile block_m=%d block_n=%d warps=%d stages=%d is not compiled in flash_mla_v0",
                   t->block_m, t->block_n, t->warps, t->stages);
    if (t->splits < 0 || t->splits > 64) return why(w, wl, "splits=%d outside 0..64", t->splits);
    return 1;
}

int stage_config(const mla_tiling *t, const mla_problem *pb, const mla_device_info *dev, int stage,
                 mla_stage_config *cfg)
{
    const TileInst<LatentArgs> *inst;
    SplitPlan r;
    if (!resolve(t, pb, dev, &inst, &r)) return 0;
    if (stage == 0) {
        set_cfg(cfg, inst->fn, r.grid.x, r.grid.y, r.grid.z, t->warps * 32, inst->smem);
        return 1;
    }
    if (stage == 1 && r.splits > 1) {
        set_cfg(cfg, (const void *)flash_mla_v0_combine, (unsigned)((r.rows + 7) / 8), 1, 1, 256, 0);
        return 1;
    }
    return 0;
}

size_t workspace_bytes(const mla_tiling *t, const mla_problem *pb, const mla_device_info *dev)
{
    const TileInst<LatentArgs> *inst;
    SplitPlan r;
    if (!resolve(t, pb, dev, &inst, &r)) return 0;
    return r.ws_o + r.ws_lse;
}

mla_status prepare(const mla_tiling *t, const mla_problem *pb, const mla_device_info *dev)
{
    const TileInst<LatentArgs> *i = find_tile(kInst, t);
    if (!i) return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "flash_mla_v0: tile not compiled");
    return set_smem(i->fn, i->smem, "flash_mla_v0: cudaFuncSetAttribute");
}

mla_status launch(const mla_tiling *t, const mla_launch_args *args)
{
    const mla_problem *pb = args->pb;
    const mla_flash_mla_tensors *x = (const mla_flash_mla_tensors *)args->tensors;
    const TileInst<LatentArgs> *inst;
    SplitPlan r;
    if (!resolve(t, pb, args->dev, &inst, &r)) return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "flash_mla_v0: tile not compiled");
    if (args->workspace_bytes < r.ws_o + r.ws_lse)
        return mla_fail(MLA_STATUS_WORKSPACE_TOO_SMALL, "flash_mla_v0: workspace %zu < %zu bytes",
                        args->workspace_bytes, r.ws_o + r.ws_lse);
    LatentArgs a;
    a.qa = (const bf16 *)x->q;
    a.qb = (const bf16 *)x->q + 512;
    for (int i = 0; i < 3; ++i) a.qa_s[i] = a.qb_s[i] = x->q_strides[i];
    a.cache = (const bf16 *)x->cache;
    a.block_table = x->block_table;
    a.bt_stride = x->block_table_stride ? x->block_table_stride : x->max_pages;
    a.page = pb->page_size;
    a.seqlens = x->seqlens;
    a.s = pb->s; a.h = pb->h; a.t = pb->t; a.causal = pb->causal; a.n_new = 0;
    a.out = (bf16 *)x->out;
    for (int i = 0; i < 3; ++i) a.os[i] = x->out_strides[i];
    a.lse = x->lse;
    TileOut to;
    to.partial = r.splits > 1;
    to.ws_o = (float *)args->workspace;
    to.ws_lse = (float *)((char *)args->workspace + r.ws_o);
    cudaStream_t st = (cudaStream_t)args->stream;
    const float sl2 = pb->scale * 1.4426950408889634f;
    if (args->stage_mask & 1u) {
        inst->launch(r.grid, inst->smem, st, a, r.splits, sl2, to);
        mla_status e = check_launch("flash_mla_v0 launch");
        if (e != MLA_STATUS_OK) return e;
    }
    if (r.splits > 1 && (args->stage_mask & 2u)) {
        flash_mla_v0_combine<<<(unsigned)((r.rows + 7) / 8), 256, 0, st>>>(a, r.splits, r.rows, to.ws_o, to.ws_lse);
        mla_status e = check_launch("flash_mla_v0_combine launch");
        if (e != MLA_STATUS_OK) return e;
    }
    return MLA_STATUS_OK;
}

}  // namespace

extern "C" const mla_kernel_version mla_kv_flash_mla_v0 = {
    "flash_mla_v0", MLA_DESIGN_FLASH_MLA, 0, MLA_TIER_PORTABLE, MLA_TARGET_SM80_PLUS,
    "portable baseline: mma.sync + ldmatrix + cp.async ring, split-KV + combine",
    2, {"main", "combine", nullptr, nullptr},
    (int)(sizeof kCandidates / sizeof kCandidates[0]), kCandidates,
    validate, stage_config, workspace_bytes, prepare, launch,
};
