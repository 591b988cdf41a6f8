// flash_mla_v40 (hopper, sm_90a only): flash_mla_v35 whose merge kernel (two splits of a row block
// in a cluster, the kernel of b=32,s=1 and other shapes short of a wave) runs without OPT_SPEC_B:
// consumer 1 waits for P_A, issues PV(A,R) and then computes softmax B against page A's max (exact,
// no redo). The one-split kernel is v35's.
//
// Why (twenty-first session, flash_mla_v37: v35 without OPT_SPEC_B in both kernels, removed): in
// the one-split kernel the pair was 11 % longer (consumer 1's PV(A,R) wgmmas, issued into a busy
// tensor pipe, held back its softmax B), but bench-all read b=32,s=1, the one anchor row on the
// merge kernel, 0.8 % (flush) and 3.9 % (graph) faster in its one call. At s=1 each page is read by
// the two row blocks of a request only, so the reloads come from DRAM and the pairs wait on them
// longer; the speculative softmax B then has less to hide, and its redo (page A moving the max,
// more often in a split's first pages) costs more.
// Prediction (written before the run): b=32,s=1 0.5-3 % faster through the CLI A/B, or level if
// v37's call was the noise; no other anchor row runs this kernel.
// Measured (H200, 2026-12-01, twenty-second session; docs/kernels/flash_mla.md): b=32,s=1 over six
// bench-all passes each, order alternated, 66.5 us (64.0-68.8) against v35's 69.5 (64.7-71.7)
// in the graph method, faster in all six pairs; 70.4 (69.8-70.9) against 71.1 (70.4-71.6) in the
// flush method; the CLI's event A/B 63.9-64.0 against 64.6-64.8 us in six rounds. The timeline
// probe (a burst, trace points compiled in) read 65.4-65.6 against 65.7-65.9 us a launch: the gain
// is mostly the power-capped library's, not cycles. The default from this session.
#include "flash_mla_seesaw.cuh"

namespace {
using namespace mla;
using namespace mla::seesaw;

constexpr int kOpt = OPT_V6 | OPT_LAZY_MAX | OPT_Q_TMA | OPT_ONE_FINISH | OPT_NOMAX;  // v35's
constexpr int kMergeOpt = (kOpt & ~OPT_SPEC_B) | OPT_CMERGE | OPT_CM_PUSH | OPT_CM_L2 | OPT_CM_SENTMAX;

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v40(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
              const __grid_constant__ LatentArgs a, int nsplits, float sl2, TileOut to)
{
    seesaw_cta<false, kOpt, NTHREADS, PDLM_WAIT>(&tmap, a, nsplits, sl2, to, Plan{}, &qmap);
}

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v40_merge(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
                    const __grid_constant__ LatentArgs a, int nsplits, float sl2, TileOut to)
{
    seesaw_cta<false, kMergeOpt, NTHREADS, PDLM_WAIT>(&tmap, a, nsplits, sl2, to, Plan{}, &qmap);
}

constexpr fmh::Version kVersion = {"flash_mla_v40", nullptr,     0,         fmh::flash_mla_hopper_combine_mlp<DA>,
                                   nullptr,         0,           flash_mla_v40, MSMEM_BYTES,
                                   flash_mla_v40_merge, MSMEM_BYTES, CM_WS_CTA, nullptr,
                                   0,               nullptr,     NTHREADS,  true};

}  // namespace

MLA_FMH_REGISTER(mla_kv_flash_mla_v40, 40, 0,
                 "hopper: v35 with the split-merge kernel without the speculative softmax B")
