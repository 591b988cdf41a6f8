// flash_mla_v22 (hopper, sm_90a only): flash_mla_v21 (v19 with a persistent one-split kernel)
// whose persistent kernel stores the final rows in 16-byte pieces (OPT_ST16, store_rows_t16).
//
// v21's finish writes each consumer's 64 x 256 bf16 half from the accumulator with 4-byte stores,
// 64 a thread: a warp instruction writes 16 bytes into each of 8 rows. v6's staged store (through
// the dead stages) cannot run here, the stages hold the next row block's pages. Here a 4 x 4
// transpose of words inside each quad (four xor-shuffles for four 8-column groups) gives each lane
// a whole 16-byte group: 16 stores a thread, 64 contiguous bytes a row a warp instruction.
// Prediction: the finish (v8's probe: 8000-13000 SM cycles a segment with 8-byte fp32 stores)
// shorter by a few thousand cycles, ~1-2 % at s >= 16 over v21.
//
// Measured (2026-12-01, H200, docs/kernels/flash_mla.md): 2-9 % faster than v21 (six bench-all
// passes), and against v19 over fourteen passes in two calls 0.4-1.4 % faster at s = 16..128
// (s=16 945.1 against 958.7 us) and at b=128,t=4096, within 0.5 % on the other rows. NOT THE
// DEFAULT: no row changes side against FlashMLA, and racecheck did not finish in its time limit
// on the small grid at splits=1 (memcheck and synccheck: 0 errors). The timeline probe
// (scripts/probe/v22_trace.cu, b=32,s=16) puts the finish at ~3600-4400 SM cycles and the whole
// transition at ~4200 a row block (v19: ~18000 of start-up and finish), but the pairs at ~5725
// cycles against v19's ~5590: the persistent loop's pairs, not its transitions, are what is left.
#include "flash_mla_persist.cuh"

namespace {
using namespace mla;
using namespace mla::seesaw;

constexpr int kOpt = OPT_V6 | OPT_LAZY_MAX | OPT_Q_TMA | OPT_ONE_FINISH;  // v19's
constexpr int kPOpt = OPT_V5 | OPT_LAZY_MAX | OPT_PSTATIC | OPT_ST16;

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v22(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
              const __grid_constant__ LatentArgs a, int nsplits, float sl2, TileOut to)
{
    seesaw_cta<false, kOpt>(&tmap, a, nsplits, sl2, to, Plan{}, &qmap);
}

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v22_merge(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
                    const __grid_constant__ LatentArgs a, int nsplits, float sl2, TileOut to)
{
    seesaw_cta<false, kOpt | OPT_CMERGE | OPT_CM_PUSH | OPT_CM_L2 | OPT_CM_SENTMAX>(&tmap, a, nsplits, sl2, to,
                                                                                  Plan{}, &qmap);
}

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v22_persist(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
                      const __grid_constant__ LatentArgs a, int b, float sl2, TileOut to)
{
    persist_cta<kPOpt>(&tmap, &qmap, a, sl2, to, Plan{}, b);
}

constexpr fmh::Version kVersion = {"flash_mla_v22",       nullptr,     0,
                                   fmh::flash_mla_hopper_combine_mlp<DA>, nullptr, 0,
                                   flash_mla_v22,         MSMEM_BYTES, flash_mla_v22_merge,
                                   MSMEM_BYTES,           CM_WS_CTA,   flash_mla_v22_persist,
                                   PSMEM_BYTES};

}  // namespace

MLA_FMH_REGISTER(mla_kv_flash_mla_v22, 22, 1,
                 "hopper: v21 (persistent one-split kernel) with the final rows stored in 16-byte pieces "
                 "(a 4 x 4 word transpose in each quad by xor-shuffles)")
