// flash_mla_v1 (hopper, sm_90a only): absorbed MLA attention over the paged latent cache.
//
// Computes out[b, s, h, 512] = softmax(scale * q . c) @ c[:512] and lse[b, h, s] (MLA_SPEC.md
// design 2), like flash_mla_v0, with Hopper's asynchronous machinery instead of mma.sync:
//
// - CTA = 64 (query, head) rows of one request x one KV split, 3 warpgroups (384 threads).
//   Warpgroup 0 is the producer: one thread walks the split's pages through block_table and
//   issues TMA loads (cp.async.bulk.tensor, 9 boxes of 64 tokens x 64 dims, 128-byte swizzle)
//   into a 2-stage ring, each stage completing on its mbarrier; setmaxnreg gives its registers
//   to the consumers.
// - Warpgroups 1 and 2 are consumers. Per 64-token page: each computes S for its 32 of the 64
//   tokens (wgmma m64n32k16, Q and K both from shared memory, 36 k-steps over 576 dims); the row
//   maxima are exchanged through shared memory; each writes its half of P (bf16, swizzled) to
//   shared memory; then each accumulates its own 256 of the 512 output columns
//   (wgmma m64n256k16, P from shared memory, V = the first 512 dims of the same page read
//   MN-major: no transposed copy of the cache). The page goes back to the producer when both
//   consumers' PV has completed.
// - Split-KV as in v0: each split writes a normalised fp32 partial and its lse; the combine is
//   launched with programmatic dependent launch so that its launch overlaps the main grid's tail.
//
// Tiling knobs: block_m = 64, block_n = 64 (one page), warps = 12, stages = 2 are fixed by the
// shared-memory budget (Q 72 KB + 2 x 72 KB + P 8 KB); splits is free (0 = from the SM count).
#include <cuda.h>
#include <cuda/ptx>
#include "policies.cuh"
#include "kernel_host.cuh"
#include "tma_host.cuh"

