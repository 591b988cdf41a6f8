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
static_assert(SMEM_BYTES <= SMEM_OPTIN_MAX, "flash_mla_v2 exceeds the 227 KB shared-memory opt-in");
static_assert(OFF_K % 1024 == 0, "swizzled tiles need 1024-byte alignment");

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
    Consumer c = make_consumer(pol, kr, tid);
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
        softmax_page(pol, kr.b0, stage_ptr(0), stage_ptr(0) + P_BOX * BOX_BYTES, red, sl2, c, s, al0, al1);
        named_bar_sync(2, CONSUMERS);
    }
    // Steady state: every page but the last has a successor. The last page is peeled off so
    // that the loop body has a fixed commit-group order (ptxas keeps the wgmmas asynchronous
    // only when it can see which wait retires which group).
    int i = 0;
    for (int j = kr.b0; j + 1 < kr.b1; ++j, ++i) {
        issue_pv_ss(o, smem_addr(stage_ptr(i)), c.w);
        wait_parity(&full[(i + 1) % STAGES], ((i + 1) / STAGES) & 1);
        issue_qk(q_base, smem_addr(stage_ptr(i + 1)), c.w, s);
        wgmma_wait<1>();  // groups retire in order: PV(j) is done, QK^T(j+1) may still run
        reg_fence(o);
        __syncwarp();
        if (c.lane == 0) ptx::mbarrier_arrive(&empty[i % STAGES]);  // page j free for the producer
        wgmma_wait<0>();
        reg_fence(s);
        float al0, al1;
        softmax_page(pol, j + 1, stage_ptr(i + 1), stage_ptr(i + 1) + P_BOX * BOX_BYTES, red, sl2, c, s, al0,
                     al1);
        scale_o(o, al0, al1);
        named_bar_sync(2, CONSUMERS);  // P(j+1) of both consumers (and the zeroed V tail) written
    }
    if (kr.b0 < kr.b1) {  // the last page: PV only
        issue_pv_ss(o, smem_addr(stage_ptr(i)), c.w);
        wgmma_wait<0>();
        reg_fence(o);
        // (no release: the producer has nothing left to load)
    }

    finish(pol, to, nsplits, blockIdx.y, kr, c, red, o);
}

constexpr fmh::Version kVersion = {"flash_mla_v2", flash_mla_v2, SMEM_BYTES};

}  // namespace

MLA_FMH_REGISTER(mla_kv_flash_mla_v2, 2, 1,
                 "hopper: v1 with PV(j) and QK^T(j+1) chained (one wgmma batch per page), P in the page's RoPE box")
