// What the hopper-tier flash_mla versions share: the tile geometry (64 query rows x one 64-token
// page x 576 dims, 128-byte swizzled 64 x 64 boxes), the TMA producer, the Q load, the final
// normalisation and store, the split-KV combine (launched with PDL) and the host glue
// (validation, grid, workspace, tensor map, launch). A version supplies its main kernel and its
// shared-memory size; everything it changes about the schedule stays in its own file.
#pragma once
#include <utility>
#include <cuda.h>
#include <cuda/ptx>
#include "policies.cuh"
#include "kernel_host.cuh"
#include "tma_host.cuh"

namespace mla {
namespace fmh {
namespace ptx = cuda::ptx;

constexpr int BM = 64, BN = 64, DA = 512, DB = 64, DQK = DA + DB;
constexpr int NBOX = DQK / 64;                   // 64-dim boxes per token row
constexpr int BOX_BYTES = 64 * 128;              // 64 rows x 128 bytes
constexpr int TILE_BYTES = NBOX * BOX_BYTES;     // Q tile or one KV stage: 72 KB
constexpr int STAGES = 2;
constexpr int NTHREADS = 384;                    // producer + 2 consumer warpgroups
constexpr int CONSUMERS = 256;
constexpr size_t SMEM_OPTIN_MAX = 232448;        // 227 KB, sm_90

typedef void (*MainFn)(CUtensorMap, LatentArgs, int, float, TileOut);
// A main kernel that loads Q by TMA: the cache's tensor map, then the query's (fmh::q_tmap).
typedef void (*MainQFn)(CUtensorMap, CUtensorMap, LatentArgs, int, float, TileOut);
// A main kernel that loads Q and stores O by TMA: the cache's map, the query's, the output's (fmh::o_tmap).
typedef void (*MainQOFn)(CUtensorMap, CUtensorMap, CUtensorMap, LatentArgs, int, float, TileOut);

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

// The same wait with try_wait's suspend-time hint (flash_mla_v63, seesaw::OPT_MB_SLEEP): ptxas
// turns the retry into `NANOSLEEP.SYNCS`, which parks the warp until the barrier's unit signals
// (or the hint, ~10 ms, runs out) instead of re-issuing TRYWAIT. Why: Nsight Compute's
// per-instruction sampling of flash_mla_v61's pair at b=32,s=8 (thirty-first session) had one of
// these spins (warpgroup 1 waiting for page B's RoPE box) at 5.8 % of all samples, and FlashMLA's
// kernel waits this way (CUTLASS's barrier: 37 NANOSLEEP.SYNCS in its SASS, none in ours).
__device__ __forceinline__ void wait_parity_sleep(uint64_t *bar, uint32_t parity)
{
    asm volatile(
        "{\n\t.reg .pred P1;\n\t"
        "WAIT_SLEEP:\n\t"
        "mbarrier.try_wait.parity.shared::cta.b64 P1, [%0], %1, %2;\n\t"
        "@P1 bra DONE_SLEEP;\n\t"
        "bra WAIT_SLEEP;\n\t"
        "DONE_SLEEP:\n\t}"
        :
        : "r"((uint32_t)__cvta_generic_to_shared(bar)), "r"(parity), "r"(0x989680u)
        : "memory");
}

// The pages [b0, b1) of this CTA: causal limits grow with the row, so the tile's last row sees
// the most tokens; the split takes its share of the tile's pages.
struct KvRange {
    int m0, m_last, b0, b1;
};
__device__ __forceinline__ KvRange kv_range(const LatentPolicy<DA, DB> &pol, int m0, int split, int nsplits)
{
    KvRange k;
    k.m0 = m0;
    k.m_last = min(m0 + BM, pol.rows) - 1;
    const int nblk = (pol.row_limit(k.m_last) + BN - 1) / BN;
    const int per = (nblk + nsplits - 1) / nsplits;
    k.b0 = min(split * per, nblk);
    k.b1 = min(k.b0 + per, nblk);
    return k;
}

__device__ __forceinline__ void init_barriers(uint64_t *full, uint64_t *empty)
{
    for (int s = 0; s < STAGES; ++s) {
        ptx::mbarrier_init(&full[s], 1);
        ptx::mbarrier_init(&empty[s], CONSUMERS / 32);  // one arrival per consumer warp
    }
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
}

// The producer (one thread): pages [b0, b1) through block_table into the stage ring, each page
// as 9 TMA boxes completing on the stage's `full` barrier.
__device__ __forceinline__ void produce_pages(const CUtensorMap *tmap, const LatentArgs &a, int r, int b0, int b1,
                                              char *stages, uint64_t *full, uint64_t *empty)
{
    const int *bt = a.block_table + (long long)r * a.bt_stride;
    for (int j = b0, i = 0; j < b1; ++j, ++i) {
        const int st = i % STAGES;
        wait_parity(&empty[st], ((i / STAGES) & 1) ^ 1);  // a fresh barrier passes at once
        const int page = __ldg(bt + j);
        ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &full[st],
                                       (uint32_t)TILE_BYTES);
        char *dst = stages + (size_t)st * TILE_BYTES;
#pragma unroll
        for (int c = 0; c < NBOX; ++c) {
            const int32_t crd[2] = {c * 64, page * BN};
            ptx::cp_async_bulk_tensor(ptx::space_cluster, ptx::space_global, dst + c * BOX_BYTES, tmap, crd, &full[st]);
        }
    }
}

// The RoPE box of a page (dims 512..575): read by QK^T only, so free for P once the QK^T of that
// page is done (v2, v3, v4 keep P there).
constexpr int P_BOX = NBOX - 1;

// O(64 x 256 of warpgroup w) += P . V of the page at k_base, P in the page's RoPE box, V the
// page's dims 256w..256w+255 read MN-major: issued and committed, not waited.
// DESC: descriptors built once and moved by gmma_desc_add (flash_mla_v5's OPT_DESC).
template <bool DESC = false>
__device__ __forceinline__ void issue_pv_ss(float (&o)[128], uint32_t k_base, int w)
{
    reg_fence(o);
    wgmma_fence();
    const uint64_t pd = gmma_desc_sw128(k_base + P_BOX * BOX_BYTES, 16, 1024);
    const uint64_t vd = gmma_desc_sw128(k_base + 4 * w * BOX_BYTES, BOX_BYTES, 1024);
#pragma unroll
    for (int kk = 0; kk < BN / 16; ++kk) {
        if (DESC)
            wgmma_m64n256k16_ss<1>(o, gmma_desc_add(pd, kk * 32), gmma_desc_add(vd, kk * 16 * 128), 1);
        else
            wgmma_m64n256k16_ss<1>(o, gmma_desc_sw128(k_base + P_BOX * BOX_BYTES + kk * 32, 16, 1024),
                                   gmma_desc_sw128(k_base + 4 * w * BOX_BYTES + kk * 16 * 128, BOX_BYTES, 1024), 1);
    }
    wgmma_commit();
}

// O (a consumer's 64 x 256 accumulator) times the per-row rescale factors of its rows r0, r0 + 8.
__device__ __forceinline__ void scale_o(float (&o)[128], float f0, float f1)
{
#pragma unroll
    for (int n = 0; n < 32; ++n) {
        o[4 * n] *= f0;
        o[4 * n + 1] *= f0;
        o[4 * n + 2] *= f1;
        o[4 * n + 3] *= f1;
    }
}

// The exponent base of a row: its running max, or 0 for a row with nothing visible yet (its
// max is -inf; 2^(-inf - 0) = 0 where -inf - -inf would be NaN).
__device__ __forceinline__ float finite_or_zero(float m) { return m == -CUDART_INF_F ? 0.f : m; }

// Row max / row sum of a thread's two accumulator rows over its quad (the 4 lanes of a row).
__device__ __forceinline__ void quad_max2(float &a, float &b)
{
    a = fmaxf(a, __shfl_xor_sync(0xffffffffu, a, 1));
    a = fmaxf(a, __shfl_xor_sync(0xffffffffu, a, 2));
    b = fmaxf(b, __shfl_xor_sync(0xffffffffu, b, 1));
    b = fmaxf(b, __shfl_xor_sync(0xffffffffu, b, 2));
}
__device__ __forceinline__ void quad_sum2(float &a, float &b)
{
    a += __shfl_xor_sync(0xffffffffu, a, 1);
    a += __shfl_xor_sync(0xffffffffu, a, 2);
    b += __shfl_xor_sync(0xffffffffu, b, 1);
    b += __shfl_xor_sync(0xffffffffu, b, 2);
}

// Q (64 x 576) into nine swizzled 64 x 64 boxes by the 256 consumer threads (ct = 0..255);
// rows past the request's s*h are zero. Ends with the proxy fence: wgmma reads it next.
__device__ __forceinline__ void load_q(const LatentPolicy<DA, DB> &pol, int m0, int ct, char *sQ)
{
    for (int idx = ct; idx < BM * (DQK / 8); idx += CONSUMERS) {
        const int row = idx / (DQK / 8), cc = idx % (DQK / 8);
        const int m = m0 + row;
        uint4 v = make_uint4(0u, 0u, 0u, 0u);
        if (m < pol.rows)
            v = *reinterpret_cast<const uint4 *>(cc < DA / 8 ? pol.q_row(m, 0) + cc * 8
                                                              : pol.q_row(m, 1) + (cc - DA / 8) * 8);
        *reinterpret_cast<uint4 *>(sQ + (cc >> 3) * BOX_BYTES + sw128(row, (cc & 7) * 8)) = v;
    }
    ptx::fence_proxy_async(ptx::space_shared);
}

// load_q with every load in flight at once (flash_mla_v6): each of the NT threads first loads its
// BM * DQK / 8 / NT 16-byte pieces into registers, then stores them. load_q's loop stores each
// piece before it loads the next (the global load and the shared store go through generic
// pointers, so the compiler keeps them in order): one memory round trip per piece, 18 in a
// row, which the timeline probe measured at ~22000 SM cycles (12 us) per CTA.
template <int NT>
__device__ __forceinline__ void load_q_batched(const LatentPolicy<DA, DB> &pol, int m0, int ct, char *sQ)
{
    // NT / BM threads per row, so that each thread finds its row's addresses once (q_row divides
    // the row index into token and head); they take the row's 16-byte pieces in turn.
    constexpr int TPR = NT / BM, N = (DQK / 8) / TPR;
    static_assert(TPR * BM == NT && N * TPR == DQK / 8, "the Q tile must split evenly over the threads");
    const int row = ct / TPR, p0 = ct % TPR, m = m0 + row;
    const bool ok = m < pol.rows;
    const bf16 *qa = ok ? pol.q_row(m, 0) : nullptr, *qb = ok ? pol.q_row(m, 1) : nullptr;
    uint4 v[N];
#pragma unroll
    for (int k = 0; k < N; ++k) {
        const int cc = p0 + k * TPR;
        v[k] = ok ? __ldg(reinterpret_cast<const uint4 *>(cc < DA / 8 ? qa + cc * 8 : qb + (cc - DA / 8) * 8))
                  : make_uint4(0u, 0u, 0u, 0u);
    }
#pragma unroll
    for (int k = 0; k < N; ++k) {
        const int cc = p0 + k * TPR;
        *reinterpret_cast<uint4 *>(sQ + (cc >> 3) * BOX_BYTES + sw128(row, (cc & 7) * 8)) = v[k];
    }
    ptx::fence_proxy_async(ptx::space_shared);
}

// TMA cannot zero-fill inside a page: tokens past t_r hold whatever the page holds, and P = 0
// times a NaN/Inf there would still poison O. Zero their V rows (dims 0..511) of the stage.
// Call only once every reader of the stage as K is done; nthr threads take part (ct < nthr).
__device__ __forceinline__ void zero_tail_rows(const LatentPolicy<DA, DB> &pol, int j, int ct, char *sK,
                                               int nthr = CONSUMERS)
{
    const int valid = pol.t_r - j * BN;
    if (valid >= BN) return;
    for (int idx = ct; idx < (BN - valid) * 64; idx += nthr) {
        const int row = valid + (idx >> 6), q = idx & 63;
        *reinterpret_cast<uint4 *>(sK + (q >> 3) * BOX_BYTES + row * 128 + (q & 7) * 16) = make_uint4(0u, 0u, 0u, 0u);
    }
}

// Final store of a consumer's 64 x 256 accumulator (columns 256w..) for its rows r0, r0 + 8:
// normalised by the row sums lt, with lse from the running max mr (log2 units). Partials go to
// row (row_global * nsplits + split) of the workspace, or, given slot >= 0 (the scheduled split
// grid), to row (slot * rows + m).
__device__ __forceinline__ void store_rows(const LatentPolicy<DA, DB> &pol, const TileOut &to, int nsplits,
                                           int split, const KvRange &kr, int w, int r0, int c4, const float (&o)[128],
                                           const float (&lt)[2], const float (&mr)[2], long long slot = -1)
{
#pragma unroll
    for (int rr = 0; rr < 2; ++rr) {
        const int m = kr.m0 + r0 + 8 * rr;
        if (m > kr.m_last) continue;
        const bool none = !(lt[rr] > 0.f);
        const float inv = none ? 0.f : 1.f / lt[rr];
        const float lse = none ? -CUDART_INF_F : (mr[rr] + log2f(lt[rr])) * 0.69314718055994531f;
        if (to.partial) {
            const long long pr = slot >= 0 ? slot * pol.rows + m : pol.row_global(m) * nsplits + split;
            float *dst = to.ws_o + pr * DA + w * 256 + 2 * c4;
#pragma unroll
            for (int n = 0; n < 32; ++n)
                *reinterpret_cast<float2 *>(dst + n * 8) =
                    make_float2(o[4 * n + 2 * rr] * inv, o[4 * n + 2 * rr + 1] * inv);
            if (w == 0 && c4 == 0) to.ws_lse[pr] = lse;
        } else {
            bf16 *dst = pol.out_row(m) + w * 256 + 2 * c4;
#pragma unroll
            for (int n = 0; n < 32; ++n)
                *reinterpret_cast<uint32_t *>(dst + n * 8) =
                    pack_bf16x2(o[4 * n + 2 * rr] * inv, o[4 * n + 2 * rr + 1] * inv);
            float *lp = pol.lse_at(m);
            if (lp && w == 0 && c4 == 0) *lp = lse;
        }
    }
}

// Consumer state of one warpgroup: its output columns, running max / sum and row limits.
struct Consumer {
    int w, ct, lane, c4, r0, r1, lim0, lim1;
    float m_run0, m_run1, l_run0, l_run1;
};

// Softmax of page j from S (already complete): mask, exchange row maxima (named barrier 1),
// zero the V tail of the page, write P (bf16, swizzled) into the 64 x 64 tile sP (columns of
// this consumer's 32 tokens), update the running sums. Returns the O rescale factors. Ends with
// the proxy fence; the caller's barrier 2 publishes P.
__device__ __forceinline__ void softmax_page(const LatentPolicy<DA, DB> &pol, int j, char *sK, char *sP,
                                             float *red, float sl2, Consumer &c, float (&s)[16], float &al0,
                                             float &al1)
{
    const int tok0 = j * BN + c.w * 32 + 2 * c.c4;
    float mx0 = -CUDART_INF_F, mx1 = -CUDART_INF_F;
#pragma unroll
    for (int n = 0; n < 4; ++n)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
            const int tk = tok0 + n * 8 + e;
            s[4 * n + e] = tk < c.lim0 ? s[4 * n + e] * sl2 : -CUDART_INF_F;
            s[4 * n + 2 + e] = tk < c.lim1 ? s[4 * n + 2 + e] * sl2 : -CUDART_INF_F;
            mx0 = fmaxf(mx0, s[4 * n + e]);
            mx1 = fmaxf(mx1, s[4 * n + 2 + e]);
        }
    quad_max2(mx0, mx1);
    if (c.c4 == 0) {
        red[c.w * BM + c.r0] = mx0;
        red[c.w * BM + c.r1] = mx1;
    }
    // Both maxima are in, and both consumers' QK^T of this page is complete: K is dead.
    named_bar_sync(1, CONSUMERS);
    const float mn0 = fmaxf(c.m_run0, fmaxf(red[c.r0], red[BM + c.r0]));
    const float mn1 = fmaxf(c.m_run1, fmaxf(red[c.r1], red[BM + c.r1]));
    const float mu0 = finite_or_zero(mn0), mu1 = finite_or_zero(mn1);
    al0 = exp2f(c.m_run0 - mu0);
    al1 = exp2f(c.m_run1 - mu1);
    c.m_run0 = mn0;
    c.m_run1 = mn1;
    zero_tail_rows(pol, j, c.ct, sK);

