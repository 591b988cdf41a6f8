// flash_mla_v17 (hopper, sm_90a only; the default flash_mla version 2026-11-30 to 2026-12-01, then
// flash_mla_v18): flash_mla_v16 with the split merge's exchange in scaled fp16 (OPT_CM_F16) and one
// copy of the finish for both consumers (OPT_ONE_FINISH), in both kernels.
//
// At b=32,h=128,s=1,t=4096 the plan gives every row block two splits, run as 2-CTA clusters that
// merge through distributed shared memory. v16 cut the merge loop's instructions by 2.6x and the
// loop stayed at ~9600 SM cycles (timeline probe, 2026-11-30); the same loop reading its own copy
// instead of the peer's took ~3550, and without its global stores ~9500: what bounds it is the
// 64 KB of fp32 each CTA reads from its peer. Here the rows a peer merges are written in fp16,
// each row (of a consumer's 256 columns) scaled by the power of two that puts its largest
// magnitude just under 2^15; the scale folds into the merge weights, so a value loses at most
// 2^-12 of its row's largest magnitude, a quarter of what the final bf16 rounding may lose (the
// GPU check's rel_l2 equal to v16's on all 85 nonzero cases). A CTA's own rows stay fp32, and
// each CTA merges a block of rows, not every other row, so a warp's writes do not diverge.
//
// The fp16 merge alone made the merge loop ~4000 cycles but the kernel slower (72.4 vs 71.0 us):
// its first S came ~4000 cycles later and its pairs ~150 cycles slower. The cause is the code's
// size: with the finish inlined in each consumer's branch the merge kernel was 161 KB of SASS (v16:
// 136 KB), and v16 compiled with that fp16 code present but never run (170 KB) was as late to its
// first S and 2.5 us slower. One finish after the branches brings it to 124 KB: first S back at
// ~7700 cycles, finish ~10900 cycles (v16: ~15100), 69.1-69.3 us (v16 71.0-71.1) in the probe.
#include "flash_mla_seesaw.cuh"

namespace {
using namespace mla;
using namespace mla::seesaw;

constexpr int kOpt = OPT_V6 | OPT_LAZY_MAX | OPT_Q_TMA | OPT_ONE_FINISH;

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v17(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
              const __grid_constant__ LatentArgs a, int nsplits, float sl2, TileOut to)
{
    seesaw_cta<false, kOpt>(&tmap, a, nsplits, sl2, to, Plan{}, &qmap);
}

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v17_merge(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
                    const __grid_constant__ LatentArgs a, int nsplits, float sl2, TileOut to)
{
    seesaw_cta<false, kOpt | OPT_CMERGE | OPT_CM_LEAN | OPT_CM_F16>(&tmap, a, nsplits, sl2, to, Plan{}, &qmap);
}

constexpr fmh::Version kVersion = {"flash_mla_v17", nullptr,          0,           fmh::flash_mla_hopper_combine_mlp<DA>,
                                   nullptr,         0,                flash_mla_v17, MSMEM_BYTES,
                                   flash_mla_v17_merge, MSMEM_BYTES};

}  // namespace

MLA_FMH_REGISTER(mla_kv_flash_mla_v17, 17, 1,
                 "hopper: v16 with the split merge's peer rows exchanged in per-row scaled fp16 and one copy of the "
                 "finish (a smaller kernel)")
