// flash_mla_v48 (hopper, sm_90a only; an experiment, not the default): flash_mla_v42's kernels, with
// the walk kernel launched with one CTA a row block (Version::walk_all) instead of one an SM. Every
// one-split plan then runs v42's walk SASS on the static grid: each CTA takes one item, and the
// hardware starts the next CTA on an SM as one exits, as with v41's static kernel.
//
// Why (twenty-fifth session): the walk is 0.5-1.4 % faster than the static grid in the timeline
// probe (with and without PDL), but v42 lost to v41 through the library at 8 and more row blocks a
// CTA, and its pair loops are scheduled differently from v41's (0.74-0.81 alike by sass_loops
// --compare). v42 against v48 is the same SASS on two grids: the walk's transitions alone. v48
// against v41 is the walk's loop schedule alone, at one item a CTA.
// Compiled here (loops 1.000 alike to v42's walk kernel by sass_loops --compare); NOT YET RUN on a
// GPU.
#include "flash_mla_seesaw.cuh"

namespace {
using namespace mla;
using namespace mla::seesaw;

constexpr long long kOpt = OPT_V6 | OPT_LAZY_MAX | OPT_Q_TMA | OPT_ONE_FINISH | OPT_NOMAX;  // v41's and v42's
constexpr long long kMergeOpt = (kOpt & ~OPT_SPEC_B) | OPT_CMERGE | OPT_CM_PUSH | OPT_CM_L2 | OPT_CM_SENTMAX;  // v41's

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v48(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
              const __grid_constant__ CUtensorMap omap, const __grid_constant__ LatentArgs a, int nsplits,
              float sl2, TileOut to)
{
    seesaw_cta<false, kOpt | OPT_TMA_STORE, NTHREADS, PDLM_WAIT>(&tmap, a, nsplits, sl2, to, Plan{}, &qmap, &omap);
}

// v42's walk kernel (PDLM_WAIT: launched with PDL, as v42 launches it).
__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v48_walk(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
                   const __grid_constant__ CUtensorMap omap, const __grid_constant__ LatentArgs a, int b, float sl2,
                   TileOut to)
{
    seesaw_cta<false, kOpt | OPT_TMA_STORE | OPT_WALK, NTHREADS, PDLM_WAIT>(&tmap, a, b, sl2, to, Plan{}, &qmap, &omap);
}

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v48_merge(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
                    const __grid_constant__ LatentArgs a, int nsplits, float sl2, TileOut to)
{
    seesaw_cta<false, kMergeOpt, NTHREADS, PDLM_WAIT>(&tmap, a, nsplits, sl2, to, Plan{}, &qmap);
}

constexpr fmh::Version kVersion = {"flash_mla_v48", nullptr,     0,         fmh::flash_mla_hopper_combine_mlp<DA>,
                                   nullptr,         0,           nullptr,   MSMEM_BYTES,
                                   flash_mla_v48_merge, MSMEM_BYTES, CM_WS_CTA, nullptr,
                                   0,               nullptr,     NTHREADS,  true,
                                   flash_mla_v48,   flash_mla_v48_walk, 0, true, true};

}  // namespace

MLA_FMH_REGISTER(mla_kv_flash_mla_v48, 48, 1,
                 "hopper (experiment, not yet run): v42's walk kernel on the static grid, one CTA a row block")
