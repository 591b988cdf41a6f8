// flash_mla_v98 (hopper, sm_90a only): flash_mla_v97 whose split-merge kernel (b=32,s=1 in the
// grid: two splits of a row block in a cluster of two) shares the row block's Q tile between the
// cluster's CTAs by TMA multicast (OPT_Q_MCAST): each CTA requests half of Q's nine boxes into
// both, so the start's loads are 184 KB a CTA instead of 221 (Q, pages A and B).
//
// Why (forty-third session): the probe at b=32,s=1 (H100) had the CTAs' first S done 3.9-7.5 us
// after the start, in the same groups of SMs in three runs (correlation 0.83-0.90 between runs,
// pages random or in order), and those CTAs' loop exits last (correlation with the first S
// 0.74-0.76). If the start's loads queue per group of SMs, fewer bytes a CTA start them sooner.
// Prediction (written before the run): the latest first S ~10-15 % sooner, b=32,s=1 0.3-1 us
// faster than v97 in graph replays; every other kernel is v97's (SASS, names stripped).
#include "flash_mla_fmpair.cuh"

namespace {
using namespace mla;
using namespace mla::seesaw;

constexpr long long kOpt = OPT_V6 | OPT_LAZY_MAX | OPT_Q_TMA | OPT_ONE_FINISH | OPT_NOMAX;  // v41's

// flash_mla_v98, _walk, _merge, _pair, _pair_walk: v97's kernels; OPT_Q_MCAST is read by the split
// merge kernel only (seesaw_cta ignores it elsewhere, fmpair_cta never reads it).
MLA_FMPAIR_KERNELS(flash_mla_v98, kOpt | OPT_L2_EVICT | OPT_EARLY_Q | OPT_Q_MCAST, OPT_MB_SLEEP | OPT_FM_QPRE)
// flash_mla_v98_n, _n_walk, _n_merge: v97's unhinted set for s * h <= 64 (its merge kernel runs
// only for h = 16 split plans, and keeps v97's unicast Q: OPT_Q_MCAST rides on the hinted load).
MLA_FMPAIR_SEESAW_KERNELS(flash_mla_v98_n, kOpt | OPT_EARLY_Q)

MLA_FMPAIR_V56_VERSION_NARROW(flash_mla_v98);

}  // namespace

MLA_FMH_REGISTER(mla_kv_flash_mla_v98, 98, 1,
                 "hopper: v97 with the split-merge cluster's Q tile shared by TMA multicast (OPT_Q_MCAST)")
