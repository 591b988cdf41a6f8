// flash_mla_v82 (hopper, sm_90a only): flash_mla_v68 with OPT_FM_PBFENCE in its pair kernels:
// warpgroup 1 stores P_B before issuing PV(B,R), as v68, and fences it for the async proxy after
// the issue (flash_mla_fmpair.cuh, PB_FENCE, says why). The seesaw kernels (s * h <= 128, h = 16)
// are v68's, rebuilt under this name.
// Built in the thirty-sixth session and NOT YET RUN ON A GPU (the session's device time ran out):
// run its `--check` grid (the devlog's thirty-sixth section lists the commands) before timing it.
// Prediction (written before any run): softmax B's chain (S_B waited -> PV(B,R) issued) ~90 cycles
// shorter (the fence's share in the s34 probe), unless the fence, now behind the issue, waits for
// the wgmma; the pair rows (s >= 2 at h = 128) 0-1.5 % faster than v68; s = 1 and h = 16 level.
#include "flash_mla_fmpair.cuh"

namespace {
using namespace mla;
using namespace mla::seesaw;

constexpr long long kOpt = OPT_V6 | OPT_LAZY_MAX | OPT_Q_TMA | OPT_ONE_FINISH | OPT_NOMAX;  // v41's

// flash_mla_v82, _walk, _merge: v68's seesaw kernels; _pair, _pair_walk: v68's pair + OPT_FM_PBFENCE.
MLA_FMPAIR_KERNELS(flash_mla_v82, kOpt | OPT_L2_EVICT, OPT_MB_SLEEP | OPT_FM_QPRE | OPT_FM_PBFENCE)
// flash_mla_v82_n, _n_walk, _n_merge: v56's (no L2 hint), for s * h <= 64, as v68.
MLA_FMPAIR_SEESAW_KERNELS(flash_mla_v82_n, kOpt)

MLA_FMPAIR_V56_VERSION_NARROW(flash_mla_v82);

}  // namespace

MLA_FMH_REGISTER(mla_kv_flash_mla_v82, 82, 1,
                 "hopper: v68, with P_B's proxy fence after PV(B,R)'s issue (built s36, not yet run on a GPU)")
