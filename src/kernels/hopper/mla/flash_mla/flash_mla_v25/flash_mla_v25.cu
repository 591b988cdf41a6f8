// flash_mla_v25 (hopper, sm_90a only): flash_mla_v22's three main kernels (v19's one-split and
// split-merge kernels, v22's persistent one-split kernel) in 256-thread CTAs, with no producer
// warpgroup.
//
// Why: in every seesaw kernel since v3 the producer warpgroup leaves at once (the consumers
// issue their own TMA reloads), but it is there at launch, so the kernel is compiled for 384
// threads (168 registers) and the consumers get 232 by setmaxnreg: 128 x 40 registers of the
// SM's 65536 stay with a warpgroup that does nothing. v19's consumers use R0-R229: ptxas is at
// its limit. Here __launch_bounds__(256, 1) lets it use 255 (it takes 254). Compiled here (nvcc
// 13.0, 2026-12-01), the one-split kernel's pair loops shrink from v22's 1332 / 1849 to 1289 /
// 1786 instructions (consumer 0 / 1), most of the difference integer moves and address
// arithmetic (MOV 20 -> 8, IMAD 36 -> 30, UISETP 5 -> 0), 0 spills.
// Prediction: 0-2 % on the compute-bound rows (the loop is not issue-bound: ~25 % of issue
// slots at s = 16, so fewer instructions matter only where they sit on the softmax's chain).
// Measured (H200, 2026-12-01, six bench-all passes against v22 in the same passes): -0.8 to
// +0.7 % on the compute-bound rows, inside the spread. Neither the registers nor the issue
// slots bind the pair; kept not_default (docs/kernels/flash_mla.md, seventeenth session).
#include "flash_mla_persist.cuh"

namespace {
using namespace mla;
using namespace mla::seesaw;

constexpr int kOpt = OPT_V6 | OPT_LAZY_MAX | OPT_Q_TMA | OPT_ONE_FINISH;  // v19's
constexpr int kPOpt = OPT_V5 | OPT_LAZY_MAX | OPT_PSTATIC | OPT_ST16;    // v22's

__global__ void __launch_bounds__(CONSUMERS, 1)
flash_mla_v25(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
              const __grid_constant__ LatentArgs a, int nsplits, float sl2, TileOut to)
{
    seesaw_cta<false, kOpt, CONSUMERS>(&tmap, a, nsplits, sl2, to, Plan{}, &qmap);
}

__global__ void __launch_bounds__(CONSUMERS, 1)
flash_mla_v25_merge(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
                    const __grid_constant__ LatentArgs a, int nsplits, float sl2, TileOut to)
{
    seesaw_cta<false, kOpt | OPT_CMERGE | OPT_CM_PUSH | OPT_CM_L2 | OPT_CM_SENTMAX, CONSUMERS>(&tmap, a, nsplits, sl2,
                                                                                             to, Plan{}, &qmap);
}

__global__ void __launch_bounds__(CONSUMERS, 1)
flash_mla_v25_persist(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
                      const __grid_constant__ LatentArgs a, int b, float sl2, TileOut to)
{
    persist_cta<kPOpt, CONSUMERS>(&tmap, &qmap, a, sl2, to, Plan{}, b);
}

constexpr fmh::Version kVersion = {"flash_mla_v25",       nullptr,     0,
                                   fmh::flash_mla_hopper_combine_mlp<DA>, nullptr, 0,
                                   flash_mla_v25,         MSMEM_BYTES, flash_mla_v25_merge,
                                   MSMEM_BYTES,           CM_WS_CTA,   flash_mla_v25_persist,
                                   PSMEM_BYTES,           nullptr,     CONSUMERS};

}  // namespace

MLA_FMH_REGISTER(mla_kv_flash_mla_v25, 25, 1,
                 "hopper: v22's kernels in 256-thread CTAs without the idle producer warpgroup (the consumers get "
                 "255 registers instead of setmaxnreg's 232)")
