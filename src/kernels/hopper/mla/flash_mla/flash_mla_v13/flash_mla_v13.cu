// flash_mla_v13 (hopper, sm_90a only): flash_mla_v12 with the pages prefetched into L2 by an idle
// producer warp (OPT_L2_PF) when a request's rows fit two row blocks (s * h <= 128).
//
// At s = 1 and h = 128 a page is read by two CTAs only, so the reload of each stage comes from
// DRAM; v9's timeline probe put that pair at ~6400 SM cycles against ~5500 at s = 16, where
// pages come from L2. v6 tried two prefetches and both were slower everywhere; this one is
// issued by warp 0 of the producer warpgroup, which does nothing else, by line, PF_AHEAD = 4
// pages past the consumers' pair (flash_mla_seesaw.cuh says why the earlier two hurt).
//
// Prediction: b=32,s=1 (16 pairs a CTA) 16 x ~900 cycles = ~7 us less (71 -> ~64 us); b=64 and
// b=128 at s=1 10-12 % less; h=16 (one row block a request, DRAM-bound at ~94 % of the measured
// copy rate) little change; s >= 2 unchanged (prefetcher off).
#include "flash_mla_seesaw.cuh"

namespace {
using namespace mla;
using namespace mla::seesaw;

constexpr int kOpt = OPT_V6 | OPT_LAZY_MAX | OPT_Q_TMA | OPT_L2_PF;

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v13(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
              const __grid_constant__ LatentArgs a, int nsplits, float sl2, TileOut to)
{
    seesaw_cta<false, kOpt>(&tmap, a, nsplits, sl2, to, Plan{}, &qmap);
}

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v13_merge(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
                    const __grid_constant__ LatentArgs a, int nsplits, float sl2, TileOut to)
{
    seesaw_cta<false, kOpt | OPT_CMERGE>(&tmap, a, nsplits, sl2, to, Plan{}, &qmap);
}

constexpr fmh::Version kVersion = {"flash_mla_v13", nullptr,          0,           fmh::flash_mla_hopper_combine_mlp<DA>,
                                   nullptr,         0,                flash_mla_v13, MSMEM_BYTES,
                                   flash_mla_v13_merge, MSMEM_BYTES};

}  // namespace

MLA_FMH_REGISTER(mla_kv_flash_mla_v13, 13, 1,
                 "hopper: v12 with the pages prefetched into L2 by an idle producer warp when s*h <= 128 "
                 "(pages from DRAM)")
