// flash_mla_v55 (hopper, sm_90a only): flash_mla_v47 with its one-split static grid and its walk
// run by the FlashMLA-schedule pair (fmpair_cta, src/kernels/common/flash_mla_fmpair.cuh) in
// 384-thread CTAs: the third warpgroup leaves at once and gives its registers away (232 for the
// math warpgroups), so that v47's merge kernel (plans with 2+ splits) keeps its tile. The walk
// (one-split plans of 2-4 row blocks an SM) is fmpair_cta's item loop, launched with PDL.
//
// Why (twenty-ninth session): flash_mla_v54 (the same pair in 256-thread CTAs, 255 registers)
// was 2-3.5 % faster than v47 on the one-split rows in its first call (first-10 medians, FlashMLA
// beside). v55 keeps v47's tile for the other kernels and measures the pair at 232 registers.
// Prediction (written before the run): v54's times on the one-split rows if 232 registers hold
// the pair without spills (ptxas: none), v47's on the merge rows (b=32,s=1).
#include "flash_mla_fmpair.cuh"

namespace {
using namespace mla;
using namespace mla::seesaw;

constexpr long long kOpt = OPT_V6 | OPT_LAZY_MAX | OPT_Q_TMA | OPT_ONE_FINISH | OPT_NOMAX;  // v41's
constexpr long long kMergeOpt = (kOpt & ~OPT_SPEC_B) | OPT_CMERGE | OPT_CM_PUSH | OPT_CM_L2 | OPT_CM_SENTMAX;  // v41's

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v55(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
              const __grid_constant__ CUtensorMap omap, const __grid_constant__ LatentArgs a, int nsplits,
              float sl2, TileOut to)
{
    fmpair::fmpair_cta<kOpt | OPT_TMA_STORE | OPT_P_STSM, fmpair::FM_STATIC, NTHREADS>(&tmap, a, nsplits, sl2, to, &qmap, &omap);
}

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v55_walk(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
                   const __grid_constant__ CUtensorMap omap, const __grid_constant__ LatentArgs a, int b, float sl2,
                   TileOut to)
{
    fmpair::fmpair_cta<kOpt | OPT_TMA_STORE | OPT_P_STSM, fmpair::FM_WALK, NTHREADS>(&tmap, a, b, sl2, to, &qmap, &omap);
}

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v55_merge(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
                    const __grid_constant__ LatentArgs a, int nsplits, float sl2, TileOut to)
{
    seesaw_cta<false, kMergeOpt, NTHREADS, PDLM_WAIT>(&tmap, a, nsplits, sl2, to, Plan{}, &qmap);
}

constexpr fmh::Version kVersion = {"flash_mla_v55", nullptr,     0,         fmh::flash_mla_hopper_combine_mlp<DA>,
                                   nullptr,         0,           nullptr,   fmpair::SMEM_BYTES,
                                   flash_mla_v55_merge, MSMEM_BYTES, CM_WS_CTA, nullptr,
                                   0,               nullptr,     NTHREADS,  true,
                                   flash_mla_v55,   flash_mla_v55_walk, 4, true};

}  // namespace

MLA_FMH_REGISTER(mla_kv_flash_mla_v55, 55, 1,
                 "hopper: v47 with its one-split grid and walk run by the FlashMLA-schedule pair (fmpair_cta) in "
                 "384-thread CTAs; v47's merge kernel (measured: 1.5-2.9 % faster than v47 at s >= 2, slower at "
                 "b=128,s=1; v56 takes it where it gains)")
