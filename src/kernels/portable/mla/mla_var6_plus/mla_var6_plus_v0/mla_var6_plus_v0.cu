// mla_var6_plus_v0 (portable, sm_80+): the hybrid design (MLA_SPEC.md design 3). The oldest
// o_r = max(t_r - n, 0) tokens of a request stay in the paged latent cache (absorbed, all heads
// share each token); the newest n are held decompressed per head. One softmax over both.
//
// Schedule, three stages:
//   latent       - attn_tile over the old tokens with LatentPolicy (as flash_mla_v0, q = [q_lat,
//                  q_rope]), always writing normalised fp32 partials + lse per split;
//   decompressed - attn_tile over the new slots with DensePolicy (as flash_attention_v0, keys =
//                  [k_nope, shared k_rope]), partials + lse per split;
//   combine      - per (head, 16 (request, query) pairs): merge the latent splits, project the
//                  merged latent row through w_uv[h] (fp32 FMA, w_uv streamed from L2 once per 16
//                  rows), merge the decompressed splits, and merge the two by their lse.
// Tiling knobs (block_m, block_n, warps, stages, splits) are those of the latent stage; the
// decompressed stage picks its tile from s (see kDen), splits auto.
#include "policies.cuh"
#include "kernel_host.cuh"

namespace {
using namespace mla;

template <int BM, int BN, int W, int ST>
using LatCfg = AttnCfg<512, 64, 512, true, BM, BN, W / (BM / 16), ST>;
template <int BM, int BN, int W, int ST>
using DenCfg = AttnCfg<128, 64, 128, false, BM, BN, W / (BM / 16), ST>;

template <class C>
__global__ void __launch_bounds__(C::NTHREADS)
mla_var6_plus_v0_latent(const __grid_constant__ LatentArgs a, int nsplits, float scale_log2, TileOut to)
{
    extern __shared__ __align__(16) char smem[];
    LatentPolicy<512, 64> pol(&a, blockIdx.z);
    attn_tile<C>(pol, blockIdx.x * C::BM, blockIdx.y, nsplits, scale_log2, to, smem);
}

template <class C>
__global__ void __launch_bounds__(C::NTHREADS)
mla_var6_plus_v0_decompressed(const __grid_constant__ DenseArgs a, int nsplits, float scale_log2, TileOut to)
{
    extern __shared__ __align__(16) char smem[];
    DensePolicy pol(&a, blockIdx.z / a.h, blockIdx.z % a.h);
    attn_tile<C>(pol, blockIdx.x * C::BM, blockIdx.y, nsplits, scale_log2, to, smem);
}

struct CombineArgs {
    const float *old_o, *old_lse;   // [rows][so][512], [rows][so]
    const float *new_o, *new_lse;   // [rows][sn][128], [rows][sn]
    int so, sn;
    const bf16 *w_uv;               // [h, 512, 128]
    int b, s, h;
    bf16 *out; long long os[3];
    float *lse;
};

constexpr int kPairs = 16;  // (request, query) pairs of one head per combine CTA

// Merge nsplits partials of width DV into dst (normalised); returns the merged lse (-inf: empty).
template <int DV>
__device__ float merge_splits(const float *po, const float *pl, int nsplits, float *dst, int lane)
{
    float mx = -CUDART_INF_F;
    for (int i = lane; i < nsplits; i += 32) mx = fmaxf(mx, pl[i]);
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
    if (mx == -CUDART_INF_F) {
        for (int c = lane; c < DV; c += 32) dst[c] = 0.f;
        return -CUDART_INF_F;
    }
    float den = 0.f;
    for (int i = 0; i < nsplits; ++i) den += __expf(pl[i] - mx);
    const float inv = 1.f / den;
    for (int c = lane; c < DV; c += 32) {
        float acc = 0.f;
        for (int i = 0; i < nsplits; ++i) {
            const float w = __expf(pl[i] - mx);
            if (w != 0.f) acc += w * po[(long long)i * DV + c];
        }
        dst[c] = acc * inv;
    }
    return mx + logf(den);
}

__global__ void __launch_bounds__(128)
mla_var6_plus_v0_combine(const __grid_constant__ CombineArgs c)
{
    __shared__ float lat[kPairs][512];
    __shared__ float nw[kPairs][128];
    __shared__ float lse_o[kPairs], lse_n[kPairs];
    const int hi = blockIdx.y, warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const long long p0 = (long long)blockIdx.x * kPairs, npairs = (long long)c.b * c.s;

    for (int i = warp; i < kPairs; i += 4) {
        const long long p = p0 + i;
        if (p >= npairs) {
            for (int k = lane; k < 512; k += 32) lat[i][k] = 0.f;
            for (int k = lane; k < 128; k += 32) nw[i][k] = 0.f;
            if (lane == 0) lse_o[i] = lse_n[i] = -CUDART_INF_F;
            continue;
        }
        const long long row = p * c.h + hi;
        const float lo = merge_splits<512>(c.old_o + row * c.so * 512LL, c.old_lse + row * c.so, c.so, lat[i], lane);
        const float ln = merge_splits<128>(c.new_o + row * c.sn * 128LL, c.new_lse + row * c.sn, c.sn, nw[i], lane);
        if (lane == 0) {
            lse_o[i] = lo;
            lse_n[i] = ln;
        }
    }
    __syncthreads();

    // Latent part through w_uv[h]: thread d owns output column d for all kPairs rows.
    const int d = threadIdx.x;
    float acc[kPairs];
#pragma unroll
    for (int i = 0; i < kPairs; ++i) acc[i] = 0.f;
    const bf16 *w = c.w_uv + (long long)hi * 512 * 128 + d;
#pragma unroll 4
    for (int k = 0; k < 512; ++k) {
        const float wv = __bfloat162float(w[k * 128]);
#pragma unroll
        for (int i = 0; i < kPairs; ++i) acc[i] += lat[i][k] * wv;
    }

#pragma unroll
    for (int i = 0; i < kPairs; ++i) {
        const long long p = p0 + i;
        if (p >= npairs) break;
        const long long r = p / c.s;
        const int si = (int)(p % c.s);
        const float lo = lse_o[i], ln = lse_n[i];
        const float M = fmaxf(lo, ln);
        float val = 0.f, lse = -CUDART_INF_F;
        if (M != -CUDART_INF_F) {
            const float a = __expf(lo - M), b2 = __expf(ln - M);
            val = (a * acc[i] + b2 * nw[i][d]) / (a + b2);
            lse = M + logf(a + b2);
        }
        c.out[r * c.os[0] + si * c.os[1] + hi * c.os[2] + d] = __float2bfloat16(val);
        if (c.lse && d == 0) c.lse[(r * c.h + hi) * c.s + si] = lse;
    }
}

template <int BM, int BN, int W, int ST>
void launch_lat(dim3 grid, size_t smem, cudaStream_t st, const LatentArgs &a, int ns, float sl2, TileOut to)
{
    mla_var6_plus_v0_latent<LatCfg<BM, BN, W, ST>><<<grid, W * 32, smem, st>>>(a, ns, sl2, to);
}
template <int BM, int BN, int W, int ST>
void launch_den(dim3 grid, size_t smem, cudaStream_t st, const DenseArgs &a, int ns, float sl2, TileOut to)
{
    mla_var6_plus_v0_decompressed<DenCfg<BM, BN, W, ST>><<<grid, W * 32, smem, st>>>(a, ns, sl2, to);
}

#define LAT(bm, bn, w, st)                                                                       \
    {bm, bn, w, st, (const void *)mla_var6_plus_v0_latent<LatCfg<bm, bn, w, st>>,                \
     LatCfg<bm, bn, w, st>::SMEM_BYTES, launch_lat<bm, bn, w, st>}
const TileInst<LatentArgs> kLat[] = {LAT(64, 32, 8, 2), LAT(64, 32, 8, 3), LAT(32, 64, 8, 2), LAT(16, 64, 4, 2)};
#undef LAT
#define DEN(bm, bn, w, st)                                                                       \
    {bm, bn, w, st, (const void *)mla_var6_plus_v0_decompressed<DenCfg<bm, bn, w, st>>,          \
     DenCfg<bm, bn, w, st>::SMEM_BYTES, launch_den<bm, bn, w, st>}
// One decompressed tile per range of s: the flash_attention_v0 tiles its autotuner picked on
// the H200 at b=32, t=4096 (2026-11-29): 16x64x4x2 up to s=16, 32x64x4x2 at s=32, 64x64x8x3 at
// s=64, 128x64x8x2 at s=128.
const TileInst<DenseArgs> kDen[] = {DEN(16, 64, 4, 2), DEN(32, 64, 4, 2), DEN(64, 64, 8, 3), DEN(128, 64, 8, 2)};
#undef DEN
const mla_tiling kCandidates[] = {
    {64, 32, 8, 2, 0}, {64, 32, 8, 3, 0}, {32, 64, 8, 2, 0}, {16, 64, 4, 2, 0},
};

struct Plan6 {
    const TileInst<LatentArgs> *lat;
    const TileInst<DenseArgs> *den;
    SplitPlan so, sn;
    dim3 comb_grid;
};

bool resolve(const mla_tiling *t, const mla_problem *pb, const mla_device_info *dev, Plan6 *p)
{
    p->lat = find_tile(kLat, t);
    if (!p->lat) return false;
    p->den = pb->s <= 16 ? &kDen[0] : pb->s <= 32 ? &kDen[1] : pb->s <= 64 ? &kDen[2] : &kDen[3];
    const long long rows = (long long)pb->b * pb->s * pb->h;
    const int o_max = pb->t - pb->n > 0 ? pb->t - pb->n : 0;
    p->so = plan_splits((pb->s * pb->h + t->block_m - 1) / t->block_m, pb->b, o_max, t->block_n,
                        p->lat->smem, t->splits, dev, rows, 512, true);
    p->sn = plan_splits((pb->s + p->den->bm - 1) / p->den->bm, (long long)pb->b * pb->h, pb->n,
                        p->den->bn, p->den->smem, 0, dev, rows, 128, true);
    p->comb_grid = dim3((unsigned)(((long long)pb->b * pb->s + kPairs - 1) / kPairs), pb->h, 1);
    return true;
}

int validate(const mla_tiling *t, const mla_problem *pb, const mla_device_info *dev, char *w, size_t wl)
{
    if (pb->design != MLA_DESIGN_MLA_VAR6_PLUS)
        return why(w, wl, "mla_var6_plus_v0 runs the mla_var6_plus design only");
    if (pb->k != 512 || pb->d != 128 || pb->p != 64 || pb->page_size != 64)
        return why(w, wl, "mla_var6_plus_v0 is compiled for k=512, d=128, p=64, page 64");
    if (!find_tile(kLat, t))
        return why(w, wl, "tile block_m=%d block_n=%d warps=%d stages=%d is not compiled in mla_var6_plus_v0",
                   t->block_m, t->block_n, t->warps, t->stages);
    if ((long long)pb->b * pb->h > 65535) return why(w, wl, "b*h = %lld > 65535 (grid z)", (long long)pb->b * pb->h);
    if (t->splits < 0 || t->splits > 64) return why(w, wl, "splits=%d outside 0..64", t->splits);
    return 1;
}

int stage_config(const mla_tiling *t, const mla_problem *pb, const mla_device_info *dev, int stage,
                 mla_stage_config *cfg)
{
    Plan6 p;
    if (!resolve(t, pb, dev, &p)) return 0;
    if (stage == 0) {
        set_cfg(cfg, p.lat->fn, p.so.grid.x, p.so.grid.y, p.so.grid.z, p.lat->warps * 32, p.lat->smem);
        return 1;
    }
    if (stage == 1) {
        set_cfg(cfg, p.den->fn, p.sn.grid.x, p.sn.grid.y, p.sn.grid.z, p.den->warps * 32, p.den->smem);
        return 1;
    }
    if (stage == 2) {
        set_cfg(cfg, (const void *)mla_var6_plus_v0_combine, p.comb_grid.x, p.comb_grid.y, 1, 128, 0);
        return 1;
    }
    return 0;
}

size_t workspace_bytes(const mla_tiling *t, const mla_problem *pb, const mla_device_info *dev)
{
    Plan6 p;
    return resolve(t, pb, dev, &p) ? p.so.ws_o + p.so.ws_lse + p.sn.ws_o + p.sn.ws_lse : 0;
}

mla_status prepare(const mla_tiling *t, const mla_problem *pb, const mla_device_info *dev)
{
    Plan6 p;
    if (!resolve(t, pb, dev, &p)) return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "mla_var6_plus_v0: tile not compiled");
    mla_status s = set_smem(p.lat->fn, p.lat->smem, "mla_var6_plus_v0_latent: cudaFuncSetAttribute");
    return s != MLA_STATUS_OK ? s : set_smem(p.den->fn, p.den->smem, "mla_var6_plus_v0_decompressed: cudaFuncSetAttribute");
}

