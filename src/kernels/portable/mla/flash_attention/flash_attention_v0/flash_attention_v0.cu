// flash_attention_v0 (portable, sm_80+): decompressed multi-head attention, q/k dim d+p = 192,
// v dim d = 128 (MLA_SPEC.md design 1).
//
// Schedule: grid (row blocks of the s queries, KV splits, request x head); each CTA runs
// attn_tile (attn_core.cuh) for one head with its own K and V tiles streaming through a
// cp.async ring (K rows of 192, V rows of 128, both padded). Every head reads its own K/V, so
// at small s this design is memory-bound (64 KB per token over 128 heads). With splits > 1 the
// CTAs write fp32 partials merged by flash_attention_v0_combine.
// Tiling knobs: block_m, block_n, warps, stages, splits (0 = from the SM count).
#include "policies.cuh"
#include "kernel_host.cuh"

namespace {
using namespace mla;

template <int BM, int BN, int W, int ST>
using Cfg = AttnCfg<128, 64, 128, false, BM, BN, W / (BM / 16), ST>;

template <class C>
__global__ void __launch_bounds__(C::NTHREADS)
flash_attention_v0(const __grid_constant__ DenseArgs a, int nsplits, float scale_log2, TileOut to)
{
    extern __shared__ __align__(16) char smem[];
    DensePolicy pol(&a, blockIdx.z / a.h, blockIdx.z % a.h);
    attn_tile<C>(pol, blockIdx.x * C::BM, blockIdx.y, nsplits, scale_log2, to, smem);
}

__global__ void __launch_bounds__(256)
flash_attention_v0_combine(const __grid_constant__ DenseArgs a, int nsplits, long long rows,
                           const float *ws_o, const float *ws_lse)
{
    const long long row = (long long)blockIdx.x * 8 + (threadIdx.x >> 5);
    if (row >= rows) return;
    combine_row<128>(ws_o, ws_lse, nsplits, row, out_at(a.out, a.os, row, a.s, a.h),
                     lse_at_row(a.lse, row, a.s, a.h));
}

template <int BM, int BN, int W, int ST>
void launch_main(dim3 grid, size_t smem, cudaStream_t st, const DenseArgs &a, int ns, float sl2,
                 TileOut to)
{
    flash_attention_v0<Cfg<BM, BN, W, ST>><<<grid, W * 32, smem, st>>>(a, ns, sl2, to);
}

#define TILE(bm, bn, w, st)                                                                      \
    {bm, bn, w, st, (const void *)flash_attention_v0<Cfg<bm, bn, w, st>>,                        \
     Cfg<bm, bn, w, st>::SMEM_BYTES, launch_main<bm, bn, w, st>}
const TileInst<DenseArgs> kInst[] = {
    TILE(64, 64, 4, 2), TILE(64, 64, 8, 3), TILE(128, 64, 8, 2), TILE(16, 64, 4, 3),
    // Decode tiles with less shared memory, so that 2-3 CTAs share an SM: at small s every
    // head streams its own K/V and the kernel needs bytes in flight, not math.
    TILE(16, 64, 4, 2), TILE(16, 32, 2, 3), TILE(32, 64, 4, 2),
};
#undef TILE
const mla_tiling kCandidates[] = {
    {64, 64, 4, 2, 0}, {64, 64, 8, 3, 0}, {128, 64, 8, 2, 0}, {16, 64, 4, 3, 0},
    {16, 64, 4, 2, 0}, {16, 32, 2, 3, 0}, {32, 64, 4, 2, 0},
};

bool resolve(const mla_tiling *t, const mla_problem *pb, const mla_device_info *dev,
             const TileInst<DenseArgs> **inst, SplitPlan *sp)
{
    *inst = find_tile(kInst, t);
    if (!*inst) return false;
    const int row_blocks = (pb->s + t->block_m - 1) / t->block_m;
    *sp = plan_splits(row_blocks, (long long)pb->b * pb->h, pb->t, t->block_n, (*inst)->smem,
                      t->splits, dev, (long long)pb->b * pb->s * pb->h, 128, false);
    return true;
}

int validate(const mla_tiling *t, const mla_problem *pb, const mla_device_info *dev, char *w, size_t wl)
{
    if (pb->design != MLA_DESIGN_FLASH_ATTENTION)
        return why(w, wl, "flash_attention_v0 runs the flash_attention design only");
    if (pb->d != 128 || pb->p != 64) return why(w, wl, "flash_attention_v0 is compiled for d=128, p=64");
    if (!find_tile(kInst, t))
        return why(w, wl, "tile block_m=%d block_n=%d warps=%d stages=%d is not compiled in flash_attention_v0",
                   t->block_m, t->block_n, t->warps, t->stages);
    if ((long long)pb->b * pb->h > 65535) return why(w, wl, "b*h = %lld > 65535 (grid z)", (long long)pb->b * pb->h);
    if (t->splits < 0 || t->splits > 64) return why(w, wl, "splits=%d outside 0..64", t->splits);
    return 1;
}

int stage_config(const mla_tiling *t, const mla_problem *pb, const mla_device_info *dev, int stage,
                 mla_stage_config *cfg)
{
    const TileInst<DenseArgs> *inst;
    SplitPlan r;
    if (!resolve(t, pb, dev, &inst, &r)) return 0;
    if (stage == 0) {
        set_cfg(cfg, inst->fn, r.grid.x, r.grid.y, r.grid.z, t->warps * 32, inst->smem);
        return 1;
    }
    if (stage == 1 && r.splits > 1) {
        set_cfg(cfg, (const void *)flash_attention_v0_combine, (unsigned)((r.rows + 7) / 8), 1, 1, 256, 0);
        return 1;
    }
    return 0;
}

size_t workspace_bytes(const mla_tiling *t, const mla_problem *pb, const mla_device_info *dev)
{
    const TileInst<DenseArgs> *inst;
    SplitPlan r;
    return resolve(t, pb, dev, &inst, &r) ? r.ws_o + r.ws_lse : 0;
}

mla_status prepare(const mla_tiling *t, const mla_problem *pb, const mla_device_info *dev)
{
    const TileInst<DenseArgs> *i = find_tile(kInst, t);
    if (!i) return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "flash_attention_v0: tile not compiled");
    return set_smem(i->fn, i->smem, "flash_attention_v0: cudaFuncSetAttribute");
}

