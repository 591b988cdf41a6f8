// flash_mla_v41 (hopper, sm_90a only): flash_mla_v40 whose one-split kernel stores its bf16 rows
// by TMA (OPT_TMA_STORE): each consumer writes its normalised 64 x 256 half into four swizzled
// 64 x 64 boxes of the dead stage, and one of its threads stores them with four bulk tensor
// copies through the output's tensor map (fmh::o_tmap), instead of its 128 threads copying 16
// rows each from shared memory to global memory in 16-byte pieces. The merge kernel is v40's.
//
// Why (twenty-third session): by the timeline probe a one-split CTA spends ~6200-6300 cycles from
// its loop's exit to its stores (b=32, s=2 and s=16; 3.3 % of the CTA), and the CTA that follows
// on the SM cannot start before. The TMA engine reads the 64 KB out of shared memory on its own,
// and the waiting thread needs only that read to finish, not the global writes.
// Prediction (written before the run): the finish 1000-2500 cycles shorter in the probe (the
// copy loop's issue and its shared-memory round trip gone; the row-sum exchange and the last
// PV's wait stay), so 0.5-1.3 % of a one-split CTA; bench-all 0-1 % on the one-split rows
// (s >= 2, b=64/128 at s=1, h=16), nothing at b=32,s=1 (the merge kernel).
// Measured (H200, 2026-12-01, twenty-third session; docs/kernels/flash_mla.md): in the timeline
// probe (mask 88098047 against v35's 20989183, same calls) consumer 0's finish from its entry to
// its stores 4450-5050 cycles against 6350-6770, consumer 1's 2930-3020 against 5510-6250; the
// launch 839.9-844.0 against 849.0-853.5 us at b=32,s=16 and 112.0-113.5 against 112.8-114.3 at
// s=2 (-0.7 to -1.2 %). bench-all, 16 passes each over three calls: faster than v40 on 13 of the
// 15 one-split rows in the graph method (0.3-2.5 %) and on 12 in the flush method (0.3-1.7 %),
// within the calls' noise (the b=32,s=1 row, the same SASS in both, moved +0.1 / +1.0 %). The
// finish that remains is the copy into shared memory (~1300 cycles) and the bulk copies' read of
// it (~1400 cycles for consumer 1's 32 KB, ~2400 for both halves): 132 CTAs that end together
// write 8.4 MB at once. The default from this session.
#include "flash_mla_seesaw.cuh"

namespace {
using namespace mla;
using namespace mla::seesaw;

constexpr int kOpt = OPT_V6 | OPT_LAZY_MAX | OPT_Q_TMA | OPT_ONE_FINISH | OPT_NOMAX;  // v35's and v40's
constexpr int kMergeOpt = (kOpt & ~OPT_SPEC_B) | OPT_CMERGE | OPT_CM_PUSH | OPT_CM_L2 | OPT_CM_SENTMAX;  // v40's

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v41(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
              const __grid_constant__ CUtensorMap omap, const __grid_constant__ LatentArgs a, int nsplits,
              float sl2, TileOut to)
{
    seesaw_cta<false, kOpt | OPT_TMA_STORE, NTHREADS, PDLM_WAIT>(&tmap, a, nsplits, sl2, to, Plan{}, &qmap, &omap);
}

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v41_merge(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
                    const __grid_constant__ LatentArgs a, int nsplits, float sl2, TileOut to)
{
    seesaw_cta<false, kMergeOpt, NTHREADS, PDLM_WAIT>(&tmap, a, nsplits, sl2, to, Plan{}, &qmap);
}

// mainq is nullptr: mainqo (the last field) runs every Q-by-TMA plan with one split or more than
// two (those store fp32 partials by the copy loop, as v40's kernel does).
constexpr fmh::Version kVersion = {"flash_mla_v41", nullptr,     0,         fmh::flash_mla_hopper_combine_mlp<DA>,
                                   nullptr,         0,           nullptr,   MSMEM_BYTES,
                                   flash_mla_v41_merge, MSMEM_BYTES, CM_WS_CTA, nullptr,
                                   0,               nullptr,     NTHREADS,  true,
                                   flash_mla_v41};

}  // namespace

MLA_FMH_REGISTER(mla_kv_flash_mla_v41, 41, 0,
                 "hopper: v40 with the one-split kernel's bf16 rows stored by TMA tensor copies")