    float ps0 = 0.f, ps1 = 0.f;
#pragma unroll
    for (int n = 0; n < 4; ++n) {
        const float p0 = exp2f(s[4 * n] - mu0), p1 = exp2f(s[4 * n + 1] - mu0);
        const float p2 = exp2f(s[4 * n + 2] - mu1), p3 = exp2f(s[4 * n + 3] - mu1);
        ps0 += p0 + p1;
        ps1 += p2 + p3;
        const int col = c.w * 32 + n * 8 + 2 * c.c4;
        *reinterpret_cast<uint32_t *>(sP + sw128(c.r0, col)) = pack_bf16x2(p0, p1);
        *reinterpret_cast<uint32_t *>(sP + sw128(c.r1, col)) = pack_bf16x2(p2, p3);
    }
    c.l_run0 = c.l_run0 * al0 + ps0;  // this thread's columns only: reduced once at the end
    c.l_run1 = c.l_run1 * al1 + ps1;
    ptx::fence_proxy_async(ptx::space_shared);
}

// After the last page: row sums (thread -> quad -> both consumers through `red`, which the
// other consumer finished reading before the last barrier 2) and the final store.
__device__ __forceinline__ void finish(const LatentPolicy<DA, DB> &pol, const TileOut &to, int nsplits, int split,
                                       const KvRange &kr, const Consumer &c, float *red, const float (&o)[128])
{
    float l0 = c.l_run0, l1 = c.l_run1;
    quad_sum2(l0, l1);
    if (c.c4 == 0) {
        red[c.w * BM + c.r0] = l0;
        red[c.w * BM + c.r1] = l1;
    }
    named_bar_sync(1, CONSUMERS);
    const float lt[2] = {red[c.r0] + red[BM + c.r0], red[c.r1] + red[BM + c.r1]};
    const float mr[2] = {c.m_run0, c.m_run1};
    store_rows(pol, to, nsplits, split, kr, c.w, c.r0, c.c4, o, lt, mr);
}

