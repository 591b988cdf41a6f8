// flash_mla_v99 (hopper, sm_90a only): flash_mla_v68 whose seesaw kernels of the static grid (the
// one-split kernel: b=64,s=1 and h=16 in the grid; the split merge: b=32,s=1) take v97's
// OPT_EARLY_Q, and whose pair kernels stay v68's. So every kernel is one already timed: the seesaw
// kernels are v97's, the pair kernels v68's (cuobjdump SASS, names stripped, identical).
//
// Why (forty-third session): v97 (OPT_EARLY_Q in the pair's static grid too) was faster than v68
// at b=32,s=1 in three calls on an H100 (graph replays 67.2-67.4 against 68.1-68.3 us, flush 75.1-75.2
// against 75.8-76.0, each beside FlashMLA in one process), and level or faster at b=64,s=1 and
// h=16 (one pass), but its pair rows (s=2, s=16: one pass each) were inside the noise of one pass
// either way. v99 takes the measured gain and leaves the pair as it was.
// Measured (call 5, H100, each beside FlashMLA in one process): b=32,s=1 graph 67.3-67.4 against
// v68's 68.0-68.1 us, flush 75.4 against 76.1; test_kernels full grid 78 passed, 2 skipped. The
// default from the forty-third session; its H200 times are not measured yet (no H200 was lent).
#include "flash_mla_fmpair.cuh"

namespace {
using namespace mla;
using namespace mla::seesaw;

constexpr long long kOpt = OPT_V6 | OPT_LAZY_MAX | OPT_Q_TMA | OPT_ONE_FINISH | OPT_NOMAX;  // v41's

// flash_mla_v99, _walk, _merge: v97's seesaw kernels (the walk reads no OPT_EARLY_Q: v68's).
MLA_FMPAIR_SEESAW_KERNELS(flash_mla_v99, kOpt | OPT_L2_EVICT | OPT_EARLY_Q)
// flash_mla_v99_pair, _pair_walk: v68's.
MLA_FMPAIR_PAIR_KERNELS(flash_mla_v99, kOpt | OPT_L2_EVICT | OPT_MB_SLEEP | OPT_FM_QPRE)
// flash_mla_v99_n, _n_walk, _n_merge: v97's unhinted set for s * h <= 64.
MLA_FMPAIR_SEESAW_KERNELS(flash_mla_v99_n, kOpt | OPT_EARLY_Q)

MLA_FMPAIR_V56_VERSION_NARROW(flash_mla_v99);

}  // namespace

MLA_FMH_REGISTER(mla_kv_flash_mla_v99, 99, 0,
                 "hopper: v68 with v97's static-grid seesaw kernels (OPT_EARLY_Q) and v68's pair")