namespace {
using namespace mla;
namespace ptx = cuda::ptx;

constexpr int BM = 64, BN = 64, DA = 512, DB = 64, DQK = DA + DB;
constexpr int NBOX = DQK / 64;                   // 64-dim boxes per token row
constexpr int BOX_BYTES = 64 * 128;              // 64 rows x 128 bytes
constexpr int TILE_BYTES = NBOX * BOX_BYTES;     // Q tile or one KV stage: 72 KB
constexpr int STAGES = 2;
constexpr int NTHREADS = 384;
constexpr int CONSUMERS = 256;
constexpr size_t OFF_Q = 0;
constexpr size_t OFF_K = OFF_Q + TILE_BYTES;
constexpr size_t OFF_P = OFF_K + (size_t)STAGES * TILE_BYTES;
constexpr size_t OFF_RED = OFF_P + BOX_BYTES;                // float [2][64]: row max / row sum
constexpr size_t OFF_BAR = OFF_RED + 2 * BM * sizeof(float); // full[STAGES], empty[STAGES]
constexpr size_t SMEM_USED = OFF_BAR + 2 * STAGES * sizeof(uint64_t);
constexpr size_t SMEM_BYTES = SMEM_USED + 1024;              // slack to align the base to 1024
static_assert(SMEM_BYTES <= 232448, "flash_mla_v1 exceeds the 227 KB shared-memory opt-in");
static_assert(OFF_K % 1024 == 0 && OFF_P % 1024 == 0, "swizzled tiles need 1024-byte alignment");

// Byte offset of element (row, col) in a 64 x 64 bf16 tile stored with the 128-byte swizzle
// (the layout TMA writes and wgmma reads): 16-byte chunks permuted by the row's low 3 bits.
__device__ __forceinline__ uint32_t sw128(int row, int col)
{
    return row * 128 + ((((col >> 3) ^ row) & 7) << 4) + (col & 7) * 2;
}

__device__ __forceinline__ void wait_parity(uint64_t *bar, uint32_t parity)
{
    while (!ptx::mbarrier_try_wait_parity(bar, parity)) {
    }
}

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v1(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ LatentArgs a, int nsplits,
             float sl2, TileOut to)
{
    extern __shared__ char smem_raw[];
    char *smem = smem_raw + ((1024 - (smem_addr(smem_raw) & 1023)) & 1023);
    // The combine may start launching now; it waits (griddepcontrol.wait) for our completion.
    pdl_launch_dependents();

    const int tid = threadIdx.x, wg = tid >> 7;
    LatentPolicy<DA, DB> pol(&a, blockIdx.z);
    const int m0 = blockIdx.x * BM, split = blockIdx.y;
    const int m_last = min(m0 + BM, pol.rows) - 1;
    // Causal limits grow with the row, so the last row sees the most tokens.
    const int kv_end = pol.row_limit(m_last);
    const int nblk = (kv_end + BN - 1) / BN;
    const int per = (nblk + nsplits - 1) / nsplits;
    const int b0 = min(split * per, nblk), b1 = min(b0 + per, nblk);

    uint64_t *full = reinterpret_cast<uint64_t *>(smem + OFF_BAR);
    uint64_t *empty = full + STAGES;
    if (tid == 0) {
        for (int s = 0; s < STAGES; ++s) {
            ptx::mbarrier_init(&full[s], 1);
            ptx::mbarrier_init(&empty[s], CONSUMERS / 32);  // one arrival per consumer warp
        }
        ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
    }
    __syncthreads();

    // ------------------------------------------------------------------ producer warpgroup
    if (wg == 0) {
        setmaxnreg_dec<40>();
        if (tid == 0) {
            const int *bt = a.block_table + (long long)pol.r * a.bt_stride;
            for (int j = b0, i = 0; j < b1; ++j, ++i) {
                const int st = i % STAGES;
                wait_parity(&empty[st], ((i / STAGES) & 1) ^ 1);  // a fresh barrier passes at once
                const int page = __ldg(bt + j);
                ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &full[st],
                                               (uint32_t)TILE_BYTES);
                char *dst = smem + OFF_K + (size_t)st * TILE_BYTES;
#pragma unroll
                for (int c = 0; c < NBOX; ++c) {
                    const int32_t crd[2] = {c * 64, page * BN};
                    ptx::cp_async_bulk_tensor(ptx::space_cluster, ptx::space_global, dst + c * BOX_BYTES, &tmap, crd,
                                              &full[st]);
                }
            }
        }
        return;
    }

    // ------------------------------------------------------------------ consumer warpgroups
    setmaxnreg_inc<232>();
    const int w = wg - 1;                   // which 32 tokens of S, which 256 output columns
    const int ct = tid - 128;               // 0..255 over both consumers
    const int warp = (tid >> 5) & 3, lane = tid & 31, g = lane >> 2, c4 = lane & 3;
    char *sQ = smem + OFF_Q;
    char *sP = smem + OFF_P;
    float *red = reinterpret_cast<float *>(smem + OFF_RED);

    // Q (64 x 576) into nine swizzled 64 x 64 boxes; rows past the request's s*h are zero.
    for (int idx = ct; idx < BM * (DQK / 8); idx += CONSUMERS) {
        const int row = idx / (DQK / 8), cc = idx % (DQK / 8);
        const int m = m0 + row;
        uint4 v = make_uint4(0u, 0u, 0u, 0u);
        if (m < pol.rows)
            v = *reinterpret_cast<const uint4 *>(cc < DA / 8 ? pol.q_row(m, 0) + cc * 8 : pol.q_row(m, 1) + (cc - DA / 8) * 8);
        *reinterpret_cast<uint4 *>(sQ + (cc >> 3) * BOX_BYTES + sw128(row, (cc & 7) * 8)) = v;
    }
    ptx::fence_proxy_async(ptx::space_shared);  // generic-proxy writes -> wgmma reads
    named_bar_sync(1, CONSUMERS);

