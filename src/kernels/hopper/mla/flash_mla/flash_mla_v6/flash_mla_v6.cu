// flash_mla_v6 (hopper, sm_90a only): flash_mla_v5 with a short start and a short finish per CTA.
//
// The timeline probe (scripts/probe/v3_trace.cu, now with the SM clock at the CTA's start, after
// its Q load, at its loop's exit and after its final store) showed where v5's CTAs spend the
// cycles that are not page pairs, at b=32,h=128,t=4096 (SM clock ~1.79 GHz):
//
//                                   s=16, 32 pairs   s=1, 32 pairs
//   start -> Q tile loaded            23905            21388   cycles
//   Q loaded -> first S_A done         2863             2898
//   32 pairs                         183327           209587
//   loop exit -> O stored              9042             8381
//   start-up + finish                  16.3 %           13.5 %
//
// and a split CTA of the s=1 row (16 pairs) spends a quarter of its time there. Two causes:
//
//   OPT_Q_BATCH       load_q moves the 72 KB Q tile in 18 dependent round trips per thread (each
//                     16-byte piece is stored to shared memory before the next is loaded);
//                     load_q_batched issues all 18 loads, then the 18 stores.
//   OPT_STAGED_STORE  the final O left in 8-byte stores that each touch eight rows (32 bytes of
//                     each) per warp instruction; it now goes through the dead page stages and
//                     leaves in coalesced 16-byte pieces, 512 bytes per warp instruction.
//
// Everything else is v5 (same options, static split grid, host glue); the options are template
// bits of seesaw_cta in src/kernels/common/flash_mla_seesaw.cuh.
#include "flash_mla_seesaw.cuh"

namespace {
using namespace mla;
using namespace mla::seesaw;

constexpr int kOpt = OPT_V6;

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v6(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ LatentArgs a, int nsplits,
             float sl2, TileOut to)
{
    seesaw_cta<false, kOpt>(&tmap, a, nsplits, sl2, to, Plan{});
}

constexpr fmh::Version kVersion = {"flash_mla_v6", flash_mla_v6, SMEM_BYTES};

}  // namespace

MLA_FMH_REGISTER(mla_kv_flash_mla_v6, 6, 0,
                 "hopper: v5 with the Q tile's loads all in flight at once and the final O stored through shared "
                 "memory in coalesced rows (shorter start and finish per CTA)")
