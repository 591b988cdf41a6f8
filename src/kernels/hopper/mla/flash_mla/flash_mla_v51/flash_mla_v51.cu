// flash_mla_v51 (hopper, sm_90a only; a measurement, never a default): flash_mla_v47 whose
// PDL-launched kernels (the one-split static kernel and the split-merge kernel) do not wait for
// the previous grid (PDLM_OFF: no griddepcontrol.wait, block table by __ldg), as FlashMLA's SM90
// split kernel does not (its SASS has no ACQBULK; upstream launches it with
// programmaticStreamSerializationAllowed and never calls cudaGridDependencySynchronize).
//
// Why: timed in one process with FlashMLA (flashmla_same_call.py, flush method), the one-wave rows
// (b=32,s=2, b=64,s=1) are 3.5-5.8 % slower than FlashMLA although under ncu the two main kernels
// are within 1.4-2 %. This version measures what starting without the wait is worth.
// It is NOT safe in general: with its kernels triggering their dependents at entry, two of its
// calls launched back to back with PDL can overlap, and it can read inputs the previous kernel has
// not finished writing. Time it in the flush method only (a memset, which never triggers early,
// before each call). The walk kernel is v47's (launched without PDL).
// Prediction (written before the run): 0-8 us faster than v47 at s=2 and b=64,s=1 (the gap to
// FlashMLA there is ~7 us a call); nothing at s=16.
#include "flash_mla_seesaw.cuh"

namespace {
using namespace mla;
using namespace mla::seesaw;

constexpr long long kOpt = OPT_V6 | OPT_LAZY_MAX | OPT_Q_TMA | OPT_ONE_FINISH | OPT_NOMAX;  // v41's
constexpr long long kMergeOpt = (kOpt & ~OPT_SPEC_B) | OPT_CMERGE | OPT_CM_PUSH | OPT_CM_L2 | OPT_CM_SENTMAX;  // v41's

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v51(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
              const __grid_constant__ CUtensorMap omap, const __grid_constant__ LatentArgs a, int nsplits,
              float sl2, TileOut to)
{
    seesaw_cta<false, kOpt | OPT_TMA_STORE, NTHREADS, PDLM_OFF>(&tmap, a, nsplits, sl2, to, Plan{}, &qmap, &omap);
}

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v51_walk(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
                   const __grid_constant__ CUtensorMap omap, const __grid_constant__ LatentArgs a, int b, float sl2,
                   TileOut to)
{
    seesaw_cta<false, kOpt | OPT_TMA_STORE | OPT_WALK, NTHREADS, PDLM_OFF>(&tmap, a, b, sl2, to, Plan{}, &qmap, &omap);
}

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v51_merge(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
                    const __grid_constant__ LatentArgs a, int nsplits, float sl2, TileOut to)
{
    seesaw_cta<false, kMergeOpt, NTHREADS, PDLM_OFF>(&tmap, a, nsplits, sl2, to, Plan{}, &qmap);
}

constexpr fmh::Version kVersion = {"flash_mla_v51", nullptr,     0,         fmh::flash_mla_hopper_combine_mlp<DA>,
                                   nullptr,         0,           nullptr,   MSMEM_BYTES,
                                   flash_mla_v51_merge, MSMEM_BYTES, CM_WS_CTA, nullptr,
                                   0,               nullptr,     NTHREADS,  true,
                                   flash_mla_v51,   flash_mla_v51_walk, 4, false};

}  // namespace

MLA_FMH_REGISTER(mla_kv_flash_mla_v51, 51, 1,
                 "hopper (measurement only, unsafe): v47 without griddepcontrol.wait, launched with PDL")
