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
//   a shared P tile; then each accumulates its own 256 of the 512 output columns
//   (wgmma m64n256k16, P from shared memory, V = the first 512 dims of the same page read
//   MN-major: no transposed copy of the cache). The page goes back to the producer when both
//   consumers' PV has completed. Every phase waits for the previous one, so the tensor cores
//   idle during each softmax (flash_mla_v2 tried two reorderings; see docs/kernels/flash_mla.md).
// - Split-KV: each split writes a normalised fp32 partial and its lse; the combine is launched
//   with programmatic dependent launch so that its launch overlaps the main grid's tail.
//
// Tiling knobs: block_m = 64, block_n = 64 (one page), warps = 12, stages = 2 are fixed by the
// shared-memory budget (Q 72 KB + 2 x 72 KB + P 8 KB); splits is free (0 = from the SM count).
#include "flash_mla_hopper.cuh"

namespace {
using namespace mla;
using namespace mla::fmh;

constexpr size_t OFF_Q = 0;
constexpr size_t OFF_K = OFF_Q + TILE_BYTES;
constexpr size_t OFF_P = OFF_K + (size_t)STAGES * TILE_BYTES;
constexpr size_t OFF_RED = OFF_P + BOX_BYTES;                // float [2][64]: row max / row sum
constexpr size_t OFF_BAR = OFF_RED + 2 * BM * sizeof(float); // full[STAGES], empty[STAGES]
constexpr size_t SMEM_BYTES = OFF_BAR + 2 * STAGES * sizeof(uint64_t) + 1024;  // + base alignment
static_assert(SMEM_BYTES <= SMEM_OPTIN_MAX, "flash_mla_v1 exceeds the 227 KB shared-memory opt-in");
static_assert(OFF_K % 1024 == 0 && OFF_P % 1024 == 0, "swizzled tiles need 1024-byte alignment");

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
    Consumer c = make_consumer(pol, kr, tid);  // w: which 32 tokens of S, which 256 columns of O
    char *sP = smem + OFF_P;
    float *red = reinterpret_cast<float *>(smem + OFF_RED);
    load_q(pol, kr.m0, c.ct, smem + OFF_Q);
    named_bar_sync(1, CONSUMERS);

    const uint32_t q_base = smem_addr(smem + OFF_Q), p_base = smem_addr(sP);

    float o[128];
#pragma unroll
    for (int i = 0; i < 128; ++i) o[i] = 0.f;

    for (int j = kr.b0, i = 0; j < kr.b1; ++j, ++i) {
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
                                  gmma_desc_sw128(k_base + koff + c.w * 32 * 128, 16, 1024), kk > 0);
        }
        wgmma_commit();
        wgmma_wait<0>();
        reg_fence(s);

        float al0, al1;
        softmax_page(pol, j, sK, sP, red, sl2, c, s, al0, al1);
        named_bar_sync(2, CONSUMERS);  // all of P (and the zeroed V rows) written

        // O[:, 256w .. 256w + 256) = O * alpha + P . V
        scale_o(o, al0, al1);
        reg_fence(o);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BN / 16; ++kk)
            wgmma_m64n256k16_ss<1>(o, gmma_desc_sw128(p_base + kk * 32, 16, 1024),
                                   gmma_desc_sw128(k_base + 4 * c.w * BOX_BYTES + kk * 16 * 128, BOX_BYTES, 1024), 1);
        wgmma_commit();
        wgmma_wait<0>();
        reg_fence(o);
        __syncwarp();
        if (c.lane == 0) ptx::mbarrier_arrive(&empty[st]);  // stage free for the producer
    }

    finish(pol, to, nsplits, blockIdx.y, kr, c, red, o);
}

constexpr fmh::Version kVersion = {"flash_mla_v1", flash_mla_v1, SMEM_BYTES};

}  // namespace

MLA_FMH_REGISTER(mla_kv_flash_mla_v1, 1, 0,
                 "hopper: TMA pages on mbarriers, producer + 2 consumer warpgroups, wgmma QK^T/PV, split-KV + PDL combine")
