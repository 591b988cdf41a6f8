// flash_mla_v46 (hopper, sm_90a only): flash_mla_v41 whose one-split kernel asks L2 for the next
// wave's Q tiles (and first pages) late in its own run (OPT_NEXTQ): the idle producer
// warpgroup's thread 0 sleeps until ~6 pairs before its CTA's loop ends, then issues nine
// cp.async.bulk.prefetch.tensor boxes for the Q tile of the CTA one wave later in launch order,
// and 18 for that CTA's first two pages when it is its request's row block 0. The consumers'
// code is v41's. The merge kernel is v41's.
//
// Why (twenty-fifth session): the one-split grids run in waves whose CTAs start together (the
// probe's SMs 0-2 end each CTA within ~0.5 us of each other at b=32,s=16) and read Q and their
// first two pages from DRAM: a later wave's CTA reached its first S_A ~8800 SM cycles after its
// start (twenty-fourth session, CTA 200) against ~5900 with 32 SMs loading (twentieth). With its
// Q (and pages) in L2 the start should come down by ~2000-3000 cycles a CTA.
// Prediction (written before the run): 0.5-1.5 % on the multi-wave one-split rows (s >= 4 at
// b=32, b=64,s=16, both b=128,s=2 rows), nothing on one-wave rows (b=32,s=1/2, b=64,s=1,
// b=128,s=1 at h=128 has 256 CTAs: two waves, so it may gain too). It may lose as v23 did if the
// prefetches evict pages the current wave still reads.
#include "flash_mla_seesaw.cuh"

namespace {
using namespace mla;
using namespace mla::seesaw;

constexpr long long kOpt = OPT_V6 | OPT_LAZY_MAX | OPT_Q_TMA | OPT_ONE_FINISH | OPT_NOMAX;  // v41's
constexpr long long kMergeOpt = (kOpt & ~OPT_SPEC_B) | OPT_CMERGE | OPT_CM_PUSH | OPT_CM_L2 | OPT_CM_SENTMAX;  // v41's

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v46(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
              const __grid_constant__ CUtensorMap omap, const __grid_constant__ LatentArgs a, int nsplits,
              float sl2, TileOut to)
{
    seesaw_cta<false, kOpt | OPT_TMA_STORE | OPT_NEXTQ, NTHREADS, PDLM_WAIT>(&tmap, a, nsplits, sl2, to, Plan{}, &qmap,
                                                                              &omap);
}

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v46_merge(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
                    const __grid_constant__ LatentArgs a, int nsplits, float sl2, TileOut to)
{
    seesaw_cta<false, kMergeOpt, NTHREADS, PDLM_WAIT>(&tmap, a, nsplits, sl2, to, Plan{}, &qmap);
}

// As v41: mainqo (the last field) runs every Q-by-TMA plan with one split or more than two.
constexpr fmh::Version kVersion = {"flash_mla_v46", nullptr,     0,         fmh::flash_mla_hopper_combine_mlp<DA>,
                                   nullptr,         0,           nullptr,   MSMEM_BYTES,
                                   flash_mla_v46_merge, MSMEM_BYTES, CM_WS_CTA, nullptr,
                                   0,               nullptr,     NTHREADS,  true,
                                   flash_mla_v46};

}  // namespace

MLA_FMH_REGISTER(mla_kv_flash_mla_v46, 46, 1,
                 "hopper: v41 with the next wave's Q tiles and first pages asked of L2 late by the idle producer warp")
