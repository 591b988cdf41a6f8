// flash_mla_v97 (hopper, sm_90a only): flash_mla_v68 whose static-grid kernels (the seesaw one-split
// and split-merge kernels, and the pair's static grid; not the walks) take OPT_EARLY_Q: the loading
// thread requests the Q tile and reads the split's first two block-table entries right after
// griddepcontrol.wait, beside the request's length, instead of after it.
//
// Why (forty-third session): at b=32,s=1 (the split merge, 128 CTAs in clusters of 2) the CTAs
// whose loop exits come last are those whose first S came last (probe, H100: first S done
// 3.9-7.5 us after the start, correlation with the exit 0.74-0.76; from the first S to the exit
// the CTAs differ less and correlate 0.30-0.45). v68's merge kernel SASS starts with the length
// (LDG, used at once), then the nine Q boxes, then the first block-table entry (LDG, used at once),
// then page A's boxes: three dependent global round trips, from DRAM when the inputs rotate past
// the L2 as in the benchmark's graphs. Here the first two are one.
// Prediction (written before the run): first S ~1,000-1,500 cycles sooner for the median CTA,
// b=32,s=1 0.3-0.8 us faster in graph replays; b=64,s=1 and h=16 (the one-split static kernels)
// and b=32,s=2 (the pair's static grid) the same or slightly faster; the rows on the walks
// unchanged (the same SASS as v68's, cuobjdump, names stripped).
#include "flash_mla_fmpair.cuh"

namespace {
using namespace mla;
using namespace mla::seesaw;

constexpr long long kOpt = OPT_V6 | OPT_LAZY_MAX | OPT_Q_TMA | OPT_ONE_FINISH | OPT_NOMAX;  // v41's

// flash_mla_v97, _walk, _merge, _pair, _pair_walk: v68's (v65's) kernels with OPT_EARLY_Q (read by
// the static-grid kernels only).
MLA_FMPAIR_KERNELS(flash_mla_v97, kOpt | OPT_L2_EVICT | OPT_EARLY_Q, OPT_MB_SLEEP | OPT_FM_QPRE)
// flash_mla_v97_n, _n_walk, _n_merge: v68's unhinted set for s * h <= 64, the same way.
MLA_FMPAIR_SEESAW_KERNELS(flash_mla_v97_n, kOpt | OPT_EARLY_Q)

MLA_FMPAIR_V56_VERSION_NARROW(flash_mla_v97);

}  // namespace

MLA_FMH_REGISTER(mla_kv_flash_mla_v97, 97, 1,
                 "hopper: v68 with the static grid's Q and first block-table entries requested beside the request's length (OPT_EARLY_Q)")
