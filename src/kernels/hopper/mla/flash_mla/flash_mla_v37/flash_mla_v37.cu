// flash_mla_v37 (hopper, sm_90a only): flash_mla_v35 without OPT_SPEC_B: consumer 1 waits for P_A
// and page A's max, issues PV(A,R), and only then computes softmax B, against the max after page A
// (exact: no redo).
//
// Why: OPT_SPEC_B (consumer 1's softmax B against the max before page A, while consumer 0 does
// softmax A) was worth 10 % of the pair when a softmax took ~1000-1250 cycles (v19: 5559 against
// 6168 cycles without it). With OPT_NOMAX softmax A is ~900 cycles, and S_B is done ~400 cycles
// after S_A, so consumer 1 would idle ~500 cycles before P_A. In exchange: PV(A,R), and so page
// A's late reload (boxes 4-8, the ring's longest link: ~2200 cycles), start ~600 cycles sooner
// (v35's probe: P_A out 895, P_A in at consumer 1 1520), and the two softmaxes no longer share
// the schedulers, so each should be shorter.
// Prediction (written before the run): uncertain in sign. If the ring model holds, the pair
// 3-8 % shorter than v35's; if consumer 1's idle window costs more than the earlier reload saves
// (v19's case), 5-10 % longer.
#include "flash_mla_seesaw.cuh"

namespace {
using namespace mla;
using namespace mla::seesaw;

constexpr int kOpt = (OPT_V6 & ~OPT_SPEC_B) | OPT_LAZY_MAX | OPT_Q_TMA | OPT_ONE_FINISH | OPT_NOMAX;  // v35's - OPT_SPEC_B

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v37(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
              const __grid_constant__ LatentArgs a, int nsplits, float sl2, TileOut to)
{
    seesaw_cta<false, kOpt, NTHREADS, PDLM_WAIT>(&tmap, a, nsplits, sl2, to, Plan{}, &qmap);
}

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v37_merge(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
                    const __grid_constant__ LatentArgs a, int nsplits, float sl2, TileOut to)
{
    seesaw_cta<false, kOpt | OPT_CMERGE | OPT_CM_PUSH | OPT_CM_L2 | OPT_CM_SENTMAX, NTHREADS, PDLM_WAIT>(
        &tmap, a, nsplits, sl2, to, Plan{}, &qmap);
}

constexpr fmh::Version kVersion = {"flash_mla_v37", nullptr,     0,         fmh::flash_mla_hopper_combine_mlp<DA>,
                                   nullptr,         0,           flash_mla_v37, MSMEM_BYTES,
                                   flash_mla_v37_merge, MSMEM_BYTES, CM_WS_CTA, nullptr,
                                   0,               nullptr,     NTHREADS,  true};

}  // namespace

MLA_FMH_REGISTER(mla_kv_flash_mla_v37, 37, 1,
                 "hopper: v35 without the speculative softmax B: consumer 1 issues PV(A,R) as soon as P_A is out, then "
                 "its softmax B against page A's max")
