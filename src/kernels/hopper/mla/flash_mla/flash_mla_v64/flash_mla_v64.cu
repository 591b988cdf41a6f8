// flash_mla_v64 (hopper, sm_90a only): flash_mla_v61 whose pair walk requests the next item's Q
// at the end of the current item's loop, before its finish (OPT_FM_QPRE), instead of after the
// finish and the barrier that frees the stages. The other kernels are v61's.
//
// Why (thirty-first session, call 1): Nsight Compute's per-instruction sampling of v61's pair walk
// at b=32,s=8 (four items a CTA) had 1.7 % of all samples on the Q wait at an item's start and
// 2.7 % on the first S's box waits; FlashMLA's kernel issues the next request's Q before it stores
// the current output. An item's Q is 72 KB.
// Prediction (written before the run): 0.5-1.5 % faster at s = 4, 8 and b=128,t=8192,s=2 (two to
// four items a CTA), level elsewhere (the static grids and v47's kernels are v61's).
#include "flash_mla_fmpair.cuh"

namespace {
using namespace mla;
using namespace mla::seesaw;

constexpr long long kOpt = OPT_V6 | OPT_LAZY_MAX | OPT_Q_TMA | OPT_ONE_FINISH | OPT_NOMAX;  // v41's

// flash_mla_v64, _walk, _merge (v47's kernels) and _pair, _pair_walk (v56's), every one with
// v61's OPT_L2_EVICT; the pair kernels with OPT_FM_QPRE (the static grid has one item: no effect).
MLA_FMPAIR_KERNELS(flash_mla_v64, kOpt | OPT_L2_EVICT, OPT_FM_QPRE)

MLA_FMPAIR_V56_VERSION(flash_mla_v64);

}  // namespace

MLA_FMH_REGISTER(mla_kv_flash_mla_v64, 64, 1,
                 "hopper: v61 whose pair walk requests the next item's Q before the current item's finish")
