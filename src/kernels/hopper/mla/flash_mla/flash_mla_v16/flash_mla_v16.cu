// flash_mla_v16 (hopper, sm_90a only): flash_mla_v12 with a leaner split-merge loop (OPT_CM_LEAN).
//
// At b=32,h=128,s=1,t=4096 the plan gives every row block two splits and v12 runs them as 2-CTA
// clusters that merge through distributed shared memory. The timeline probe (2026-11-30) put
// ~15100 SM cycles between the end of a CTA's last pair and its end, ~9900 of them in the merge
// loop; copying the peer's rows into local shared memory first (v15, removed) left the loop as
// slow, and Nsight Compute's source view shows why: ~200 SASS instructions an iteration (a
// division by h for every 16-byte piece's output row, a mapa per load, four copies' predicated
// code for two), stalled on fixed-latency dependencies with 8 warps a SM. Here each row's output
// pointer is computed once, next to its weights, and the loop walks rows with a fixed column.
//
// Measured (H200, 2026-11-30): 87 + 2 skipped cases passed, memcheck and synccheck clean with
// splits=2. The prediction (loop ~9900 -> ~4000 cycles) failed: the loop stayed at ~9600 cycles and
// b=32,s=1 at 70.8-71.1 us (v12 70.9-71.5 in the same bench-all passes). The loop is bound by the
// peer's 64 KB it reads over distributed shared memory, not by its instructions (flash_mla_v17).
#include "flash_mla_seesaw.cuh"

namespace {
using namespace mla;
using namespace mla::seesaw;

constexpr int kOpt = OPT_V6 | OPT_LAZY_MAX | OPT_Q_TMA;

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v16(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
              const __grid_constant__ LatentArgs a, int nsplits, float sl2, TileOut to)
{
    seesaw_cta<false, kOpt>(&tmap, a, nsplits, sl2, to, Plan{}, &qmap);
}

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v16_merge(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
                    const __grid_constant__ LatentArgs a, int nsplits, float sl2, TileOut to)
{
    seesaw_cta<false, kOpt | OPT_CMERGE | OPT_CM_LEAN>(&tmap, a, nsplits, sl2, to, Plan{}, &qmap);
}

constexpr fmh::Version kVersion = {"flash_mla_v16", nullptr,          0,           fmh::flash_mla_hopper_combine_mlp<DA>,
                                   nullptr,         0,                flash_mla_v16, MSMEM_BYTES,
                                   flash_mla_v16_merge, MSMEM_BYTES};

}  // namespace

MLA_FMH_REGISTER(mla_kv_flash_mla_v16, 16, 1,
                 "hopper: v12 with a leaner split-merge loop (row pointers computed once a row)")
