// flash_mla_v66 (hopper, sm_90a only): the thirty-first session's measured changes together:
// v62's loads (v47's kernels: evict-first where a page feeds two or more row blocks, no hint at all
// where it feeds one, h = 16) and v65's pair (sleeping mbarrier waits, the walk's next Q early).
// Its v47-kernels are v62's and its pair kernels v65's, instruction for instruction (cuobjdump md5
// without the names).
//
// Why (thirty-first session, calls 2 and 3, FlashMLA in the same process): v62 ran h=16,t=8192 in
// 300.9 us (v61 303.1 in both call 2 and the thirtieth session's call 4) and t=4096 in 160.8
// (v61 161.1); v65 took 0.6 % off s=2, 1.5 % off s=4 and 0.8 % off s=8 (first-10 medians) against
// v61 in the same call. The two changes touch different kernels.
// Prediction (written before the run): v62's times where s * h <= 128, v65's elsewhere.
#include "flash_mla_fmpair.cuh"

namespace {
using namespace mla;
using namespace mla::seesaw;

constexpr long long kOpt = OPT_V6 | OPT_LAZY_MAX | OPT_Q_TMA | OPT_ONE_FINISH | OPT_NOMAX;  // v41's

// flash_mla_v66, _walk, _merge (v62's v47-kernels) and _pair, _pair_walk (v65's).
MLA_FMPAIR_KERNELS(flash_mla_v66, kOpt | OPT_L2_EVICT | OPT_L2_PLAIN1, OPT_MB_SLEEP | OPT_FM_QPRE)

MLA_FMPAIR_V56_VERSION(flash_mla_v66);

}  // namespace

MLA_FMH_REGISTER(mla_kv_flash_mla_v66, 66, 1,
                 "hopper: v62's loads in v47's kernels and v65's pair (sleeping waits, the walk's next Q early)")