    const int r0 = 16 * warp + g, r1 = r0 + 8;  // this thread's two rows of the tile
    const int lim0 = m0 + r0 < pol.rows ? pol.row_limit(m0 + r0) : 0;
    const int lim1 = m0 + r1 < pol.rows ? pol.row_limit(m0 + r1) : 0;
    const uint32_t q_base = smem_addr(sQ), p_base = smem_addr(sP);

    float o[128];
#pragma unroll
    for (int i = 0; i < 128; ++i) o[i] = 0.f;
    float m_run0 = -CUDART_INF_F, m_run1 = -CUDART_INF_F, l_run0 = 0.f, l_run1 = 0.f;

    for (int j = b0, i = 0; j < b1; ++j, ++i) {
        const int st = i % STAGES;
        char *sK = smem + OFF_K + (size_t)st * TILE_BYTES;
        const uint32_t k_base = smem_addr(sK);
        wait_parity(&full[st], (i / STAGES) & 1);

        // S = Q . K^T for tokens [32w, 32w + 32) of the page.
        float s[16];
#pragma unroll
        for (int e = 0; e < 16; ++e) s[e] = 0.f;
        reg_fence(s);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < DQK / 16; ++kk) {
            const uint32_t koff = (kk >> 2) * BOX_BYTES + (kk & 3) * 32;
            wgmma_m64n32k16_ss<0>(s, gmma_desc_sw128(q_base + koff, 16, 1024),
                                  gmma_desc_sw128(k_base + koff + w * 32 * 128, 16, 1024), kk > 0);
        }
        wgmma_commit();
        wgmma_wait<0>();
        reg_fence(s);

        // Mask (causal / past the request) and scale to log2 units; local row maxima.
        const int tok0 = j * BN + w * 32 + 2 * c4;
        float mx0 = -CUDART_INF_F, mx1 = -CUDART_INF_F;
#pragma unroll
        for (int n = 0; n < 4; ++n)
#pragma unroll
            for (int e = 0; e < 2; ++e) {
                const int tk = tok0 + n * 8 + e;
                s[4 * n + e] = tk < lim0 ? s[4 * n + e] * sl2 : -CUDART_INF_F;
                s[4 * n + 2 + e] = tk < lim1 ? s[4 * n + 2 + e] * sl2 : -CUDART_INF_F;
                mx0 = fmaxf(mx0, s[4 * n + e]);
                mx1 = fmaxf(mx1, s[4 * n + 2 + e]);
            }
        mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, 1));
        mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, 2));
        mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, 1));
        mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, 2));
        if (c4 == 0) {
            red[w * BM + r0] = mx0;
            red[w * BM + r1] = mx1;
        }
        // Both consumers' maxima are in; both have also finished reading K of this stage.
        named_bar_sync(1, CONSUMERS);
        const float mn0 = fmaxf(m_run0, fmaxf(red[r0], red[BM + r0]));
        const float mn1 = fmaxf(m_run1, fmaxf(red[r1], red[BM + r1]));
        const float mu0 = mn0 == -CUDART_INF_F ? 0.f : mn0;  // a row with nothing visible yet
        const float mu1 = mn1 == -CUDART_INF_F ? 0.f : mn1;
        const float al0 = exp2f(m_run0 - mu0), al1 = exp2f(m_run1 - mu1);
        m_run0 = mn0;
        m_run1 = mn1;

        // TMA cannot zero-fill inside a page: tokens past t_r hold whatever the page holds, and
        // P = 0 times a NaN/Inf there would still poison O. Zero their V rows (dims 0..511).
        const int valid = pol.t_r - j * BN;
        if (valid < BN) {
            for (int idx = ct; idx < (BN - valid) * 64; idx += CONSUMERS) {
                const int row = valid + (idx >> 6), q = idx & 63;
                *reinterpret_cast<uint4 *>(sK + (q >> 3) * BOX_BYTES + row * 128 + (q & 7) * 16) =
                    make_uint4(0u, 0u, 0u, 0u);
            }
        }

        // P = exp2(S - m) in bf16 into the swizzled 64 x 64 P tile (columns 32w..32w+31).
        float ps0 = 0.f, ps1 = 0.f;
