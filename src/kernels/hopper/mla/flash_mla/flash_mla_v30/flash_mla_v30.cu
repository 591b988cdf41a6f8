// flash_mla_v30 (hopper, sm_90a only): flash_mla_v19's two kernels (one split; two splits merged
// in a cluster through L2) launched with programmatic dependent launch (PDL), as FlashMLA's
// main kernel is. (v26-v29 were the names of the sixteenth/seventeenth sessions' unlanded P_A
// box experiments; this line skips them.)
//
// Why: without the launch attribute a kernel starts only after the previous one has completed
// and its memory is flushed: the grid launch, each CTA's start, its barrier set-up and the
// first TMA descriptor fetch all come after that. The twelfth session's probe put ~3 us of a
// 70.5 us b=32,s=1 call outside the CTAs. With PDL the CTAs are placed as the previous grid's
// leave, set up, and wait in griddepcontrol.wait (seesaw PDLM_WAIT) before any global read or
// write; the previous kernel (the merge kernel's pdl_launch_dependents at its start) lets them.
// Block-table entries are read by coherent loads behind the wait (bt_at), not __ldg.
// Prediction: 1-3 us a call on every row (the launch gap, ~2-4 % of b=32,s=1, <0.3 % at s>=16);
// the pair loops' SASS unchanged but for the block-table loads.
// Measured (H200, 2026-12-01, same calls as v19): b=32,s=1 1.0-1.4 us faster in three bench-all
// comparisons and 1.2 us in a 7-round A/B (64.3-64.5 against 65.5-65.7 us); s=2 0.7-2.4 us; the
// other rows within the passes' spread. The default from the eighteenth session
// (docs/kernels/flash_mla.md).
#include "flash_mla_seesaw.cuh"

namespace {
using namespace mla;
using namespace mla::seesaw;

constexpr int kOpt = OPT_V6 | OPT_LAZY_MAX | OPT_Q_TMA | OPT_ONE_FINISH;  // v19's

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v30(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
              const __grid_constant__ LatentArgs a, int nsplits, float sl2, TileOut to)
{
    seesaw_cta<false, kOpt, NTHREADS, PDLM_WAIT>(&tmap, a, nsplits, sl2, to, Plan{}, &qmap);
}

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v30_merge(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
                    const __grid_constant__ LatentArgs a, int nsplits, float sl2, TileOut to)
{
    seesaw_cta<false, kOpt | OPT_CMERGE | OPT_CM_PUSH | OPT_CM_L2 | OPT_CM_SENTMAX, NTHREADS, PDLM_WAIT>(
        &tmap, a, nsplits, sl2, to, Plan{}, &qmap);
}

constexpr fmh::Version kVersion = {"flash_mla_v30", nullptr,     0,         fmh::flash_mla_hopper_combine_mlp<DA>,
                                   nullptr,         0,           flash_mla_v30, MSMEM_BYTES,
                                   flash_mla_v30_merge, MSMEM_BYTES, CM_WS_CTA, nullptr,
                                   0,               nullptr,     NTHREADS,  true};

}  // namespace

MLA_FMH_REGISTER(mla_kv_flash_mla_v30, 30, 0,
                 "hopper: v19's kernels launched with PDL (griddepcontrol.wait after the prologue): the launch and "
                 "the CTAs' set-up overlap the previous kernel")
