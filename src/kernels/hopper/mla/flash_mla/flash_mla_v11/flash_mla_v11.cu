// flash_mla_v11 (hopper, sm_90a only): flash_mla_v9 with the Q tile loaded by TMA (OPT_Q_TMA).
//
// v9's timeline probe (scripts/probe/v3_trace.cu, 2026-11-30) put 7300 SM cycles at b=32,s=1 and
// 10200 at s=16 between the consumers' start and the Q tile landed (load_q_batched: every
// consumer thread's 16-byte loads, then a barrier), and another ~3000 to the first S. A CTA runs
// 16 (s=1, two splits) to 32 pairs of ~5500 cycles, so that start-up is 5-7 % of it, and the
// tensor pipe idles through all of it: the SM holds one CTA. Here one thread issues the nine Q
// boxes by TMA at the start, ahead of the first two pages, and the consumers wait on one
// mbarrier; a 72 KB TMA from L2 takes ~1100-2000 cycles (scripts/probe/tma_bw.cu).
//
// The box is one row block of the tensor map [b][s][h][576] (fmh::q_tmap), which needs h to
// divide 64 or be a multiple of 64: every h the library accepts (16, 32, 64, 128) is; validate
// refuses any other.
//
// Measured 2026-11-30 (docs/kernels/flash_mla.md, v11): faster than v9 at b=32,s=1 (78.3-78.6 vs
// 80.7-81.5 us, three runs), b=64,s=1 and h=16; within the run-to-run spread at s=2..128; slower
// at b=128,h=128,t=8192 in all three runs (s=1: 494, 515, 543 vs 481, 476, 478 us) with the same
// one-split plan. Not explained (the probe, one split, b=128,t=4096, had v11 2 % faster), so
// registered not_default until an A/B at that shape settles it.
#include "flash_mla_seesaw.cuh"

namespace {
using namespace mla;
using namespace mla::seesaw;

constexpr int kOpt = OPT_V6 | OPT_LAZY_MAX;

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v11(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
              const __grid_constant__ LatentArgs a, int nsplits, float sl2, TileOut to)
{
    seesaw_cta<false, kOpt | OPT_Q_TMA>(&tmap, a, nsplits, sl2, to, Plan{}, &qmap);
}

constexpr fmh::Version kVersion = {"flash_mla_v11", nullptr, 0, fmh::flash_mla_hopper_combine_mlp<DA>, nullptr, 0,
                                   flash_mla_v11, MSMEM_BYTES};

}  // namespace

MLA_FMH_REGISTER(mla_kv_flash_mla_v11, 11, 1,
                 "hopper: v9 with the Q tile loaded by TMA at the CTA's start (2-4% faster at b<=64, but 3-13% "
                 "slower at b=128,t=8192 in three runs, not explained yet)")
