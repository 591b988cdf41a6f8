// flash_mla_v19 (hopper, sm_90a only): flash_mla_v18 with the split merge's transfer through L2
// (OPT_CM_L2) and the scale step on the sent row only (OPT_CM_SENTMAX). The one-split kernel is
// v18's (v17's) source.
//
// v18's finish at b=32,h=128,s=1,t=4096 (two splits, 2-CTA clusters) took ~8700 SM cycles
// (timeline probe, 2026-12-01): the row sums ~800, the scale step ~650, the push of 32 KB of
// scaled fp16 rows into the peer's shared memory ~3000 (DSMEM at ~11 bytes a cycle), the second
// cluster barrier ~1250, the merge ~1900 and the stores ~900. Here each CTA writes the rows it
// sends to its own slice of a global workspace (33 KB a CTA, coalesced 16-byte stores that stay
// in L2), one cluster barrier with release / acquire semantics makes them visible, and each
// thread then reads its peer's eight 16-byte pieces from L2 with all loads in flight. The first
// cluster barrier of v18 (the peer's stages are free) is gone: nothing is written into the peer.
// Prediction: the transfer ~3000 -> ~1500 cycles and ~300 fewer in the scale step, the kernel
// ~1 us faster at b=32,s=1; nothing else changes (the one-split kernel is v18's).
//
// Measured (timeline probe, b=32,s=1, alternated with v18's merge kernel in the same call,
// 2026-12-01): the finish ~8700 -> ~6600-7000 cycles; the kernel 66.6-67.1 against 67.3-67.5 us
// a launch (call 2) and 73.2-73.3 against 74.0-74.2 (call 4, a slower device). The scale step
// did not move (ptxas had already dropped the unused row's maxima in v18). The one-split kernel's
// SASS is v18's. The workspace is 33 KB a CTA (4.3 MB at b=32,s=1), asked for through the plan.
#include "flash_mla_seesaw.cuh"

namespace {
using namespace mla;
using namespace mla::seesaw;

constexpr int kOpt = OPT_V6 | OPT_LAZY_MAX | OPT_Q_TMA | OPT_ONE_FINISH;

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v19(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
              const __grid_constant__ LatentArgs a, int nsplits, float sl2, TileOut to)
{
    seesaw_cta<false, kOpt>(&tmap, a, nsplits, sl2, to, Plan{}, &qmap);
}

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v19_merge(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
                    const __grid_constant__ LatentArgs a, int nsplits, float sl2, TileOut to)
{
    seesaw_cta<false, kOpt | OPT_CMERGE | OPT_CM_PUSH | OPT_CM_L2 | OPT_CM_SENTMAX>(&tmap, a, nsplits, sl2, to,
                                                                                  Plan{}, &qmap);
}

constexpr fmh::Version kVersion = {"flash_mla_v19", nullptr,          0,           fmh::flash_mla_hopper_combine_mlp<DA>,
                                   nullptr,         0,                flash_mla_v19, MSMEM_BYTES,
                                   flash_mla_v19_merge, MSMEM_BYTES, CM_WS_CTA};

}  // namespace

MLA_FMH_REGISTER(mla_kv_flash_mla_v19, 19, 0,
                 "hopper: v18 with the split merge's rows sent through L2 (a global workspace slice a CTA, one "
                 "release/acquire cluster barrier) and the scale step on the sent row only")
