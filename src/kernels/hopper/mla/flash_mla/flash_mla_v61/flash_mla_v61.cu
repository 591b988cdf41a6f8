// flash_mla_v61 (hopper, sm_90a only): flash_mla_v58 (the pair's pages and Q loaded with an L2
// evict-first hint), with v47's kernels (one-split static grid and walk at s * h <= 128, the split
// merge) loading the same way where a page feeds two or more row blocks of its request (s * h >
// 64: s = 1 at h = 128), and with the default policy where it feeds one (h = 16): OPT_L2_EVICT,
// seesaw::l2_page_policy.
//
// Why (thirtieth session, calls 2 and 3, FlashMLA beside each): evict-first on every kernel
// (flash_mla_v60, measured and removed) ran b=32,s=2 in 114.6 us against v56's 118.9,
// b=64,s=1 124.1 against 125.7, b=32,s=1 68.6 against 69.6 (same call), but both h=16 rows
// 4.4-4.8 % slower (t=8192: 311.0 against 297.9, below FlashMLA's 308.9). FlashMLA loads its pages
// and Q evict-first.
// Prediction (written before the run): v60's times where s * h > 64, v56's at h = 16.
#include "flash_mla_fmpair.cuh"

namespace {
using namespace mla;
using namespace mla::seesaw;

constexpr long long kOpt = OPT_V6 | OPT_LAZY_MAX | OPT_Q_TMA | OPT_ONE_FINISH | OPT_NOMAX;  // v41's

// flash_mla_v61, _walk, _merge (v47's kernels) and _pair, _pair_walk (v56's kernels, every one with OPT_L2_EVICT).
MLA_FMPAIR_KERNELS(flash_mla_v61, kOpt | OPT_L2_EVICT, 0)

MLA_FMPAIR_V56_VERSION(flash_mla_v61);

}  // namespace

MLA_FMH_REGISTER(mla_kv_flash_mla_v61, 61, 1,
                 "hopper: v56 with pages and Q loaded evict-first in L2 where a page feeds 2+ row blocks (FlashMLA's hint)")