// Consumer setup: roles, rows, row limits, running state.
__device__ __forceinline__ Consumer make_consumer(const LatentPolicy<DA, DB> &pol, const KvRange &kr, int tid)
{
    Consumer c;
    c.w = (tid >> 7) - 1;
    c.ct = tid - 128;
    c.lane = tid & 31;
    c.c4 = c.lane & 3;
    c.r0 = 16 * ((tid >> 5) & 3) + (c.lane >> 2);
    c.r1 = c.r0 + 8;
    c.lim0 = kr.m0 + c.r0 < pol.rows ? pol.row_limit(kr.m0 + c.r0) : 0;
    c.lim1 = kr.m0 + c.r1 < pol.rows ? pol.row_limit(kr.m0 + c.r1) : 0;
    c.m_run0 = c.m_run1 = -CUDART_INF_F;
    c.l_run0 = c.l_run1 = 0.f;
    return c;
}

// A template so that each version's translation unit may instantiate it (vague linkage).
template <int DV>
__global__ void __launch_bounds__(256)
flash_mla_hopper_combine(const __grid_constant__ LatentArgs a, int nsplits, long long rows, const float *ws_o,
                         const float *ws_lse)
{
    pdl_wait();  // launched early (PDL): the partials are complete only after this
    const long long row = (long long)blockIdx.x * 8 + (threadIdx.x >> 5);
    if (row >= rows) return;
    combine_row<DV>(ws_o, ws_lse, nsplits, row, out_at(a.out, a.os, row, a.s, a.h), lse_at_row(a.lse, row, a.s, a.h));
}

// The same merge with every load of a row in flight at once (flash_mla_v7). combine_row's loop
// issues one 8-byte load per split and column pair, recomputes each split's weight per element,
// and keeps about one round trip in flight per lane: at b=32,s=1 (2 splits, 4096 rows) it took
// 8.3 us for 21 MB. Here lane i computes split i's weight once (shuffled to the others), and each
// lane loads its four 16-byte pieces of every split (up to COMBINE_MAXS = 4: 64 registers of
// loads, two 256-thread CTAs per SM) before it adds any of them up.
// More than COMBINE_MAXS splits fall back to combine_row.
constexpr int COMBINE_MAXS = 4;
// One row (a warp): split i at o0 + i * o_stride, its lse at lse0[i * lse_stride] (the layouts
// of combine_row and of the scheduled versions' partial slots).
template <int DV>
__device__ __forceinline__ void combine_splits_mlp(const float *o0, long long o_stride, const float *lse0,
                                                   long long lse_stride, int nsplits, bf16 *out, float *lse_out)
{
    static_assert(DV == 4 * 32 * 4, "four 16-byte pieces per lane and split");
    if (nsplits > COMBINE_MAXS) {
        combine_splits<DV>(o0, o_stride, lse0, lse_stride, nsplits, out, lse_out);
        return;
    }
    const int lane = threadIdx.x & 31;
    const float my = lane < nsplits ? lse0[lane * lse_stride] : -CUDART_INF_F;
    float mx = my;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
    if (mx == -CUDART_INF_F) {  // nothing visible in any split
#pragma unroll
        for (int k = 0; k < 4; ++k)
            *reinterpret_cast<uint2 *>(out + 4 * (lane + 32 * k)) = make_uint2(pack_bf16x2(0.f, 0.f), pack_bf16x2(0.f, 0.f));
        if (lse_out && lane == 0) *lse_out = -CUDART_INF_F;
        return;
    }
    const float wl = lane < nsplits ? __expf(my - mx) : 0.f;
    float den = wl;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) den += __shfl_xor_sync(0xffffffffu, den, o);
    float4 v[COMBINE_MAXS][4];
    float w[COMBINE_MAXS];
