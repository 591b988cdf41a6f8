// flash_mla_v36 (hopper, sm_90a only): flash_mla_v35 with OPT_LATE_BT: consumer 0 reads the next
// pair's block-table entries after publishing P_A instead of at the top of the pair.
//
// Why: own_commit's fence.proxy.async is MEMBAR.ALL.CTA + FENCE.VIEW.ASYNC.S in the SASS, and a
// MEMBAR waits for the thread's outstanding loads. v35's probe has P_A out ~800-900 cycles after
// S_A (v30: ~1200), the order of a global load's latency while every SM streams pages, so the
// block-table load issued at the top may now be what P_A waits for.
// Prediction (written before the run): if the load is the wait, P_A out moves 100-300 cycles
// earlier and the pair 2-5 % shorter in the probe; if not, nothing moves (the load has ~600
// cycles after the arrive before the reload that needs it).
#include "flash_mla_seesaw.cuh"

namespace {
using namespace mla;
using namespace mla::seesaw;

constexpr int kOpt = OPT_V6 | OPT_LAZY_MAX | OPT_Q_TMA | OPT_ONE_FINISH | OPT_NOMAX | OPT_LATE_BT;  // v35's + OPT_LATE_BT

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v36(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
              const __grid_constant__ LatentArgs a, int nsplits, float sl2, TileOut to)
{
    seesaw_cta<false, kOpt, NTHREADS, PDLM_WAIT>(&tmap, a, nsplits, sl2, to, Plan{}, &qmap);
}

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v36_merge(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
                    const __grid_constant__ LatentArgs a, int nsplits, float sl2, TileOut to)
{
    seesaw_cta<false, kOpt | OPT_CMERGE | OPT_CM_PUSH | OPT_CM_L2 | OPT_CM_SENTMAX, NTHREADS, PDLM_WAIT>(
        &tmap, a, nsplits, sl2, to, Plan{}, &qmap);
}

constexpr fmh::Version kVersion = {"flash_mla_v36", nullptr,     0,         fmh::flash_mla_hopper_combine_mlp<DA>,
                                   nullptr,         0,           flash_mla_v36, MSMEM_BYTES,
                                   flash_mla_v36_merge, MSMEM_BYTES, CM_WS_CTA, nullptr,
                                   0,               nullptr,     NTHREADS,  true};

}  // namespace

MLA_FMH_REGISTER(mla_kv_flash_mla_v36, 36, 1,
                 "hopper: v35 with consumer 0's block-table loads after its P_A publication (OPT_LATE_BT): the fence "
                 "before it no longer waits for them")
