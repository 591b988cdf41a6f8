// flash_mla_v63 (hopper, sm_90a only): flash_mla_v61 whose mbarrier waits sleep between tries
// (OPT_MB_SLEEP: try_wait with a suspend-time hint, `NANOSLEEP.SYNCS` in the SASS) in every
// kernel of the set: the pair's and the seesaw's page, Q and row-sum waits, the producer's.
//
// Why (thirty-first session, call 1): Nsight Compute's per-instruction sampling of v61's pair walk
// at b=32,s=8 put 5.8 % of all samples on one TRYWAIT retry branch (warpgroup 1's next S waiting
// for page B's RoPE box, reloaded only after warpgroup 0's PV(B,L)), and 14 % on HGMMA issue
// waiting for the warpgroup's other warps ("gmma"; FlashMLA's kernel 2 %). FlashMLA's waits are
// CUTLASS's (37 NANOSLEEP.SYNCS in its SASS, none in ours). A spinning warp issues TRYWAITs on the
// scheduler it shares with a warp of the other math warpgroup.
// Prediction (written before the run): level to 1.5 % faster on the pair rows (s >= 2), level at
// s = 1 and h = 16 (the seesaw's producer waits, the consumers mostly find their boxes landed).
#include "flash_mla_fmpair.cuh"

namespace {
using namespace mla;
using namespace mla::seesaw;

constexpr long long kOpt = OPT_V6 | OPT_LAZY_MAX | OPT_Q_TMA | OPT_ONE_FINISH | OPT_NOMAX;  // v41's

// flash_mla_v63, _walk, _merge (v47's kernels) and _pair, _pair_walk (v56's), every one with
// v61's OPT_L2_EVICT and OPT_MB_SLEEP.
MLA_FMPAIR_KERNELS(flash_mla_v63, kOpt | OPT_L2_EVICT | OPT_MB_SLEEP, 0)

MLA_FMPAIR_V56_VERSION(flash_mla_v63);

}  // namespace

MLA_FMH_REGISTER(mla_kv_flash_mla_v63, 63, 1,
                 "hopper: v61 with mbarrier waits that sleep between tries (try_wait's suspend-time hint)")
