// flash_mla_v2 (hopper, sm_90a only): flash_mla_v1 with PV(j) and QK^T(j+1) chained on the
// tensor cores.
//
// Same math, tile and warpgroup roles as v1 (flash_mla_hopper.cuh: producer warpgroup with TMA
// pages on a 2-stage mbarrier ring, two consumer warpgroups splitting S by tokens and O by
// columns). v1 waits for every wgmma batch on its own: QK^T(j), wait, softmax(j), PV(j), wait.
// v2 issues PV(j) and QK^T(j+1) back to back and waits for them in order:
//
//     issue PV(j); issue QK^T(j+1); wait PV(j) -> release page j; wait QK^T(j+1);
//     softmax(j+1); rescale O; barrier (P(j+1) complete)
//
// so the tensor pipe gets one batch of 4 + 36 wgmmas per page instead of two, and page j goes
// back to the producer as early as in v1. (The first v2 issued QK^T(j+1) before PV(j) to run
// the softmax under PV; with two stages that releases each page only after the next softmax,
// exposing the TMA latency of every page: measured 15-30 % slower, see the devlog.)
//
// P(j+1) goes into the page's own RoPE box (dims 512..575): dead once both consumers' QK^T(j+1)
// are done (the max-exchange barrier says so), and PV only reads dims 0..511. So P needs no
// tile of its own, and P(j+1) never overwrites the P(j) that PV(j) may still be reading.
//
// Tiling knobs: as v1 (block_m 64, block_n 64, warps 12, stages 2 fixed; splits free).
#include "flash_mla_hopper.cuh"

namespace {
using namespace mla;
using namespace mla::fmh;

constexpr size_t OFF_Q = 0;
constexpr size_t OFF_K = OFF_Q + TILE_BYTES;
constexpr size_t OFF_RED = OFF_K + (size_t)STAGES * TILE_BYTES;  // float [2][64]: row max / row sum
constexpr size_t OFF_BAR = OFF_RED + 2 * BM * sizeof(float);      // full[STAGES], empty[STAGES]
constexpr size_t SMEM_BYTES = OFF_BAR + 2 * STAGES * sizeof(uint64_t) + 1024;  // + base alignment
constexpr int P_BOX = NBOX - 1;  // the RoPE box of a page, reused for P after QK^T
static_assert(SMEM_BYTES <= SMEM_OPTIN_MAX, "flash_mla_v2 exceeds the 227 KB shared-memory opt-in");
static_assert(OFF_K % 1024 == 0, "swizzled tiles need 1024-byte alignment");

// Consumer state of one warpgroup: its output columns, running max / sum and row limits.
struct Consumer {
    int w, ct, lane, c4, r0, r1, lim0, lim1;
    float m_run0, m_run1, l_run0, l_run1;
};

// S(16 regs) = Q . K^T for tokens [32w, 32w + 32) of the page at k_base: issued, committed, not waited.
__device__ __forceinline__ void issue_qk(uint32_t q_base, uint32_t k_base, int w, float (&s)[16])
{
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
}

// O(64 x 256 of this warpgroup) += P . V of the page at k_base (P in its RoPE box): issued, committed.
__device__ __forceinline__ void issue_pv(uint32_t k_base, int w, float (&o)[128])
{
    reg_fence(o);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < BN / 16; ++kk)
        wgmma_m64n256k16_ss<1>(o, gmma_desc_sw128(k_base + P_BOX * BOX_BYTES + kk * 32, 16, 1024),
                               gmma_desc_sw128(k_base + 4 * w * BOX_BYTES + kk * 16 * 128, BOX_BYTES, 1024), 1);
    wgmma_commit();
}

