// flash_mla_v42 (hopper, sm_90a only): flash_mla_v41 whose one-split kernel walks whole row blocks
// (OPT_WALK): one CTA an SM, min(SMs, b * row blocks) CTAs, each taking items x, x + G, ... in the
// static grid's launch order; between two items its consumers sync once, and the next item starts
// as a new CTA's would (Q and its first two pages by TMA), without the CTA's exit, launch, barrier
// set-up and register hand-over. The merge kernel (two splits) and the static kernel for more
// than two splits are v41's.
//
// Why (twenty-fourth session): by the twenty-third session's timeline probe a one-split CTA
// spends ~11000 SM cycles from its start to its first S (Q lands at ~5000-9000: a wave's 132 CTAs
// start together and read Q from DRAM at once) and ~4500 in its finish, ~8 % of its ~190000; the
// next CTA on the SM starts only after this one's exit. The fifteenth session's persistent kernel
// (v22, persist_cta) cut the transition to ~4200 cycles, but its own pair loop ran 2.5 % slower
// than seesaw_cta's. Here the walk is in seesaw_cta, around the same pair code.
// Prediction (written before the run, for the walk with the next item's loads started early, the
// removed OPT_WALK_PRE): the transition from a loop's exit to the next item's first S ~16000 ->
// ~8000 cycles, 3-4.5 % at s >= 4; nothing at s=2 (one item a CTA) and b=32,s=1 (merge kernel).
// Measured (H200, 2026-12-01, twenty-fourth session; docs/kernels/flash_mla.md): in the timeline
// probe (direct launches, no PDL) the walk is 1.2-1.4 % faster than v41's kernel in a burst (b=32,
// s=16 835.9-836.3 against 845.8-846.8 us, s=4 215.5 against 218.5) and 1.3-1.7 % sustained under
// the 700 W cap (924.4-925.6 against 936.4-938.6 us, s=4 240.4-240.7 against 244.8), its pairs 2 %
// shorter (5313-5357 against 5442-5448 cycles) and its transition 9900-14600 cycles. Through the
// library (PDL launches) it is not faster: bench-all, 7 flush passes, +0.4-2.6 % on the walking
// rows (s=16 950.4 against 928.4 us, s=128 7504.8 against 7311.7), CLI A/B at s=16 +0.9 %.
// Without PDL (flash_mla_v44, whose loops are scheduled differently too) it is level or ~1 % ahead
// on the few-item rows. Not the default.
#include "flash_mla_seesaw.cuh"

namespace {
using namespace mla;
using namespace mla::seesaw;

constexpr long long kOpt = OPT_V6 | OPT_LAZY_MAX | OPT_Q_TMA | OPT_ONE_FINISH | OPT_NOMAX;  // v35's, v40's, v41's
constexpr long long kMergeOpt = (kOpt & ~OPT_SPEC_B) | OPT_CMERGE | OPT_CM_PUSH | OPT_CM_L2 | OPT_CM_SENTMAX;  // v40's

// More than two splits (fp32 partials by the copy loop): v41's static kernel.
__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v42(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
              const __grid_constant__ CUtensorMap omap, const __grid_constant__ LatentArgs a, int nsplits,
              float sl2, TileOut to)
{
    seesaw_cta<false, kOpt | OPT_TMA_STORE, NTHREADS, PDLM_WAIT>(&tmap, a, nsplits, sl2, to, Plan{}, &qmap, &omap);
}

// One split: the walk (the int argument is b).
__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v42_walk(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
                   const __grid_constant__ CUtensorMap omap, const __grid_constant__ LatentArgs a, int b, float sl2,
                   TileOut to)
{
    seesaw_cta<false, kOpt | OPT_TMA_STORE | OPT_WALK, NTHREADS, PDLM_WAIT>(&tmap, a, b, sl2, to, Plan{}, &qmap, &omap);
}

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v42_merge(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
                    const __grid_constant__ LatentArgs a, int nsplits, float sl2, TileOut to)
{
    seesaw_cta<false, kMergeOpt, NTHREADS, PDLM_WAIT>(&tmap, a, nsplits, sl2, to, Plan{}, &qmap);
}

constexpr fmh::Version kVersion = {"flash_mla_v42", nullptr,     0,         fmh::flash_mla_hopper_combine_mlp<DA>,
                                   nullptr,         0,           nullptr,   MSMEM_BYTES,
                                   flash_mla_v42_merge, MSMEM_BYTES, CM_WS_CTA, nullptr,
                                   0,               nullptr,     NTHREADS,  true,
                                   flash_mla_v42,   flash_mla_v42_walk};

}  // namespace

MLA_FMH_REGISTER(mla_kv_flash_mla_v42, 42, 1,
                 "hopper: v41 with the one-split kernel walking whole row blocks, one CTA an SM")