#pragma unroll
    for (int i = 0; i < COMBINE_MAXS; ++i) {
        w[i] = __shfl_sync(0xffffffffu, wl, i);
        // an empty split (lse = -inf, weight 0) is not read: 0 times whatever it holds
        if (i < nsplits && w[i] != 0.f) {
#pragma unroll
            for (int k = 0; k < 4; ++k) v[i][k] = __ldg(reinterpret_cast<const float4 *>(o0 + i * o_stride) + lane + 32 * k);
        }
    }
    const float inv = 1.f / den;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
        float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
        for (int i = 0; i < COMBINE_MAXS; ++i) {
            if (i < nsplits && w[i] != 0.f) {
                acc.x += w[i] * v[i][k].x;
                acc.y += w[i] * v[i][k].y;
                acc.z += w[i] * v[i][k].z;
                acc.w += w[i] * v[i][k].w;
            }
        }
        *reinterpret_cast<uint2 *>(out + 4 * (lane + 32 * k)) =
            make_uint2(pack_bf16x2(acc.x * inv, acc.y * inv), pack_bf16x2(acc.z * inv, acc.w * inv));
    }
    if (lse_out && lane == 0) *lse_out = mx + logf(den);
}

template <int DV>
__global__ void __launch_bounds__(256)
flash_mla_hopper_combine_mlp(const __grid_constant__ LatentArgs a, int nsplits, long long rows, const float *ws_o,
                             const float *ws_lse)
{
    pdl_wait();  // launched early (PDL): the partials are complete only after this
    const long long row = (long long)blockIdx.x * 8 + (threadIdx.x >> 5);
    if (row >= rows) return;
    combine_splits_mlp<DV>(ws_o + row * nsplits * (long long)DV, DV, ws_lse + row * nsplits, 1, nsplits,
                           out_at(a.out, a.os, row, a.s, a.h), lse_at_row(a.lse, row, a.s, a.h));
}

typedef void (*CombineFn)(LatentArgs, int, long long, const float *, const float *);

// ---------------------------------------------------------------------------------------------
// Host glue. Every hopper flash_mla version has one tile (64 rows, one page, 12 warps, 2 stages)
// and a free split count.

// The most splits merged in a cluster (OPT_CMERGE). Two only, for now: a cluster of two fits a
// TPC, so the 64 two-CTA clusters of b=32,s=1 always run as one wave of 128 CTAs on 132 SMs;
// clusters of 4 or 8 with one CTA per SM depend on how many SMs each GPC has (not measured).
constexpr int CMERGE_MAXS = 2;

// Q by TMA (seesaw OPT_Q_TMA): a row block must be one box of the query's tensor map (q_tmap):
// h rows x 64 / h tokens when h divides 64, 64 heads of one token when 64 divides h.
inline bool q_tma_ok(int h) { return h > 0 && (64 % h == 0 || h % 64 == 0); }

// The persistent kernel's int argument is b | PTAIL_ON when it cuts the last round's row blocks
// by pages over all CTAs (seesaw OPT_PTAIL, flash_mla_v24).
constexpr int PTAIL_ON = 1 << 30;