#pragma unroll
        for (int n = 0; n < 4; ++n) {
            const float p0 = exp2f(s[4 * n] - mu0), p1 = exp2f(s[4 * n + 1] - mu0);
            const float p2 = exp2f(s[4 * n + 2] - mu1), p3 = exp2f(s[4 * n + 3] - mu1);
            ps0 += p0 + p1;
            ps1 += p2 + p3;
            const int col = w * 32 + n * 8 + 2 * c4;
            *reinterpret_cast<uint32_t *>(sP + sw128(r0, col)) = pack_bf16x2(p0, p1);
            *reinterpret_cast<uint32_t *>(sP + sw128(r1, col)) = pack_bf16x2(p2, p3);
        }
        l_run0 = l_run0 * al0 + ps0;  // this thread's columns only: reduced once at the end
        l_run1 = l_run1 * al1 + ps1;
        ptx::fence_proxy_async(ptx::space_shared);
        named_bar_sync(2, CONSUMERS);  // all of P (and the zeroed V rows) written

        // O[:, 256w .. 256w + 256) = O * alpha + P . V
#pragma unroll
        for (int n = 0; n < 32; ++n) {
            o[4 * n] *= al0;
            o[4 * n + 1] *= al0;
            o[4 * n + 2] *= al1;
            o[4 * n + 3] *= al1;
        }
        reg_fence(o);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BN / 16; ++kk)
            wgmma_m64n256k16_ss<1>(o, gmma_desc_sw128(p_base + kk * 32, 16, 1024),
                                   gmma_desc_sw128(k_base + 4 * w * BOX_BYTES + kk * 16 * 128, BOX_BYTES, 1024), 1);
        wgmma_commit();
        wgmma_wait<0>();
        reg_fence(o);
        __syncwarp();
        if (lane == 0) ptx::mbarrier_arrive(&empty[st]);  // stage free for the producer
    }

    // Row sums: this thread's columns -> the quad -> both consumers.
    l_run0 += __shfl_xor_sync(0xffffffffu, l_run0, 1);
    l_run0 += __shfl_xor_sync(0xffffffffu, l_run0, 2);
    l_run1 += __shfl_xor_sync(0xffffffffu, l_run1, 1);
    l_run1 += __shfl_xor_sync(0xffffffffu, l_run1, 2);
    // Safe to reuse `red`: the other consumer read its last maxima before the final bar 2.
    if (c4 == 0) {
        red[w * BM + r0] = l_run0;
        red[w * BM + r1] = l_run1;
    }
    named_bar_sync(1, CONSUMERS);
    const float lt[2] = {red[r0] + red[BM + r0], red[r1] + red[BM + r1]};
    const float mr[2] = {m_run0, m_run1};

#pragma unroll
    for (int rr = 0; rr < 2; ++rr) {
        const int m = m0 + (rr ? r1 : r0);
        if (m > m_last) continue;
        const bool none = !(lt[rr] > 0.f);
        const float inv = none ? 0.f : 1.f / lt[rr];
        const float lse = none ? -CUDART_INF_F : (mr[rr] + log2f(lt[rr])) * 0.69314718055994531f;
        if (to.partial) {
            const long long pr = pol.row_global(m) * nsplits + split;
            float *dst = to.ws_o + pr * DA + w * 256 + 2 * c4;
#pragma unroll
            for (int n = 0; n < 32; ++n)
                *reinterpret_cast<float2 *>(dst + n * 8) = make_float2(o[4 * n + 2 * rr] * inv, o[4 * n + 2 * rr + 1] * inv);
            if (w == 0 && c4 == 0) to.ws_lse[pr] = lse;
        } else {
            bf16 *dst = pol.out_row(m) + w * 256 + 2 * c4;
#pragma unroll
            for (int n = 0; n < 32; ++n)
                *reinterpret_cast<uint32_t *>(dst + n * 8) = pack_bf16x2(o[4 * n + 2 * rr] * inv, o[4 * n + 2 * rr + 1] * inv);
            float *lp = pol.lse_at(m);
            if (lp && w == 0 && c4 == 0) *lp = lse;
        }
    }
}

