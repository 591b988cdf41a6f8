// flash_mla_v58 (hopper, sm_90a only): flash_mla_v56, with the pair's pages and Q loaded by TMA
// with an L2 evict-first hint (OPT_L2_EVICT), as FlashMLA's SM90 kernel loads both. v47's kernels
// (s * h <= 128 and split plans) are v56's, unchanged.
//
// Why (thirtieth session, call 1): under Nsight Compute (L2 flushed and clean, ~1.67 GHz average)
// v56's pair kernel took fewer SM cycles than FlashMLA's split kernel at b=32,s=2 (195.4 k against
// 197.6 k), but on the timeline of the flush-method loop (1980 MHz, the L2 full of the flush's
// dirty lines) it was 114.8 us against 108.8. FlashMLA's combine there read almost nothing (its
// plan gives every part one whole request), so the gap is the main kernel in the stream. The one
// memory-side difference between the two kernels' loads is the cache hint (FlashMLA's K and Q
// loads are evict-first; ours carry no hint). Earlier evict-first pages
// (twelfth session, seesaw kernels, back-to-back launches without a flush) were level at s=1 and
// 1 % slower at s=16; not measured on this pair or in the flush method.
// Prediction (written before the run): faster at s <= 2 (pages from DRAM), level to 1 % slower
// at s >= 8.
#include "flash_mla_fmpair.cuh"

namespace {
using namespace mla;
using namespace mla::seesaw;

constexpr long long kOpt = OPT_V6 | OPT_LAZY_MAX | OPT_Q_TMA | OPT_ONE_FINISH | OPT_NOMAX;  // v41's

// flash_mla_v58, _walk, _merge (v47's kernels) and _pair, _pair_walk (v56's pair + OPT_L2_EVICT).
MLA_FMPAIR_KERNELS(flash_mla_v58, kOpt, OPT_L2_EVICT)

MLA_FMPAIR_V56_VERSION(flash_mla_v58);

}  // namespace

MLA_FMH_REGISTER(mla_kv_flash_mla_v58, 58, 1,
                 "hopper: v56, with the pair's pages and Q loaded with an L2 evict-first hint (FlashMLA's)")