struct Version {
    const char *name;
    MainFn main;
    size_t smem;
    CombineFn combine = nullptr;  // nullptr: flash_mla_hopper_combine
    // A main kernel for clusters of two row blocks (seesaw OPT_MCAST), used instead of `main`
    // when h = 128: the two row blocks of a query token then share every page and causal limit.
    MainFn main2 = nullptr;
    size_t smem2 = 0;
    // A main kernel that loads Q by TMA (seesaw OPT_Q_TMA), used instead of `main` when h allows
    // a row block to be one box (q_tma_ok); `main` runs the other h, and without it (nullptr)
    // validate refuses them.
    MainQFn mainq = nullptr;
    size_t smemq = 0;
    // `mainq` with the splits' merge in the kernel (seesaw OPT_CMERGE): the splits of a row
    // block run as one cluster and merge inside it (distributed shared memory, or with
    // cm_ws_cta a small workspace in L2), with no fp32 partials and no combine launch. Used instead of `mainq` when the plan has 2..CMERGE_MAXS splits.
    MainQFn mainc = nullptr;
    size_t smemc = 0;
    // Workspace bytes per CTA of `mainc` (seesaw OPT_CM_L2: the rows a CTA sends its peer go
    // through global memory); 0: the merge needs none.
    size_t cm_ws_cta = 0;
    // A persistent main kernel (seesaw OPT_PSTATIC, flash_mla_v21), used instead of `mainq` when
    // the plan has one split: one CTA an SM walks the b * row blocks, its int argument is b.
    MainQFn mainp = nullptr;
    size_t smemp = 0;
    // With `mainp` built with OPT_PTAIL: the merge of the cut tail row blocks (int: b, long long:
    // the main grid's CTAs), launched after it where tail_cut says so.
    CombineFn tailc = nullptr;
    // Threads a CTA of every main kernel of the version: NTHREADS (an idle producer warpgroup that
    // gives its registers to the consumers by setmaxnreg) or CONSUMERS (no producer warpgroup;
    // seesaw_cta / persist_cta with NT = CONSUMERS). Tilings carry it as warps = threads / 32.
    int threads = NTHREADS;
    // Every main kernel of the version waits (griddepcontrol.wait) before it touches global
    // memory, so all of them are launched with programmatic stream serialisation (PDL): their
    // launch, CTA start and prologue overlap the previous kernel in the stream, as FlashMLA's
    // main kernel does. A kernel without that wait must never be launched so.
    bool pdl = false;
    // `mainq` that also stores its bf16 rows by TMA (seesaw OPT_TMA_STORE, flash_mla_v41), with the
    // output's tensor map as a third argument; used instead of `mainq` when set (smemq bytes). Last, so
    // that the earlier versions' positional initialisers stay as they are.
    MainQOFn mainqo = nullptr;
    // A `mainqo` that walks whole row blocks (seesaw OPT_WALK, flash_mla_v42), used instead of it
    // when the plan has one split: one CTA an SM, min(SMs, b * row blocks) CTAs, its int argument
    // is b (smemq bytes). Last, for the same reason as `mainqo`.
    MainQOFn mainw = nullptr;
    // With `mainw`: the most row blocks the walk gives a CTA (0: any). When set, the walk runs only
    // where it has more row blocks than SMs and at most walk_max a CTA, and the static grid
    // (`mainqo`) runs the rest (flash_mla_v47: the walk gained at 2-4 row blocks a CTA and lost at
    // 8 and more, twenty-fourth session). Last, for the same reason as `mainqo`.
    int walk_max = 0;
    // Whether `mainw` is launched with PDL (with `pdl` set; a walk kernel built with PDLM_OFF must
    // not be). Last, for the same reason.
    bool walk_pdl = true;
    // One-split kernels for the problems whose pages each feed more than pair_sh query rows of a
    // request (s * h > pair_sh), used there instead of `mainqo` / `mainw`, with smem_pair bytes;
    // the walk one (`pairw`) is launched with PDL whenever `pdl` is set (flash_mla_v56: the
    // FlashMLA-schedule pair, fmpair_cta, where the pair is bound by the tensor pipe; v47's
    // kernels at s * h <= 128, where a page feeds two row blocks at most and the pair waits for
    // memory). Last, for the same reason as `mainqo`.
    MainQOFn pairqo = nullptr;
    MainQOFn pairw = nullptr;
    size_t smem_pair = 0;
    int pair_sh = 0;
    // A version for the problems whose pages each feed one row block (s * h <= BM: h = 16 at s = 1),
    // used instead of this one there in every step (validate, plan, stage configs, launch), with
    // the same grids and shared memory; prepare readies both. flash_mla_v68: v65's kernels without
    // the L2 hint there, chosen on the host, where v62 branched inside the shared load helper and
    // paid 1.2-1.6 % at b=64,s=1 for it (thirty-first session). Last, for the same reason as `mainqo`.
    const Version *narrow = nullptr;
    const Version &pick(const mla_problem *pb) const
    {
        return narrow && (long long)pb->s * pb->h <= BM ? *narrow : *this;
    }
    bool use_pair(const mla_problem *pb) const { return pairqo && (long long)pb->s * pb->h > pair_sh; }
    MainQOFn qo_fn(const mla_problem *pb) const { return use_pair(pb) ? pairqo : mainqo; }
    MainQOFn w_fn(const mla_problem *pb) const { return use_pair(pb) && pairw ? pairw : mainw; }
    bool w_pdl(const mla_problem *pb) const { return pdl && (use_pair(pb) && pairw ? true : walk_pdl); }
    size_t smem_qo(const mla_problem *pb) const { return use_pair(pb) ? smem_pair : smemq; }
    bool persist(const mla_problem *pb, int splits) const { return mainp && qtma(pb) && splits == 1; }
    bool walk(const mla_problem *pb, int splits, const mla_device_info *dev) const
    {
        if (!mainw || !qtma(pb) || splits != 1) return false;
        if (walk_max <= 0) return true;
        const long long items = (long long)pb->b * ((pb->s * pb->h + BM - 1) / BM);
        const long long sms = dev && dev->sm_count > 0 ? dev->sm_count : 132;
        return items > sms && items <= walk_max * sms;
    }
    CombineFn combine_fn() const { return combine ? combine : flash_mla_hopper_combine<DA>; }
    bool cluster2(const mla_problem *pb) const { return main2 && pb->h == 2 * BM; }
    bool qtma(const mla_problem *pb) const { return (mainq || mainqo || mainw) && !cluster2(pb) && q_tma_ok(pb->h); }
    bool cmerge(const mla_problem *pb, int splits) const
    {
        return mainc && qtma(pb) && splits >= 2 && splits <= CMERGE_MAXS;
    }
    // The shared memory of the main kernel that runs pb: the split planner's CTAs-per-SM bound
    // and validate's limit must see this one (a version without `main` has smem = 0). With a
    // merge kernel, the larger of the two (the split count is not known before the plan).
    size_t smem_for(const mla_problem *pb) const
    {
        if (cluster2(pb)) return smem2;
        if (qtma(pb)) {
            const size_t q = smem_qo(pb), m = mainc && smemc > q ? smemc : q;
            return mainp && smemp > m ? smemp : m;
        }
        return smem;
    }
};

inline bool tile_ok(const Version &v, const mla_tiling *t)
{
    return t->block_m == BM && t->block_n == BN && t->warps == v.threads / 32 && t->stages == STAGES;
}
// The NTHREADS tile (flash_mla_v4 and v8's own glue, which have no Version).
inline bool tile_ok(const mla_tiling *t) { return tile_ok(Version{}, t); }

// The tail row blocks the persistent kernel cuts (0: none). Items b * row blocks run in rounds of
// G CTAs; the last round's T < G row blocks (np pages each at most) then leave G - T SMs idle for
// np pages, and cut over all G CTAs they cost ~T np / G pages each, plus a fp32 partial per piece,
// the merge kernel (~2 us for T ~ 100) and its launch. In pages (~1.7 us each at h = 128 under
// load): cut when np (G - T) / G >= 4 + T / 32. That cuts b=32,s=8..128, b=64,s=16 and both
// b=128,s=2 rows, not s = 2 or 4 (T = 128 of G = 132 at s = 2: ~2 pages saved). Measured on the
// H200 (flash_mla_v24): no gain under the power cap, and a loss of 1-9 % where T >= 100.
inline int tail_cut(const Version &v, const mla_problem *pb, int splits, int grid_x)
{
    // (grid_x < 256: a CTA's piece list holds 256 pieces, and T < grid_x pieces can meet its range)
    if (!v.tailc || !v.persist(pb, splits) || grid_x <= 0 || grid_x >= 256) return 0;
    const long long items = (long long)pb->b * ((pb->s * pb->h + BM - 1) / BM);
    if (items <= grid_x) return 0;
    const long long T = items % grid_x, np = (pb->t + BN - 1) / BN;
    return T > 0 && 32 * np * (grid_x - T) >= (long long)grid_x * (128 + T) ? (int)T : 0;
}

inline SplitPlan resolve(const Version &v, const mla_tiling *t, const mla_problem *pb, const mla_device_info *dev)
{
    const int row_blocks = (pb->s * pb->h + BM - 1) / BM;
    SplitPlan r = plan_splits(row_blocks, pb->b, pb->t, BN, v.smem_for(pb), t->splits, dev,
                              (long long)pb->b * pb->s * pb->h, DA, false);
    if (v.cmerge(pb, r.splits)) {  // merged in the cluster: no partials, at most the merge's slices
        r.ws_o = v.cm_ws_cta * r.grid.x * r.grid.y * r.grid.z;
        r.ws_lse = 0;
    }
    if (v.persist(pb, r.splits) || v.walk(pb, r.splits, dev)) {  // one CTA an SM (one fits), at most one a row block
        const long long items = (long long)row_blocks * pb->b;
        const int sms = dev && dev->sm_count > 0 ? dev->sm_count : 132;
        r.grid = dim3((unsigned)(items < sms ? items : sms), 1, 1);
        if (tail_cut(v, pb, r.splits, (int)r.grid.x)) {  // two compact BM-row slots a CTA
            r.ws_o = (size_t)2 * r.grid.x * BM * DA * sizeof(float);
            r.ws_lse = (size_t)2 * r.grid.x * BM * sizeof(float);
        }
    }
    return r;
}

