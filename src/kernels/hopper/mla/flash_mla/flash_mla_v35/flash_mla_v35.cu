// flash_mla_v35 (hopper, sm_90a only): flash_mla_v30 with OPT_NOMAX: a full page is exponentiated
// against the running max without first taking the page's row max, and kept when every partial
// row sum stays <= 2^16 (flash_mla_seesaw.cuh, OPT_NOMAX; otherwise the warp redoes the page by
// v30's path).
//
// Why: the softmax windows are bound by dependent-instruction latency with two consumer warps a
// scheduler (the eleventh session's Nsight Compute source profile: "wait" 37-43 %), and the row
// max is the serial part in front of the 32 exponentials: 32 FMNMX, two rounds of quad shuffles,
// the lazy test and the two rescale exponentials, ~45 of a softmax's ~288 warp instructions.
// With OPT_LAZY_MAX the running max almost never moves after a row's first pages, so the max is
// computed only to be thrown away. Both consumers' softmaxes sit on the pair's rings (P_A out ->
// PV(A,R); P_B -> PV(B,L)), so a shorter softmax shortens both.
// Prediction (written before the run): each softmax 60-120 cycles shorter (the chain before the
// first MUFU, and fewer issue slots against the other consumer's warp), the pair 1-2.5 % shorter
// at s >= 2; s = 1 rows ~1 %; no change on h = 16 (memory-bound).
// Measured (H200, 2026-12-01, twenty-first session; docs/kernels/flash_mla.md): the timeline
// probe's steady pair 5386-5395 SM cycles against v30's 5559-5701 at b=32,s=16 (pair 30; the
// medians 5393-5395 against 5592-5619), 842.6-843.2 against 869.5-870.1 us a launch (3.1 %);
// P_A out 871-872 cycles after S_A against 998-1025 (at s=2 862-886 against 1207-1273), and
// the rest of both rings ~200-250 cycles sooner; b=32,s=2 112.7-113.1 against 115.6-115.8 us.
// Through bench-all (three calls, 12 passes in each timing method) faster than v30 on 12 of the
// 16 FlashMLA rows in each method, by 0.1-2.3 %; the others 0.3-1.2 % slower, inside the passes'
// spread. The default from this session.
#include "flash_mla_seesaw.cuh"

namespace {
using namespace mla;
using namespace mla::seesaw;

constexpr int kOpt = OPT_V6 | OPT_LAZY_MAX | OPT_Q_TMA | OPT_ONE_FINISH | OPT_NOMAX;  // v30's + OPT_NOMAX

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v35(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
              const __grid_constant__ LatentArgs a, int nsplits, float sl2, TileOut to)
{
    seesaw_cta<false, kOpt, NTHREADS, PDLM_WAIT>(&tmap, a, nsplits, sl2, to, Plan{}, &qmap);
}

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v35_merge(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
                    const __grid_constant__ LatentArgs a, int nsplits, float sl2, TileOut to)
{
    seesaw_cta<false, kOpt | OPT_CMERGE | OPT_CM_PUSH | OPT_CM_L2 | OPT_CM_SENTMAX, NTHREADS, PDLM_WAIT>(
        &tmap, a, nsplits, sl2, to, Plan{}, &qmap);
}

constexpr fmh::Version kVersion = {"flash_mla_v35", nullptr,     0,         fmh::flash_mla_hopper_combine_mlp<DA>,
                                   nullptr,         0,           flash_mla_v35, MSMEM_BYTES,
                                   flash_mla_v35_merge, MSMEM_BYTES, CM_WS_CTA, nullptr,
                                   0,               nullptr,     NTHREADS,  true};

}  // namespace

MLA_FMH_REGISTER(mla_kv_flash_mla_v35, 35, 0,
                 "hopper: v30 with the page row max skipped while the running max bounds P (OPT_NOMAX): the exponentials start "
                 "right after S")
