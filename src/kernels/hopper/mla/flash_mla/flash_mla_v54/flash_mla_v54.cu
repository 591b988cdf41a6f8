// flash_mla_v54 (hopper, sm_90a only): the one-split static grid run by a pair written to
// FlashMLA's SM90 schedule as a whole (fmpair_cta, src/kernels/common/flash_mla_fmpair.cuh): 256
// threads, no producer warpgroup, serial softmaxes each under the other warpgroup's GEMM,
// warpgroup 1's own page's PV first, P_A stored at B's max in a box of its own, S_B' run into
// the next softmax A. One-split plans of 2-4 row blocks an SM walk them (fmpair_cta's item loop,
// launched with PDL); plans with 2+ splits run v47's merge kernel in 256-thread CTAs (v25's form).
//
// Why (twenty-ninth session): FlashMLA's split kernel is ~3.5 % faster per page at b=32,s=2
// (1980 MHz timeline, twenty-eighth session) and spent 5.7-8.5 % fewer SM cycles at s >= 8
// (ncu, twenty-seventh); each piece of its pair grafted onto seesaw_cta alone was level or slower.
// Prediction (written before the run): the pair >= 3 % shorter than v47's at s=16 and s=2 if the
// schedule is what FlashMLA gains by; level if its gain is elsewhere (its exact max, Q's RoPE box
// in registers, its 132 CTAs).
#include "flash_mla_fmpair.cuh"

namespace {
using namespace mla;
using namespace mla::seesaw;

constexpr long long kOpt = OPT_V6 | OPT_LAZY_MAX | OPT_Q_TMA | OPT_ONE_FINISH | OPT_NOMAX;  // v41's
constexpr long long kMergeOpt = (kOpt & ~OPT_SPEC_B) | OPT_CMERGE | OPT_CM_PUSH | OPT_CM_L2 | OPT_CM_SENTMAX;  // v41's

__global__ void __launch_bounds__(CONSUMERS, 1)
flash_mla_v54(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
              const __grid_constant__ CUtensorMap omap, const __grid_constant__ LatentArgs a, int nsplits,
              float sl2, TileOut to)
{
    fmpair::fmpair_cta<kOpt | OPT_TMA_STORE, fmpair::FM_STATIC, CONSUMERS>(&tmap, a, nsplits, sl2, to, &qmap, &omap);
}

// The walk of one-split plans with 2-4 row blocks an SM (as v47's): fmpair_cta's item loop.
__global__ void __launch_bounds__(CONSUMERS, 1)
flash_mla_v54_walk(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
                   const __grid_constant__ CUtensorMap omap, const __grid_constant__ LatentArgs a, int b, float sl2,
                   TileOut to)
{
    fmpair::fmpair_cta<kOpt | OPT_TMA_STORE, fmpair::FM_WALK, CONSUMERS>(&tmap, a, b, sl2, to, &qmap, &omap);
}

__global__ void __launch_bounds__(CONSUMERS, 1)
flash_mla_v54_merge(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
                    const __grid_constant__ LatentArgs a, int nsplits, float sl2, TileOut to)
{
    seesaw_cta<false, kMergeOpt, CONSUMERS, PDLM_WAIT>(&tmap, a, nsplits, sl2, to, Plan{}, &qmap);
}

constexpr fmh::Version kVersion = {"flash_mla_v54", nullptr,     0,         fmh::flash_mla_hopper_combine_mlp<DA>,
                                   nullptr,         0,           nullptr,   fmpair::SMEM_BYTES,
                                   flash_mla_v54_merge, MSMEM_BYTES, CM_WS_CTA, nullptr,
                                   0,               nullptr,     CONSUMERS, true,
                                   flash_mla_v54,   flash_mla_v54_walk, 4, true};

}  // namespace

MLA_FMH_REGISTER(mla_kv_flash_mla_v54, 54, 1,
                 "hopper: one-split plans by a pair in FlashMLA's schedule (256 threads, serial softmaxes, P_A at "
                 "B's max in its own box; walks 2-4 row blocks an SM); v47's merge kernel in 256-thread CTAs (measured "
                 "level with or behind v55)")