__global__ void __launch_bounds__(256)
flash_mla_v1_combine(const __grid_constant__ LatentArgs a, int nsplits, long long rows, const float *ws_o,
                     const float *ws_lse)
{
    pdl_wait();  // launched early (PDL): the partials are complete only after this
    const long long row = (long long)blockIdx.x * 8 + (threadIdx.x >> 5);
    if (row >= rows) return;
    combine_row<DA>(ws_o, ws_lse, nsplits, row, out_at(a.out, a.os, row, a.s, a.h), lse_at_row(a.lse, row, a.s, a.h));
}

const mla_tiling kCandidates[] = {
    {64, 64, 12, 2, 0}, {64, 64, 12, 2, 1}, {64, 64, 12, 2, 2}, {64, 64, 12, 2, 4}, {64, 64, 12, 2, 8},
};

bool tile_ok(const mla_tiling *t)
{
    return t->block_m == BM && t->block_n == BN && t->warps == NTHREADS / 32 && t->stages == STAGES;
}

SplitPlan resolve(const mla_tiling *t, const mla_problem *pb, const mla_device_info *dev)
{
    const int row_blocks = (pb->s * pb->h + BM - 1) / BM;
    return plan_splits(row_blocks, pb->b, pb->t, BN, SMEM_BYTES, t->splits, dev, (long long)pb->b * pb->s * pb->h,
                       DA, false);
}

int validate(const mla_tiling *t, const mla_problem *pb, const mla_device_info *dev, char *w, size_t wl)
{
    if (pb->design != MLA_DESIGN_FLASH_MLA) return why(w, wl, "flash_mla_v1 runs the flash_mla design only");
    if (pb->k != DA || pb->p != DB || pb->page_size != BN)
        return why(w, wl, "flash_mla_v1 is compiled for k=512, p=64, page 64");
    if (!tile_ok(t))
        return why(w, wl, "flash_mla_v1 has one tile, block_m=64 block_n=64 warps=12 stages=2 (got %d/%d/%d/%d)",
                   t->block_m, t->block_n, t->warps, t->stages);
    if (t->splits < 0 || t->splits > 64) return why(w, wl, "splits=%d outside 0..64", t->splits);
    if (dev && dev->smem_per_block_optin && dev->smem_per_block_optin < SMEM_BYTES)
        return why(w, wl, "flash_mla_v1 needs %zu bytes of shared memory per block, the device allows %zu",
                   (size_t)SMEM_BYTES, (size_t)dev->smem_per_block_optin);
    return 1;
}

int stage_config(const mla_tiling *t, const mla_problem *pb, const mla_device_info *dev, int stage,
                 mla_stage_config *cfg)
{
    if (!tile_ok(t)) return 0;
    const SplitPlan r = resolve(t, pb, dev);
    if (stage == 0) {
        set_cfg(cfg, (const void *)flash_mla_v1, r.grid.x, r.grid.y, r.grid.z, NTHREADS, SMEM_BYTES);
        return 1;
    }
    if (stage == 1 && r.splits > 1) {
        set_cfg(cfg, (const void *)flash_mla_v1_combine, (unsigned)((r.rows + 7) / 8), 1, 1, 256, 0);
        return 1;
    }
    return 0;
}

size_t workspace_bytes(const mla_tiling *t, const mla_problem *pb, const mla_device_info *dev)
{
    if (!tile_ok(t)) return 0;
    const SplitPlan r = resolve(t, pb, dev);
    return r.ws_o + r.ws_lse;
}