inline int validate(const Version &v0, const mla_tiling *t, const mla_problem *pb, const mla_device_info *dev,
                    char *w, size_t wl)
{
    const Version &v = v0.pick(pb);
    if (pb->design != MLA_DESIGN_FLASH_MLA) return why(w, wl, "%s runs the flash_mla design only", v.name);
    if (pb->k != DA || pb->p != DB || pb->page_size != BN)
        return why(w, wl, "%s is compiled for k=512, p=64, page 64", v.name);
    if (!tile_ok(v, t))
        return why(w, wl, "%s has one tile, block_m=64 block_n=64 warps=%d stages=2 (got %d/%d/%d/%d)", v.name,
                   v.threads / 32, t->block_m, t->block_n, t->warps, t->stages);
    if (t->splits < 0 || t->splits > 64) return why(w, wl, "splits=%d outside 0..64", t->splits);
    if ((v.mainq || v.mainqo) && !v.main && !q_tma_ok(pb->h))
        return why(w, wl, "%s loads Q by TMA in boxes of one row block: h must divide 64 or be a multiple of 64 "
                          "(got %d)", v.name, pb->h);
    const size_t smem = v.smem_for(pb);
    if (dev && dev->smem_per_block_optin && dev->smem_per_block_optin < smem)
        return why(w, wl, "%s needs %zu bytes of shared memory per block, the device allows %zu", v.name, smem,
                   (size_t)dev->smem_per_block_optin);
    return 1;
}

inline int stage_config(const Version &v0, const mla_tiling *t, const mla_problem *pb, const mla_device_info *dev,
                        int stage, mla_stage_config *cfg)
{
    const Version &v = v0.pick(pb);
    if (!tile_ok(v, t)) return 0;
    const SplitPlan r = resolve(v, t, pb, dev);
    if (stage == 0) {
        if (v.cluster2(pb))
            set_cfg(cfg, (const void *)v.main2, r.grid.x, r.grid.y, r.grid.z, v.threads, v.smem2);
        else if (v.cmerge(pb, r.splits))
            set_cfg(cfg, (const void *)v.mainc, r.grid.x, r.grid.y, r.grid.z, v.threads, v.smemc);
        else if (v.persist(pb, r.splits))
            set_cfg(cfg, (const void *)v.mainp, r.grid.x, r.grid.y, r.grid.z, v.threads, v.smemp);
        else if (v.walk(pb, r.splits, dev))
            set_cfg(cfg, (const void *)v.w_fn(pb), r.grid.x, r.grid.y, r.grid.z, v.threads, v.smem_qo(pb));
        else if (v.qtma(pb))
            set_cfg(cfg, v.mainqo ? (const void *)v.qo_fn(pb) : (const void *)v.mainq, r.grid.x, r.grid.y, r.grid.z,
                    v.threads, v.smem_qo(pb));
        else
            set_cfg(cfg, (const void *)v.main, r.grid.x, r.grid.y, r.grid.z, v.threads, v.smem);
        return 1;
    }
    const int tail = tail_cut(v, pb, r.splits, (int)r.grid.x);
    if (stage == 1 && tail) {
        set_cfg(cfg, (const void *)v.tailc, (unsigned)tail, BM / 8, 1, 256, 0);
        return 1;
    }
    if (stage == 1 && r.splits > 1 && !v.cmerge(pb, r.splits)) {
        set_cfg(cfg, (const void *)v.combine_fn(), (unsigned)((r.rows + 7) / 8), 1, 1, 256, 0);
        return 1;
    }
    return 0;
}

inline size_t workspace_bytes(const Version &v0, const mla_tiling *t, const mla_problem *pb, const mla_device_info *dev)
{
    const Version &v = v0.pick(pb);
    if (!tile_ok(v, t)) return 0;
    const SplitPlan r = resolve(v, t, pb, dev);
    return r.ws_o + r.ws_lse;
}

inline mla_status prepare(const Version &v, const mla_tiling *t)
{
    if (!tile_ok(v, t)) return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "%s: tile not compiled", v.name);
    if (v.narrow) {
        mla_status e = prepare(*v.narrow, t);
        if (e != MLA_STATUS_OK) return e;
    }
    if (v.main2) {
        mla_status e = set_smem((const void *)v.main2, v.smem2, "flash_mla hopper: cudaFuncSetAttribute");
        if (e != MLA_STATUS_OK) return e;
    }
    if (v.mainq) {
        mla_status e = set_smem((const void *)v.mainq, v.smemq, "flash_mla hopper: cudaFuncSetAttribute");
        if (e != MLA_STATUS_OK) return e;
    }
    if (v.mainqo) {
        mla_status e = set_smem((const void *)v.mainqo, v.smemq, "flash_mla hopper: cudaFuncSetAttribute");
        if (e != MLA_STATUS_OK) return e;
    }
    if (v.mainw) {
        mla_status e = set_smem((const void *)v.mainw, v.smemq, "flash_mla hopper: cudaFuncSetAttribute");
        if (e != MLA_STATUS_OK) return e;
    }
    if (v.pairqo) {
        mla_status e = set_smem((const void *)v.pairqo, v.smem_pair, "flash_mla hopper: cudaFuncSetAttribute");
        if (e != MLA_STATUS_OK) return e;
    }
    if (v.pairw) {
        mla_status e = set_smem((const void *)v.pairw, v.smem_pair, "flash_mla hopper: cudaFuncSetAttribute");
        if (e != MLA_STATUS_OK) return e;
    }
    if (v.mainc) {
        mla_status e = set_smem((const void *)v.mainc, v.smemc, "flash_mla hopper: cudaFuncSetAttribute");
        if (e != MLA_STATUS_OK) return e;
    }
    if (v.mainp) {
        mla_status e = set_smem((const void *)v.mainp, v.smemp, "flash_mla hopper: cudaFuncSetAttribute");
        if (e != MLA_STATUS_OK) return e;
    }
    return v.main ? set_smem((const void *)v.main, v.smem, "flash_mla hopper: cudaFuncSetAttribute") : MLA_STATUS_OK;
}

// cudaLaunchKernelEx with n launch attributes.
template <typename... K, typename... A>
cudaError_t launch_attrs(void (*fn)(K...), dim3 grid, unsigned threads, size_t smem, cudaStream_t st,
                         cudaLaunchAttribute *attrs, unsigned n, A &&...args)
{
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = grid;
    cfg.blockDim = dim3(threads);
    cfg.dynamicSmemBytes = smem;
    cfg.stream = st;
    cfg.attrs = attrs;
    cfg.numAttrs = n;
    return cudaLaunchKernelEx(&cfg, fn, std::forward<A>(args)...);
}

// cudaLaunchKernelEx with one launch attribute.
template <typename... K, typename... A>
cudaError_t launch_attr(void (*fn)(K...), dim3 grid, unsigned threads, size_t smem, cudaStream_t st,
                        cudaLaunchAttribute attr, A &&...args)
{
    return launch_attrs(fn, grid, threads, smem, st, &attr, 1, std::forward<A>(args)...);
}

