// flash_mla_v62 (hopper, sm_90a only): flash_mla_v61 with no L2 hint at all where a page feeds
// one row block (OPT_L2_PLAIN1: h = 16), the loads there as v56's; the pair and the loads where a
// page feeds two or more row blocks as v61's (evict-first).
//
// Why (thirtieth session, call 4, same call): v61's evict-normal hint at h=16 was still 1.4 %
// slower than v56's unhinted loads (t=4096 161.4 against 159.1 us, t=8192 303.0 against 298.7).
// Prediction (written before the run): v56's times at h = 16, v61's elsewhere.
// Built in the thirtieth session after its device time was spent; first checked and timed in the
// thirty-first (devlog). Its pair kernels are v61's (cuobjdump md5); the seesaw kernels add the
// one-reader branch to v61's loads.
#include "flash_mla_fmpair.cuh"

namespace {
using namespace mla;
using namespace mla::seesaw;

constexpr long long kOpt = OPT_V6 | OPT_LAZY_MAX | OPT_Q_TMA | OPT_ONE_FINISH | OPT_NOMAX;  // v41's

// flash_mla_v62, _walk, _merge (v47's kernels) and _pair, _pair_walk (v56's kernels with OPT_L2_EVICT, OPT_L2_PLAIN1).
MLA_FMPAIR_KERNELS(flash_mla_v62, kOpt | OPT_L2_EVICT | OPT_L2_PLAIN1, 0)

MLA_FMPAIR_V56_VERSION(flash_mla_v62);

}  // namespace

MLA_FMH_REGISTER(mla_kv_flash_mla_v62, 62, 1,
                 "hopper: v61 with unhinted loads where a page feeds one row block (h=16)")