mla_status prepare(const mla_tiling *t, const mla_problem *pb, const mla_device_info *dev)
{
    if (!tile_ok(t)) return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "flash_mla_v1: tile not compiled");
    return set_smem((const void *)flash_mla_v1, SMEM_BYTES, "flash_mla_v1: cudaFuncSetAttribute");
}

mla_status launch(const mla_tiling *t, const mla_launch_args *args)
{
    const mla_problem *pb = args->pb;
    const mla_flash_mla_tensors *x = (const mla_flash_mla_tensors *)args->tensors;
    if (!tile_ok(t)) return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "flash_mla_v1: tile not compiled");
    const SplitPlan r = resolve(t, pb, args->dev);
    if (args->workspace_bytes < r.ws_o + r.ws_lse)
        return mla_fail(MLA_STATUS_WORKSPACE_TOO_SMALL, "flash_mla_v1: workspace %zu < %zu bytes", args->workspace_bytes,
                        r.ws_o + r.ws_lse);
    // Q rows are read as 16-byte vectors.
    if (((uintptr_t)x->q & 15u) || (x->q_strides[0] | x->q_strides[1] | x->q_strides[2]) & 7)
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT,
                        "flash_mla_v1: q must be 16-byte aligned with strides that are multiples of 8 elements");
    if (x->num_pages <= 0 || (long long)x->num_pages * BN > 0x7fffffffLL)
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "flash_mla_v1: num_pages=%d outside 1..%d", x->num_pages,
                        0x7fffffff / BN);
    // The cache as a 2-D tensor [num_pages * 64 tokens][576 dims], read in 64 x 64 boxes.
    CUtensorMap tmap;
    mla_status e = tmap_bf16_2d_sw128(&tmap, x->cache, DQK, (unsigned long long)x->num_pages * BN,
                                      DQK * sizeof(bf16), 64, BN, "flash_mla_v1");
    if (e != MLA_STATUS_OK) return e;

    LatentArgs a;
    a.qa = (const bf16 *)x->q;
    a.qb = (const bf16 *)x->q + DA;
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
        flash_mla_v1<<<r.grid, NTHREADS, SMEM_BYTES, st>>>(tmap, a, r.splits, sl2, to);
        e = check_launch("flash_mla_v1 launch");
        if (e != MLA_STATUS_OK) return e;
    }
    if (r.splits > 1 && (args->stage_mask & 2u)) {
        // Programmatic dependent launch: the combine's CTAs are launched while the main grid's
        // last wave runs and wait in griddepcontrol.wait; graph capture keeps the edge.
        cudaLaunchConfig_t cfg = {};
        cfg.gridDim = dim3((unsigned)((r.rows + 7) / 8));
        cfg.blockDim = dim3(256);
        cfg.stream = st;
        cudaLaunchAttribute attr[1];
        attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        attr[0].val.programmaticStreamSerializationAllowed = 1;
        cfg.attrs = attr;
        cfg.numAttrs = 1;
        cudaError_t ce = cudaLaunchKernelEx(&cfg, flash_mla_v1_combine, a, r.splits, r.rows, (const float *)to.ws_o,
                                            (const float *)to.ws_lse);
        if (ce != cudaSuccess) return cuda_fail(ce, "flash_mla_v1_combine launch");
    }
    return MLA_STATUS_OK;
}

}  // namespace

extern "C" const mla_kernel_version mla_kv_flash_mla_v1 = {
    "flash_mla_v1", MLA_DESIGN_FLASH_MLA, 1, MLA_TIER_HOPPER, MLA_TARGET_SM90A,
    "hopper: TMA pages on mbarriers, producer + 2 consumer warpgroups, wgmma QK^T/PV, split-KV + PDL combine",
    2, {"main", "combine", nullptr, nullptr},
    (int)(sizeof kCandidates / sizeof kCandidates[0]), kCandidates,
    validate, stage_config, workspace_bytes, prepare, launch,
};