mla_status launch(const mla_tiling *t, const mla_launch_args *args)
{
    const mla_problem *pb = args->pb;
    const mla_var6_plus_tensors *x = (const mla_var6_plus_tensors *)args->tensors;
    Plan6 p;
    if (!resolve(t, pb, args->dev, &p))
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "mla_var6_plus_v0: tile not compiled");
    const size_t need = p.so.ws_o + p.so.ws_lse + p.sn.ws_o + p.sn.ws_lse;
    if (args->workspace_bytes < need)
        return mla_fail(MLA_STATUS_WORKSPACE_TOO_SMALL, "mla_var6_plus_v0: workspace %zu < %zu bytes",
                        args->workspace_bytes, need);
    char *ws = (char *)args->workspace;
    TileOut to_old = {(float *)ws, (float *)(ws + p.so.ws_o), 1};
    ws += p.so.ws_o + p.so.ws_lse;
    TileOut to_new = {(float *)ws, (float *)(ws + p.sn.ws_o), 1};
    const float sl2 = pb->scale * 1.4426950408889634f;
    cudaStream_t st = (cudaStream_t)args->stream;

    if (args->stage_mask & 1u) {
        LatentArgs a;
        a.qa = (const bf16 *)x->q_lat;
        a.qb = (const bf16 *)x->q_rope;
        for (int i = 0; i < 3; ++i) {
            a.qa_s[i] = x->q_lat_strides[i];
            a.qb_s[i] = x->q_rope_strides[i];
            a.os[i] = 0;
        }
        a.cache = (const bf16 *)x->cache;
        a.block_table = x->block_table;
        a.bt_stride = x->block_table_stride ? x->block_table_stride : x->max_pages;
        a.page = pb->page_size;
        a.seqlens = x->seqlens;
        a.s = pb->s; a.h = pb->h; a.t = pb->t; a.causal = pb->causal; a.n_new = pb->n;
        a.out = nullptr;
        a.lse = nullptr;
        p.lat->launch(p.so.grid, p.lat->smem, st, a, p.so.splits, sl2, to_old);
        mla_status e = check_launch("mla_var6_plus_v0_latent launch");
        if (e != MLA_STATUS_OK) return e;
    }
    if (args->stage_mask & 2u) {
        DenseArgs a;
        a.qa = (const bf16 *)x->q_nope;
        a.qb = (const bf16 *)x->q_rope;
        a.ka = (const bf16 *)x->k_nope;
        a.kb = (const bf16 *)x->k_rope;
        a.v = (const bf16 *)x->v;
        for (int i = 0; i < 3; ++i) {
            a.qa_s[i] = x->q_nope_strides[i];
            a.qb_s[i] = x->q_rope_strides[i];
            a.ka_s[i] = x->k_nope_strides[i];
            a.v_s[i] = x->v_strides[i];
            a.os[i] = 0;
        }
        // k_rope [b, n, p] is shared by all heads: a head stride of 0.
        a.kb_s[0] = x->k_rope_strides[0];
        a.kb_s[1] = x->k_rope_strides[1];
        a.kb_s[2] = 0;
        a.seqlens = x->seqlens;
        a.s = pb->s; a.h = pb->h; a.t = pb->t; a.causal = pb->causal;
        a.hybrid = 1; a.n_new = pb->n;
        a.out = nullptr;
        a.lse = nullptr;
        p.den->launch(p.sn.grid, p.den->smem, st, a, p.sn.splits, sl2, to_new);
        mla_status e = check_launch("mla_var6_plus_v0_decompressed launch");
        if (e != MLA_STATUS_OK) return e;
    }
    if (args->stage_mask & 4u) {
        CombineArgs c;
        c.old_o = to_old.ws_o; c.old_lse = to_old.ws_lse; c.so = p.so.splits;
        c.new_o = to_new.ws_o; c.new_lse = to_new.ws_lse; c.sn = p.sn.splits;
        c.w_uv = (const bf16 *)x->w_uv;
        c.b = pb->b; c.s = pb->s; c.h = pb->h;
        c.out = (bf16 *)x->out;
        for (int i = 0; i < 3; ++i) c.os[i] = x->out_strides[i];
        c.lse = x->lse;
        mla_var6_plus_v0_combine<<<p.comb_grid, 128, 0, st>>>(c);
        mla_status e = check_launch("mla_var6_plus_v0_combine launch");
        if (e != MLA_STATUS_OK) return e;
    }
    return MLA_STATUS_OK;
}

}  // namespace

extern "C" const mla_kernel_version mla_kv_mla_var6_plus_v0 = {
    "mla_var6_plus_v0", MLA_DESIGN_MLA_VAR6_PLUS, 0, MLA_TIER_PORTABLE, MLA_TARGET_SM80_PLUS,
    "portable baseline: latent + decompressed attn_tile stages, combine with fused w_uv projection",
    3, {"latent", "decompressed", "combine", nullptr},
    (int)(sizeof kCandidates / sizeof kCandidates[0]), kCandidates,
    validate, stage_config, workspace_bytes, prepare, launch,
};
