// flash_mla_v68 (hopper, sm_90a only): flash_mla_v65, and where a page feeds one row block (s * h
// <= 64: h = 16 at s = 1) a second set of v47's kernels built without any L2 hint (v56's loads),
// which the host picks for those problems (Version::narrow) instead of v62's branch inside the
// shared load helper.
//
// Why (thirty-first session): v66 (v62's loads + v65's pair) ran h=16,t=8192 in 300.2 us (4039
// GB/s) against v65's 302.0 (4015 GB/s, 0.4 % over the 4000 GB/s target), but v62's runtime branch
// cost 1.2-1.6 % at b=64,s=1. Here the kernels of every other problem are v65's own build.
// Prediction (written before the run): h=16 rows at v66's times (0.5-1.5 % under v65), every
// h = 128 row at v65's (the same kernels, by cuobjdump md5).
// Measured (thirty-second session, call 4, FlashMLA beside each): h=16,t=8192 299.8 against v65's
// 303.4 us (4045 against 3997 GB/s), h=16,t=4096 160.0 against 161.2, b=64,s=1 level (124.5 against
// 124.8, the same kernels). The default from the thirty-second session.
#include "flash_mla_fmpair.cuh"

namespace {
using namespace mla;
using namespace mla::seesaw;

constexpr long long kOpt = OPT_V6 | OPT_LAZY_MAX | OPT_Q_TMA | OPT_ONE_FINISH | OPT_NOMAX;  // v41's

// flash_mla_v68, _walk, _merge, _pair, _pair_walk: v65's kernels.
MLA_FMPAIR_KERNELS(flash_mla_v68, kOpt | OPT_L2_EVICT, OPT_MB_SLEEP | OPT_FM_QPRE)
// flash_mla_v68_n, _n_walk, _n_merge: v56's (no L2 hint), for s * h <= 64.
MLA_FMPAIR_SEESAW_KERNELS(flash_mla_v68_n, kOpt)

MLA_FMPAIR_V56_VERSION_NARROW(flash_mla_v68);

}  // namespace

MLA_FMH_REGISTER(mla_kv_flash_mla_v68, 68, 0,
                 "hopper: v65, with v56's unhinted seesaw kernels where a page feeds one row block (h=16), picked by the host")