inline cudaLaunchAttribute pdl_attr()
{
    cudaLaunchAttribute attr = {};
    attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr.val.programmaticStreamSerializationAllowed = 1;
    return attr;
}

inline cudaLaunchAttribute cluster_attr(dim3 cluster)
{
    cudaLaunchAttribute attr = {};
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = cluster.x;
    attr.val.clusterDim.y = cluster.y;
    attr.val.clusterDim.z = cluster.z;
    return attr;
}

// A launch with programmatic stream serialisation (PDL): its CTAs may start while the previous
// kernel in the stream still runs; the kernel's griddepcontrol.wait orders its reads.
template <typename... K, typename... A>
cudaError_t launch_pdl(void (*fn)(K...), dim3 grid, unsigned threads, size_t smem, cudaStream_t st, A &&...args)
{
    return launch_attr(fn, grid, threads, smem, st, pdl_attr(), std::forward<A>(args)...);
}

// A launch of `threads`-thread CTAs in clusters of `cluster` CTAs, with PDL when `pdl`.
template <typename... K, typename... A>
cudaError_t launch_cluster(void (*fn)(K...), dim3 grid, dim3 cluster, unsigned threads, size_t smem, cudaStream_t st,
                           bool pdl, A &&...args)
{
    cudaLaunchAttribute attrs[2] = {cluster_attr(cluster), pdl_attr()};
    return launch_attrs(fn, grid, threads, smem, st, attrs, pdl ? 2u : 1u, std::forward<A>(args)...);
}

// A main kernel's plain launch, or with PDL for a version whose main kernels wait for the
// previous grid (Version::pdl).
template <typename... K, typename... A>
cudaError_t launch_main(void (*fn)(K...), dim3 grid, unsigned threads, size_t smem, cudaStream_t st, bool pdl,
                        A &&...args)
{
    if (pdl) return launch_pdl(fn, grid, threads, smem, st, std::forward<A>(args)...);
    fn<<<grid, threads, smem, st>>>(std::forward<A>(args)...);
    return cudaGetLastError();
}

// The kernel arguments every hopper version shares: checks the tensors, builds the tensor map of
// the cache (a 2-D tensor [num_pages * 64 tokens][576 dims], read in 64 x 64 boxes) and fills
// LatentArgs.
inline mla_status latent_args(const Version &v, const mla_problem *pb, const mla_flash_mla_tensors *x,
                              CUtensorMap *tmap, LatentArgs *a)
{
    // Q rows are read as 16-byte vectors.
    if (((uintptr_t)x->q & 15u) || (x->q_strides[0] | x->q_strides[1] | x->q_strides[2]) & 7)
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT,
                        "%s: q must be 16-byte aligned with strides that are multiples of 8 elements", v.name);
    if (x->num_pages <= 0 || (long long)x->num_pages * BN > 0x7fffffffLL)
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "%s: num_pages=%d outside 1..%d", v.name, x->num_pages,
                        0x7fffffff / BN);
    mla_status e = tmap_bf16_2d_sw128(tmap, x->cache, DQK, (unsigned long long)x->num_pages * BN, DQK * sizeof(bf16),
                                      64, BN, v.name);
    if (e != MLA_STATUS_OK) return e;
    a->qa = (const bf16 *)x->q;
    a->qb = (const bf16 *)x->q + DA;
    for (int i = 0; i < 3; ++i) a->qa_s[i] = a->qb_s[i] = x->q_strides[i];
    a->cache = (const bf16 *)x->cache;
    a->block_table = x->block_table;
    a->bt_stride = x->block_table_stride ? x->block_table_stride : x->max_pages;
    a->page = pb->page_size;
    a->seqlens = x->seqlens;
    a->s = pb->s; a->h = pb->h; a->t = pb->t; a->causal = pb->causal; a->n_new = 0;
    a->out = (bf16 *)x->out;
    for (int i = 0; i < 3; ++i) a->os[i] = x->out_strides[i];
    a->lse = x->lse;
    return MLA_STATUS_OK;
}

// The query's tensor map for Q by TMA (seesaw OPT_Q_TMA, flash_mla_v8): 4-D over [b][s][h][576]
// with the caller's strides, read in boxes of one row block: {64 dims, h rows, 64 / h tokens}
// when h divides 64, {64 dims, 64 heads, 1 token} when 64 divides h. A dimension of extent 1 is
// never stepped, so its stride is replaced by a valid one (callers may pass 0 there).
// rowblock_tmap is that map for any [b][s][h][cols] bf16 tensor: o_tmap the output's (cols 512),
// which OPT_TMA_STORE writes in the same row-block boxes.
inline mla_status rowblock_tmap(const Version &v, const mla_problem *pb, const void *base, const int64_t *strides,
                                unsigned cols, const char *what, CUtensorMap *map)
{
    if (!q_tma_ok(pb->h))
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "%s: h=%d neither divides 64 nor is a multiple of 64", v.name,
                        pb->h);
    const unsigned long long dims[4] = {(unsigned long long)cols, (unsigned long long)pb->h, (unsigned long long)pb->s,
                                        (unsigned long long)pb->b};
    unsigned long long st[3];
    for (int i = 0; i < 3; ++i) {
        const long long e = strides[2 - i];
        st[i] = dims[i + 1] == 1 ? 16ull : (unsigned long long)e * sizeof(bf16);
        if (dims[i + 1] > 1 && e <= 0)
            return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "%s: %s stride %d is %lld", v.name, what, 2 - i, e);
    }
    const unsigned box[4] = {64u, (unsigned)(pb->h < BM ? pb->h : BM), (unsigned)(pb->h < BM ? BM / pb->h : 1), 1u};
    return tmap_bf16_sw128(map, base, 4, dims, st, box, v.name);
}
inline mla_status q_tmap(const Version &v, const mla_problem *pb, const mla_flash_mla_tensors *x, CUtensorMap *qmap)
{
    return rowblock_tmap(v, pb, x->q, x->q_strides, DQK, "q", qmap);
}
inline mla_status o_tmap(const Version &v, const mla_problem *pb, const mla_flash_mla_tensors *x, CUtensorMap *omap)
{
    return rowblock_tmap(v, pb, x->out, x->out_strides, DA, "out", omap);
}