// Softmax of page j from S (already complete): mask, exchange row maxima (bar 1), zero the V
// tail, write P into the page's RoPE box, update the running sums. Returns the O rescale
// factors. Ends with the proxy fence; the caller's bar 2 publishes P.
__device__ __forceinline__ void softmax_page(const LatentPolicy<DA, DB> &pol, int j, char *sK, float *red,
                                             float sl2, Consumer &c, float (&s)[16], float &al0, float &al1)
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
    mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, 1));
    mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, 2));
    mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, 1));
    mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, 2));
    if (c.c4 == 0) {
        red[c.w * BM + c.r0] = mx0;
        red[c.w * BM + c.r1] = mx1;
    }
    // Both maxima are in, and both consumers' QK^T of this page is complete: K is dead.
    named_bar_sync(1, CONSUMERS);
    const float mn0 = fmaxf(c.m_run0, fmaxf(red[c.r0], red[BM + c.r0]));
    const float mn1 = fmaxf(c.m_run1, fmaxf(red[c.r1], red[BM + c.r1]));
    const float mu0 = mn0 == -CUDART_INF_F ? 0.f : mn0;  // a row with nothing visible yet
    const float mu1 = mn1 == -CUDART_INF_F ? 0.f : mn1;
    al0 = exp2f(c.m_run0 - mu0);
    al1 = exp2f(c.m_run1 - mu1);
    c.m_run0 = mn0;
    c.m_run1 = mn1;
    zero_tail_rows(pol, j, c.ct, sK);

    char *sP = sK + P_BOX * BOX_BYTES;
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

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v2(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ LatentArgs a, int nsplits,
             float sl2, TileOut to)
{
    extern __shared__ char smem_raw[];
    char *smem = smem_raw + ((1024 - (smem_addr(smem_raw) & 1023)) & 1023);
    pdl_launch_dependents();  // the combine waits (griddepcontrol.wait) for our completion

    const int tid = threadIdx.x, wg = tid >> 7;
    LatentPolicy<DA, DB> pol(&a, blockIdx.z);
    const KvRange kr = kv_range(pol, blockIdx.x * BM, blockIdx.y, nsplits);
    uint64_t *full = reinterpret_cast<uint64_t *>(smem + OFF_BAR);
    uint64_t *empty = full + STAGES;
    if (tid == 0) init_barriers(full, empty);
    __syncthreads();

    if (wg == 0) {  // ------------------------------------------------------------ producer
        setmaxnreg_dec<40>();
        if (tid == 0) produce_pages(&tmap, a, pol.r, kr.b0, kr.b1, smem + OFF_K, full, empty);
        return;
    }

    // --------------------------------------------------------------------------- consumers
    setmaxnreg_inc<232>();
    Consumer c;
    c.w = wg - 1;
    c.ct = tid - 128;
    c.lane = tid & 31;
    c.c4 = c.lane & 3;
    c.r0 = 16 * ((tid >> 5) & 3) + (c.lane >> 2);
    c.r1 = c.r0 + 8;
    c.lim0 = kr.m0 + c.r0 < pol.rows ? pol.row_limit(kr.m0 + c.r0) : 0;
    c.lim1 = kr.m0 + c.r1 < pol.rows ? pol.row_limit(kr.m0 + c.r1) : 0;
    c.m_run0 = c.m_run1 = -CUDART_INF_F;
    c.l_run0 = c.l_run1 = 0.f;
    float *red = reinterpret_cast<float *>(smem + OFF_RED);
    load_q(pol, kr.m0, c.ct, smem + OFF_Q);
    named_bar_sync(1, CONSUMERS);
    const uint32_t q_base = smem_addr(smem + OFF_Q);
    auto stage_ptr = [&](int i) { return smem + OFF_K + (size_t)(i % STAGES) * TILE_BYTES; };

    float o[128];
#pragma unroll
    for (int i = 0; i < 128; ++i) o[i] = 0.f;
    float s[16];

    // Prologue: page b0's scores and P.
    if (kr.b0 < kr.b1) {
        wait_parity(&full[0], 0);
        issue_qk(q_base, smem_addr(stage_ptr(0)), c.w, s);
        wgmma_wait<0>();
        reg_fence(s);
        float al0, al1;  // O is still zero: nothing to rescale
        softmax_page(pol, kr.b0, stage_ptr(0), red, sl2, c, s, al0, al1);
        named_bar_sync(2, CONSUMERS);
    }
    // Steady state: every page but the last has a successor. The last page is peeled off so
    // that the loop body has a fixed commit-group order (ptxas keeps the wgmmas asynchronous
    // only when it can see which wait retires which group).
    int i = 0;
    for (int j = kr.b0; j + 1 < kr.b1; ++j, ++i) {
        issue_pv(smem_addr(stage_ptr(i)), c.w, o);
        wait_parity(&full[(i + 1) % STAGES], ((i + 1) / STAGES) & 1);
        issue_qk(q_base, smem_addr(stage_ptr(i + 1)), c.w, s);
        wgmma_wait<1>();  // groups retire in order: PV(j) is done, QK^T(j+1) may still run
        reg_fence(o);
        __syncwarp();
        if (c.lane == 0) ptx::mbarrier_arrive(&empty[i % STAGES]);  // page j free for the producer
        wgmma_wait<0>();
        reg_fence(s);
        float al0, al1;
        softmax_page(pol, j + 1, stage_ptr(i + 1), red, sl2, c, s, al0, al1);
#pragma unroll
        for (int n = 0; n < 32; ++n) {
            o[4 * n] *= al0;
            o[4 * n + 1] *= al0;
            o[4 * n + 2] *= al1;
            o[4 * n + 3] *= al1;
        }
        named_bar_sync(2, CONSUMERS);  // P(j+1) of both consumers (and the zeroed V tail) written
    }
    if (kr.b0 < kr.b1) {  // the last page: PV only
        issue_pv(smem_addr(stage_ptr(i)), c.w, o);
        wgmma_wait<0>();
        reg_fence(o);
        // (no release: the producer has nothing left to load)
    }

    // Row sums: this thread's columns -> the quad -> both consumers.
    float l0 = c.l_run0, l1 = c.l_run1;
    l0 += __shfl_xor_sync(0xffffffffu, l0, 1);
    l0 += __shfl_xor_sync(0xffffffffu, l0, 2);
    l1 += __shfl_xor_sync(0xffffffffu, l1, 1);
    l1 += __shfl_xor_sync(0xffffffffu, l1, 2);
    // Safe to reuse `red`: the other consumer read its last maxima before the last bar 2.
    if (c.c4 == 0) {
        red[c.w * BM + c.r0] = l0;
        red[c.w * BM + c.r1] = l1;
    }
    named_bar_sync(1, CONSUMERS);
    const float lt[2] = {red[c.r0] + red[BM + c.r0], red[c.r1] + red[BM + c.r1]};
    const float mr[2] = {c.m_run0, c.m_run1};
    store_rows(pol, to, nsplits, blockIdx.y, kr, c.w, c.r0, c.c4, o, lt, mr);
}

constexpr fmh::Version kVersion = {"flash_mla_v2", flash_mla_v2, SMEM_BYTES};

}  // namespace

MLA_FMH_REGISTER(mla_kv_flash_mla_v2, 2, 1,
                 "hopper: v1 with PV(j) and QK^T(j+1) chained (one wgmma batch per page), P in the page's RoPE box")
