// flash_mla_v10 (hopper, sm_90a only): flash_mla_v9 with each page read from L2 once per pair of
// row blocks (OPT_MCAST, src/kernels/common/flash_mla_seesaw.cuh).
//
// At h = 128 the two row blocks of a query token read the same pages with the same causal
// limits, and every pair of pages waits at its end for the two reloads it released: the TMA page
// probe (scripts/probe/tma_bw.cu) measured ~1130 SM cycles for a 72 KB page from L2 with one CTA
// loading and ~2000 with all 132 SMs loading at once, so the reload time is set by how much the
// whole GPU asks of L2, not by one SM's path. Here those two row blocks run as a cluster of two
// CTAs; each loads one of the two reload groups of a stage with a multicast TMA into both, so
// L2 serves half the bytes. A producer thread per CTA (warp 0 of the warpgroup v5-v9 leave idle)
// issues the reloads once the group's last reader in both CTAs has released it.
//
// Other h (16, 32, 64: a row block spans several tokens, or one token per row block with
// different limits) run v9's kernel, compiled here a second time under this version's name.
//
// Measured 2026-11-30 (docs/kernels/flash_mla.md, v10), first build: correct (86 test cases,
// sanitizers clean) but 12-30 % slower than v9 at h = 128; registered not_default. The probe
// took it apart: the producer thread alone costs nothing (pair 5538 vs v9's 5545 cycles at
// s=16), the cross-CTA release costs everything (7452 with each CTA loading its own pages, 7573
// with the multicast), and on consumer 0's timeline the cost sits between its PV wait and the
// next barrier, where only the release runs. Its arrive was mbarrier.arrive.release.cluster,
// which ptxas brackets with MEMBAR.ALL.GPU. The current build arrives with the default
// semantics (release at CTA scope, as CUTLASS's cluster barrier) and starts with a relaxed
// cluster barrier: no MEMBAR.ALL.GPU is left in the loop. Timed in the eighth session (86 cases,
// sanitizers clean): it ties v9 on every row (0.96-1.10 of v9's time in one run; probe pair 5575
// vs 5561 cycles at s=16). Halving the L2 reads did not shorten the pair, so the reloads wait on
// latency, not on L2 bandwidth; not_default.
#include "flash_mla_seesaw.cuh"

namespace {
using namespace mla;
using namespace mla::seesaw;

constexpr int kOpt = OPT_V6 | OPT_LAZY_MAX;

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v10(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ LatentArgs a, int nsplits,
              float sl2, TileOut to)
{
    seesaw_cta<false, kOpt | OPT_MCAST>(&tmap, a, nsplits, sl2, to, Plan{});
}

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v10_single(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ LatentArgs a, int nsplits,
                     float sl2, TileOut to)
{
    seesaw_cta<false, kOpt>(&tmap, a, nsplits, sl2, to, Plan{});
}

constexpr fmh::Version kVersion = {"flash_mla_v10", flash_mla_v10_single, SMEM_BYTES,
                                   fmh::flash_mla_hopper_combine_mlp<DA>, flash_mla_v10, MSMEM_BYTES};

}  // namespace

MLA_FMH_REGISTER(mla_kv_flash_mla_v10, 10, 1,
                 "hopper: v9 with clusters of two row blocks at h=128 that share each page through a multicast TMA "
                 "(ties v9: halving the L2 reads does not shorten the pair)")
