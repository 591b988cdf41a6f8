// flash_mla_v65 (hopper, sm_90a only): flash_mla_v61 whose pair kernels (static grid and walk)
// take both of the thirty-first session's changes, v63's sleeping mbarrier waits (OPT_MB_SLEEP)
// and v64's early Q for the walk's next item (OPT_FM_QPRE); v47's kernels (s * h <= 128: s = 1
// at h = 128, h = 16) are v61's.
//
// Why (thirty-first session, call 2, first-10 medians in the same call, FlashMLA beside each):
// each change alone took ~1 % off the pair walk rows (s=8: v61 429.6 us, v64 425.4, v63 424.0;
// s=4: 221.3, 219.8, 219.5; b=128,t=8192,s=2: 848.9, 849.8, 836.6), while v63's sleeping waits
// in v47's kernels were level to 1 % slower at s = 1 (b=64,s=1 125.9 against 124.7).
// Prediction (written before the run): 1-2.5 % faster than v61 at s = 4, 8 and
// b=128,t=8192,s=2, level at s = 2 and on the rows v47's kernels run.
#include "flash_mla_fmpair.cuh"

namespace {
using namespace mla;
using namespace mla::seesaw;

constexpr long long kOpt = OPT_V6 | OPT_LAZY_MAX | OPT_Q_TMA | OPT_ONE_FINISH | OPT_NOMAX;  // v41's

// flash_mla_v65, _walk, _merge (v61's v47-kernels) and _pair, _pair_walk (v61's pair with
// OPT_MB_SLEEP and OPT_FM_QPRE).
MLA_FMPAIR_KERNELS(flash_mla_v65, kOpt | OPT_L2_EVICT, OPT_MB_SLEEP | OPT_FM_QPRE)

MLA_FMPAIR_V56_VERSION(flash_mla_v65);

}  // namespace

MLA_FMH_REGISTER(mla_kv_flash_mla_v65, 65, 1,
                 "hopper: v61 whose pair kernels wait on mbarriers asleep (v63) and request the walk's next Q early (v64)")
