// flash_mla_v47 (hopper, sm_90a only): flash_mla_v41 with flash_mla_v44's walk where it gained:
// a one-split plan with more row blocks than SMs and at most four a CTA (Version::walk_max = 4:
// b=32 at s=4 and s=8, b=128,h=128 at s=1 and s=2) runs the walk kernel, launched without PDL;
// every other plan runs v41's kernels, launched as v41 launches them (PDL). The kernels are v41's
// one-split and merge kernels and v44's walk kernel, the same template instances.
//
// Why (twenty-fifth session): in the twenty-fourth session's four bench-all passes (one card,
// flush) v44, which walks every one-split plan without PDL, was faster than v41 by 1.2-1.9 % at
// b=32,s=4 and s=8 and at both b=128,s=2 rows (and -0.5..-1.3 % at b=128,s=1), and slower by
// 1.2-1.6 % at s=16 and s=128 (7.8 and 62 row blocks a CTA); the CLI A/B at b=128,t=8192,s=2 had it
// 0.9 % faster in all six rounds. Why the walk loses with many items is not known (its loops are
// scheduled differently from the static kernel's: 0.74-0.81 alike by sass_loops --compare).
// Prediction (written before the run): v44's gains on those rows (0.5-2 %), v41's times elsewhere.
#include "flash_mla_seesaw.cuh"

namespace {
using namespace mla;
using namespace mla::seesaw;

constexpr long long kOpt = OPT_V6 | OPT_LAZY_MAX | OPT_Q_TMA | OPT_ONE_FINISH | OPT_NOMAX;  // v41's
constexpr long long kMergeOpt = (kOpt & ~OPT_SPEC_B) | OPT_CMERGE | OPT_CM_PUSH | OPT_CM_L2 | OPT_CM_SENTMAX;  // v41's

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v47(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
              const __grid_constant__ CUtensorMap omap, const __grid_constant__ LatentArgs a, int nsplits,
              float sl2, TileOut to)
{
    seesaw_cta<false, kOpt | OPT_TMA_STORE, NTHREADS, PDLM_WAIT>(&tmap, a, nsplits, sl2, to, Plan{}, &qmap, &omap);
}

// v44's walk kernel: no griddepcontrol.wait, so never launched with PDL (walk_pdl = false).
__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v47_walk(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
                   const __grid_constant__ CUtensorMap omap, const __grid_constant__ LatentArgs a, int b, float sl2,
                   TileOut to)
{
    seesaw_cta<false, kOpt | OPT_TMA_STORE | OPT_WALK, NTHREADS, PDLM_OFF>(&tmap, a, b, sl2, to, Plan{}, &qmap, &omap);
}

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v47_merge(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
                    const __grid_constant__ LatentArgs a, int nsplits, float sl2, TileOut to)
{
    seesaw_cta<false, kMergeOpt, NTHREADS, PDLM_WAIT>(&tmap, a, nsplits, sl2, to, Plan{}, &qmap);
}

constexpr fmh::Version kVersion = {"flash_mla_v47", nullptr,     0,         fmh::flash_mla_hopper_combine_mlp<DA>,
                                   nullptr,         0,           nullptr,   MSMEM_BYTES,
                                   flash_mla_v47_merge, MSMEM_BYTES, CM_WS_CTA, nullptr,
                                   0,               nullptr,     NTHREADS,  true,
                                   flash_mla_v47,   flash_mla_v47_walk, 4, false};

}  // namespace

MLA_FMH_REGISTER(mla_kv_flash_mla_v47, 47, 0,
                 "hopper: v41, with v44's walk (no PDL) for one-split plans of 2-4 row blocks an SM")
