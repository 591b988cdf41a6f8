// flash_mla_v18 (hopper, sm_90a only; the default flash_mla version in the twelfth session,
// 2026-12-01, then not_default: flash_mla_v19 sends the merge's rows through L2): flash_mla_v17
// with the split merge pushed instead of pulled (OPT_CM_PUSH). The one-split kernel is v17's source.
//
// v17's finish at b=32,h=128,s=1,t=4096 (two splits, 2-CTA clusters) took ~10900 SM cycles of a
// ~69 us kernel (timeline probe, 2026-11-30): the row sums ~800, each CTA writing its normalised
// halves to its own shared memory (fp32 for its rows, scaled fp16 for the peer's) ~2400, a
// cluster barrier ~1150, the weights (the peer's lse over distributed shared memory) ~1250, the
// loop that reads the peer's fp16 rows over DSMEM ~4200, and a second barrier ~1000 that keeps
// each CTA alive for its peer's reads. Here row r is merged by split (r >> 3) & 1, which is one of
// the two accumulator rows every consumer thread holds: the thread keeps that row in registers
// and stores the other, in v17's per-row scaled fp16, straight into the peer's shared memory
// (16-byte remote stores, no reply to wait for), with its lse and 1 / scale. One cluster barrier
// then makes the rows visible, the merge reads them from local memory in the thread's own order,
// and the merged bf16 rows leave through shared memory in 16-byte pieces. The first barrier (the
// peer's stages are free) is arrived on at the loop's exit and waited on just before the stores.
//
// Measured (timeline probe, b=32,s=1, same call, 2026-12-01): the finish ~11000 -> ~8700 cycles,
// the kernel 68.6-69.0 -> 67.5-67.8 us a launch. The push runs at ~11 bytes a cycle, the rate of
// v17's DSMEM loads: what it saved is the work around the transfer. The merge kernel is 101 KB of
// SASS (v17's 121 KB).
#include "flash_mla_seesaw.cuh"

namespace {
using namespace mla;
using namespace mla::seesaw;

constexpr int kOpt = OPT_V6 | OPT_LAZY_MAX | OPT_Q_TMA | OPT_ONE_FINISH;

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v18(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
              const __grid_constant__ LatentArgs a, int nsplits, float sl2, TileOut to)
{
    seesaw_cta<false, kOpt>(&tmap, a, nsplits, sl2, to, Plan{}, &qmap);
}

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v18_merge(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
                    const __grid_constant__ LatentArgs a, int nsplits, float sl2, TileOut to)
{
    seesaw_cta<false, kOpt | OPT_CMERGE | OPT_CM_PUSH>(&tmap, a, nsplits, sl2, to, Plan{}, &qmap);
}

constexpr fmh::Version kVersion = {"flash_mla_v18", nullptr,          0,           fmh::flash_mla_hopper_combine_mlp<DA>,
                                   nullptr,         0,                flash_mla_v18, MSMEM_BYTES,
                                   flash_mla_v18_merge, MSMEM_BYTES};

}  // namespace

MLA_FMH_REGISTER(mla_kv_flash_mla_v18, 18, 1,
                 "hopper: v17 with the split merge pushed: each thread keeps the row it merges in registers and "
                 "stores the other into the peer's shared memory in scaled fp16 (one cluster barrier, no DSMEM loads)")