mla_status launch(const mla_tiling *t, const mla_launch_args *args)
{
    const mla_problem *pb = args->pb;
    const mla_flash_attention_tensors *x = (const mla_flash_attention_tensors *)args->tensors;
    const TileInst<DenseArgs> *inst;
    SplitPlan r;
    if (!resolve(t, pb, args->dev, &inst, &r))
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "flash_attention_v0: tile not compiled");
    if (args->workspace_bytes < r.ws_o + r.ws_lse)
        return mla_fail(MLA_STATUS_WORKSPACE_TOO_SMALL, "flash_attention_v0: workspace %zu < %zu bytes",
                        args->workspace_bytes, r.ws_o + r.ws_lse);
    DenseArgs a;
    a.qa = (const bf16 *)x->q;
    a.qb = (const bf16 *)x->q + 128;
    a.ka = (const bf16 *)x->k;
    a.kb = (const bf16 *)x->k + 128;
    a.v = (const bf16 *)x->v;
    for (int i = 0; i < 3; ++i) {
        a.qa_s[i] = a.qb_s[i] = x->q_strides[i];
        a.ka_s[i] = a.kb_s[i] = x->k_strides[i];
        a.v_s[i] = x->v_strides[i];
        a.os[i] = x->out_strides[i];
    }
    a.seqlens = x->seqlens;
    a.s = pb->s; a.h = pb->h; a.t = pb->t; a.causal = pb->causal;
    a.hybrid = 0; a.n_new = 0;
    a.out = (bf16 *)x->out;
    a.lse = x->lse;
    TileOut to;
    to.partial = r.splits > 1;
    to.ws_o = (float *)args->workspace;
    to.ws_lse = (float *)((char *)args->workspace + r.ws_o);
    cudaStream_t st = (cudaStream_t)args->stream;
    if (args->stage_mask & 1u) {
        inst->launch(r.grid, inst->smem, st, a, r.splits, pb->scale * 1.4426950408889634f, to);
        mla_status e = check_launch("flash_attention_v0 launch");
        if (e != MLA_STATUS_OK) return e;
    }
    if (r.splits > 1 && (args->stage_mask & 2u)) {
        flash_attention_v0_combine<<<(unsigned)((r.rows + 7) / 8), 256, 0, st>>>(a, r.splits, r.rows, to.ws_o, to.ws_lse);
        mla_status e = check_launch("flash_attention_v0_combine launch");
        if (e != MLA_STATUS_OK) return e;
    }
    return MLA_STATUS_OK;
}

}  // namespace

extern "C" const mla_kernel_version mla_kv_flash_attention_v0 = {
    "flash_attention_v0", MLA_DESIGN_FLASH_ATTENTION, 0, MLA_TIER_PORTABLE, MLA_TARGET_SM80_PLUS,
    "portable baseline: per-head mma.sync tiles, cp.async K/V ring, split-KV + combine",
    2, {"main", "combine", nullptr, nullptr},
    (int)(sizeof kCandidates / sizeof kCandidates[0]), kCandidates,
    validate, stage_config, workspace_bytes, prepare, launch,
};
