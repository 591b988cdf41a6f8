// flash_mla_v31 (hopper, sm_90a only): flash_mla_v30 (v19's kernels launched with PDL) whose CTAs,
// before they wait for the previous grid, ask L2 for their Q tile and first two pages
// (seesaw PDLM_PREFETCH: 27 cp.async.bulk.prefetch.tensor boxes from one thread).
//
// Why: at b=32,s=1 every CTA starts by loading Q and two pages from DRAM at once (~14 MB for the
// grid), and the first S lands 7400-10600 SM cycles in (twelfth session's probe). A CTA placed
// early by PDL sits idle until the previous grid completes; the prefetch spends that time on the
// DRAM reads. Earlier L2 prefetches inside the pair loop (v7, v13, v23) lost: they competed with
// the reloads. This one runs while the CTA has nothing else to do. The lengths and block table
// read before the wait may be stale; that costs a useless prefetch, never a wrong result.
// Prediction: on top of v30, 0.5-2 us at s = 1..4 (the first S sooner), nothing at s >= 16.
#include "flash_mla_seesaw.cuh"

namespace {
using namespace mla;
using namespace mla::seesaw;

constexpr int kOpt = OPT_V6 | OPT_LAZY_MAX | OPT_Q_TMA | OPT_ONE_FINISH;  // v19's

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v31(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
              const __grid_constant__ LatentArgs a, int nsplits, float sl2, TileOut to)
{
    seesaw_cta<false, kOpt, NTHREADS, PDLM_PREFETCH>(&tmap, a, nsplits, sl2, to, Plan{}, &qmap);
}

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v31_merge(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
                    const __grid_constant__ LatentArgs a, int nsplits, float sl2, TileOut to)
{
    seesaw_cta<false, kOpt | OPT_CMERGE | OPT_CM_PUSH | OPT_CM_L2 | OPT_CM_SENTMAX, NTHREADS, PDLM_PREFETCH>(
        &tmap, a, nsplits, sl2, to, Plan{}, &qmap);
}

constexpr fmh::Version kVersion = {"flash_mla_v31", nullptr,     0,         fmh::flash_mla_hopper_combine_mlp<DA>,
                                   nullptr,         0,           flash_mla_v31, MSMEM_BYTES,
                                   flash_mla_v31_merge, MSMEM_BYTES, CM_WS_CTA, nullptr,
                                   0,               nullptr,     NTHREADS,  true};

}  // namespace

MLA_FMH_REGISTER(mla_kv_flash_mla_v31, 31, 1,
                 "hopper: v30 (v19 with PDL) whose CTAs prefetch their Q tile and first two pages into L2 before "
                 "griddepcontrol.wait")
