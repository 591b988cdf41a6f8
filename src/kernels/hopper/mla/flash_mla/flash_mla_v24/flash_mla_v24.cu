// flash_mla_v24 (hopper, sm_90a only): flash_mla_v22 (v19 with a persistent one-split kernel and
// 16-byte final stores) whose persistent kernel cuts the last round's row blocks by pages over all
// CTAs (OPT_PTAIL, flash_mla_persist.cuh) and merges the cut ones in a small kernel launched after
// it with PDL (tail_combine).
//
// Why: the static walk runs b * row blocks in rounds of 132. At b=32,h=128,s=16 that is 1024 row
// blocks, 7.76 rounds: the eighth round keeps 100 SMs busy for a whole row block (64 pages) while
// 32 idle, ~3 % of the kernel. s = 32 / 64 / 128 and b=64,s=16 end with 68 / 4 / 8 / 68 row blocks,
// b=128,t=8192,s=2 with 116. Cut over 132 CTAs the last round costs T * 64 / 132 pages a CTA
// (48.5 at s=16) plus a partial store and the merge. The host cuts only where that pays
// (fmh::tail_cut): not at s = 2 and 4, whose last rounds are 128 and 124 of 132.
// Prediction: 2-3 % at s = 8..64, b=64,s=16 and b=128,t=8192,s=2 in a burst, ~1.5 % at s=128;
// less under the power cap, where the idle SMs of v22's last round already buy the others clock.
// s = 1 (the merge kernel), s = 2 and 4 run v22's code.
//
// Measured (2026-12-01, H200, docs/kernels/flash_mla.md, v24; bench-all, default tilings, six
// passes against v22): where the last round is small (T = 4..68: s = 32 / 64 / 128, b=64,s=16)
// -0.8 .. +0.4 %, inside the spread; where it is large (T = 100..116: s = 8, 16, b=128,s=2) +1 ..
// +9 % (b=128,t=8192,s=2: 1083.0 against 991.7 us). Under the power cap the idle SMs of v22's last
// round already buy the others clock, and a large cut makes nearly every last-round row block two
// pieces with fp32 partials and a merge. NOT THE DEFAULT. The rows without a cut run at v22's
// speed (the first build did not: see tail_combine's note on the rows with no page).
#include "flash_mla_persist.cuh"

namespace {
using namespace mla;
using namespace mla::seesaw;

constexpr int kOpt = OPT_V6 | OPT_LAZY_MAX | OPT_Q_TMA | OPT_ONE_FINISH;  // v19's
constexpr int kPOpt = OPT_V5 | OPT_LAZY_MAX | OPT_PSTATIC | OPT_ST16 | OPT_PTAIL;

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v24(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
              const __grid_constant__ LatentArgs a, int nsplits, float sl2, TileOut to)
{
    seesaw_cta<false, kOpt>(&tmap, a, nsplits, sl2, to, Plan{}, &qmap);
}

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v24_merge(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
                    const __grid_constant__ LatentArgs a, int nsplits, float sl2, TileOut to)
{
    seesaw_cta<false, kOpt | OPT_CMERGE | OPT_CM_PUSH | OPT_CM_L2 | OPT_CM_SENTMAX>(&tmap, a, nsplits, sl2, to,
                                                                                  Plan{}, &qmap);
}

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v24_persist(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
                      const __grid_constant__ LatentArgs a, int b, float sl2, TileOut to)
{
    persist_cta<kPOpt>(&tmap, &qmap, a, sl2, to, Plan{}, b);
}

__global__ void __launch_bounds__(256)
flash_mla_v24_tail(const __grid_constant__ LatentArgs a, int b, long long grid, const float *ws_o,
                   const float *ws_lse)
{
    tail_combine(a, b, (int)grid, ws_o, ws_lse);
}

constexpr fmh::Version kVersion = {"flash_mla_v24",       nullptr,     0,
                                   fmh::flash_mla_hopper_combine_mlp<DA>, nullptr, 0,
                                   flash_mla_v24,         MSMEM_BYTES, flash_mla_v24_merge,
                                   MSMEM_BYTES,           CM_WS_CTA,   flash_mla_v24_persist,
                                   PSMEM_TAIL_BYTES,      flash_mla_v24_tail};

}  // namespace

MLA_FMH_REGISTER(mla_kv_flash_mla_v24, 24, 1,
                 "hopper: v22 (persistent one-split kernel) with the last round's row blocks cut by pages over "
                 "all CTAs and merged by a small PDL-launched kernel")
