// flash_mla_v21 (hopper, sm_90a only): flash_mla_v19 with a persistent one-split kernel. Where
// the plan has one split, one CTA an SM walks row blocks blockIdx.x, + gridDim.x, ... of all b
// requests (flash_mla_persist.cuh's persist_cta with OPT_PSTATIC) and prepares the next row
// block inside the current one's last pair: its Q by TMA once Q is dead, its first two pages by
// the reload rule, its first S issued before the finish. No planner, no combine: every row block
// is whole, as in v19's one-split grid, and the walk is v19's waves in the same order (item k * SMs
// + x is what the k-th wave's CTA x ran), so the pages' L2 reuse across a request's row blocks
// is unchanged. With 2 splits the kernels are v19's (the merge kernel, the Q-by-TMA kernel).
//
// Why (timeline probe of v19's one-split kernel at b=32,h=128,s=16,t=4096, 2026-12-01): a CTA
// spends ~13000 SM cycles from its start to the first S_A (Q ~10300 of them: 132 CTAs of a wave
// ask DRAM for their Q tiles and first pages at once) and ~6400 from the loop's exit to the
// stores, 9-10 % of a 32-pair CTA, and 0.5 us between CTAs; each SM runs 7-8 CTAs a launch.
// v8 (persistent, v5's pair schedule, 2026-11-30) measured the transition at ~140 cycles of Q wait
// and a finish of 8000-13000 cycles; its pairs were v5's, ~10 % slower than v19's (lazy max).
// Prediction: ~13000 of the ~19400 cycles a row block saved, less a slower finish (no staged
// store: the stages hold the next pages): 3-5 % at s >= 16; nothing at s = 1 (two splits).
//
// This version's finish is store_rows's (4-byte stores from the accumulator); flash_mla_v22 is
// the same with 16-byte stores (OPT_ST16).
//
// Measured (2026-12-01, H200, six bench-all passes alternated with v19 and v22,
// docs/kernels/flash_mla.md): NOT THE DEFAULT, slower than v19 on 13 of the 16 grid rows, by 2-9 %
// (b=32,s=2 126.7 against 118.4 us with one row block a CTA, s=16 985.3 against 962.9). The 4-byte
// stores are the cost: v22, the same kernel with 16-byte stores, is at v19's level or better.
#include "flash_mla_persist.cuh"

namespace {
using namespace mla;
using namespace mla::seesaw;

constexpr int kOpt = OPT_V6 | OPT_LAZY_MAX | OPT_Q_TMA | OPT_ONE_FINISH;  // v19's
constexpr int kPOpt = OPT_V5 | OPT_LAZY_MAX | OPT_PSTATIC;

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v21(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
              const __grid_constant__ LatentArgs a, int nsplits, float sl2, TileOut to)
{
    seesaw_cta<false, kOpt>(&tmap, a, nsplits, sl2, to, Plan{}, &qmap);
}

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v21_merge(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
                    const __grid_constant__ LatentArgs a, int nsplits, float sl2, TileOut to)
{
    seesaw_cta<false, kOpt | OPT_CMERGE | OPT_CM_PUSH | OPT_CM_L2 | OPT_CM_SENTMAX>(&tmap, a, nsplits, sl2, to,
                                                                                  Plan{}, &qmap);
}

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v21_persist(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
                      const __grid_constant__ LatentArgs a, int b, float sl2, TileOut to)
{
    persist_cta<kPOpt>(&tmap, &qmap, a, sl2, to, Plan{}, b);
}

constexpr fmh::Version kVersion = {"flash_mla_v21",       nullptr,     0,
                                   fmh::flash_mla_hopper_combine_mlp<DA>, nullptr, 0,
                                   flash_mla_v21,         MSMEM_BYTES, flash_mla_v21_merge,
                                   MSMEM_BYTES,           CM_WS_CTA,   flash_mla_v21_persist,
                                   PSMEM_BYTES};

}  // namespace

MLA_FMH_REGISTER(mla_kv_flash_mla_v21, 21, 1,
                 "hopper: v19 with a persistent one-split kernel (one CTA an SM walks the row blocks, the next "
                 "row block's Q, pages and first S prepared in the last pair; 4-byte register stores)")