inline mla_status launch(const Version &v0, const mla_tiling *t, const mla_launch_args *args)
{
    const mla_problem *pb = args->pb;
    const Version &v = v0.pick(pb);
    const mla_flash_mla_tensors *x = (const mla_flash_mla_tensors *)args->tensors;
    if (!tile_ok(v, t)) return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "%s: tile not compiled", v.name);
    const SplitPlan r = resolve(v, t, pb, args->dev);
    const int tail = tail_cut(v, pb, r.splits, (int)r.grid.x);  // the persistent kernel's cut tail
    if (args->workspace_bytes < r.ws_o + r.ws_lse)
        return mla_fail(MLA_STATUS_WORKSPACE_TOO_SMALL, "%s: workspace %zu < %zu bytes", v.name, args->workspace_bytes,
                        r.ws_o + r.ws_lse);
    CUtensorMap tmap;
    LatentArgs a;
    mla_status e = latent_args(v, pb, x, &tmap, &a);
    if (e != MLA_STATUS_OK) return e;
    TileOut to;
    to.partial = r.splits > 1;
    to.ws_o = (float *)args->workspace;
    to.ws_lse = (float *)((char *)args->workspace + r.ws_o);
    cudaStream_t st = (cudaStream_t)args->stream;
    const float sl2 = pb->scale * 1.4426950408889634f;
    if ((args->stage_mask & 1u) && v.cluster2(pb)) {
        // Row blocks 2k and 2k + 1 (one query token's 128 heads) form a cluster.
        cudaError_t ce =
            launch_cluster(v.main2, r.grid, dim3(2, 1, 1), v.threads, v.smem2, st, v.pdl, tmap, a, r.splits, sl2, to);
        if (ce != cudaSuccess) return cuda_fail(ce, "flash_mla hopper cluster launch");
    } else if ((args->stage_mask & 1u) && v.cmerge(pb, r.splits)) {
        // The splits of a row block (grid y) form a cluster and merge in it: no combine stage.
        CUtensorMap qmap;
        e = q_tmap(v, pb, x, &qmap);
        if (e != MLA_STATUS_OK) return e;
        cudaError_t ce = launch_cluster(v.mainc, r.grid, dim3(1, (unsigned)r.splits, 1), v.threads, v.smemc, st, v.pdl,
                                        tmap, qmap, a, r.splits, sl2, to);
        if (ce != cudaSuccess) return cuda_fail(ce, "flash_mla hopper merge-cluster launch");
    } else if ((args->stage_mask & 1u) && v.persist(pb, r.splits)) {
        CUtensorMap qmap;
        e = q_tmap(v, pb, x, &qmap);
        if (e != MLA_STATUS_OK) return e;
        cudaError_t ce = launch_main(v.mainp, r.grid, v.threads, v.smemp, st, v.pdl, tmap, qmap, a,
                                     pb->b | (tail ? PTAIL_ON : 0), sl2, to);
        if (ce != cudaSuccess) return cuda_fail(ce, v.name);
    } else if ((args->stage_mask & 1u) && v.walk(pb, r.splits, args->dev)) {
        CUtensorMap qmap, omap;
        e = q_tmap(v, pb, x, &qmap);
        if (e == MLA_STATUS_OK) e = o_tmap(v, pb, x, &omap);
        if (e != MLA_STATUS_OK) return e;
        cudaError_t ce = launch_main(v.w_fn(pb), r.grid, v.threads, v.smem_qo(pb), st, v.w_pdl(pb), tmap, qmap, omap,
                                     a, pb->b, sl2, to);
        if (ce != cudaSuccess) return cuda_fail(ce, v.name);
    } else if ((args->stage_mask & 1u) && v.qtma(pb)) {
        CUtensorMap qmap;
        e = q_tmap(v, pb, x, &qmap);
        if (e != MLA_STATUS_OK) return e;
        cudaError_t ce;
        if (v.mainqo) {
            CUtensorMap omap;
            e = o_tmap(v, pb, x, &omap);
            if (e != MLA_STATUS_OK) return e;
            ce = launch_main(v.qo_fn(pb), r.grid, v.threads, v.smem_qo(pb), st, v.pdl, tmap, qmap, omap, a, r.splits,
                             sl2, to);
        } else {
            ce = launch_main(v.mainq, r.grid, v.threads, v.smemq, st, v.pdl, tmap, qmap, a, r.splits, sl2, to);
        }
        if (ce != cudaSuccess) return cuda_fail(ce, v.name);
    } else if (args->stage_mask & 1u) {
        cudaError_t ce = launch_main(v.main, r.grid, v.threads, v.smem, st, v.pdl, tmap, a, r.splits, sl2, to);
        if (ce != cudaSuccess) return cuda_fail(ce, v.name);
    }
    if (tail && (args->stage_mask & 2u)) {
        // The merge's CTAs start while the persistent grid runs and wait in griddepcontrol.wait.
        cudaError_t ce = launch_pdl(v.tailc, dim3((unsigned)tail, BM / 8), 256, 0, st, a, pb->b, (long long)r.grid.x,
                                    (const float *)to.ws_o, (const float *)to.ws_lse);
        if (ce != cudaSuccess) return cuda_fail(ce, "flash_mla hopper tail merge launch");
    }
    if (r.splits > 1 && !v.cmerge(pb, r.splits) && (args->stage_mask & 2u)) {
        // The combine's CTAs are launched while the main grid's last wave runs and wait in
        // griddepcontrol.wait; graph capture keeps the edge.
        cudaError_t ce = launch_pdl(v.combine_fn(), dim3((unsigned)((r.rows + 7) / 8)), 256, 0, st, a, r.splits, r.rows,
                                    (const float *)to.ws_o, (const float *)to.ws_lse);
        if (ce != cudaSuccess) return cuda_fail(ce, "flash_mla hopper combine launch");
    }
    return MLA_STATUS_OK;
}

}  // namespace fmh
}  // namespace mla

// The registry entry of a hopper flash_mla version: thin callbacks over the shared glue.
#define MLA_FMH_REGISTER(sym, ver, not_default, note_text)                                                                   \
    namespace {                                                                                                \
    constexpr int kW = kVersion.threads / 32;                                                                  \
    const mla_tiling kCandidates[] = {                                                                         \
        {64, 64, kW, 2, 0}, {64, 64, kW, 2, 1}, {64, 64, kW, 2, 2}, {64, 64, kW, 2, 4}, {64, 64, kW, 2, 8},    \
    };                                                                                                         \
    int v_validate(const mla_tiling *t, const mla_problem *pb, const mla_device_info *d, char *w, size_t wl)  \
    {                                                                                                          \
        return mla::fmh::validate(kVersion, t, pb, d, w, wl);                                                  \
    }                                                                                                          \
    int v_stage(const mla_tiling *t, const mla_problem *pb, const mla_device_info *d, int s, mla_stage_config *c) \
    {                                                                                                          \
        return mla::fmh::stage_config(kVersion, t, pb, d, s, c);                                               \
    }                                                                                                          \
    size_t v_ws(const mla_tiling *t, const mla_problem *pb, const mla_device_info *d)                         \
    {                                                                                                          \
        return mla::fmh::workspace_bytes(kVersion, t, pb, d);                                                  \
    }                                                                                                          \
    mla_status v_prepare(const mla_tiling *t, const mla_problem *, const mla_device_info *)                    \
    {                                                                                                          \
        return mla::fmh::prepare(kVersion, t);                                                                 \
    }                                                                                                          \
    mla_status v_launch(const mla_tiling *t, const mla_launch_args *a) { return mla::fmh::launch(kVersion, t, a); } \
    }                                                                                                          \
    extern "C" const mla_kernel_version sym = {                                                                \
        kVersion.name, MLA_DESIGN_FLASH_MLA, ver, MLA_TIER_HOPPER, MLA_TARGET_SM90A, note_text, 2,            \
        {"main", "combine", nullptr, nullptr}, (int)(sizeof kCandidates / sizeof kCandidates[0]), kCandidates, \
        v_validate, v_stage, v_ws, v_prepare, v_launch, not_default,                                           \
    };
