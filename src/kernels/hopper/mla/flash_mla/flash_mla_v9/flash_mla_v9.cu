// flash_mla_v9 (hopper, sm_90a only): flash_mla_v7 with a lazy running max (OPT_LAZY_MAX).
//
// Nsight Compute's per-instruction warp sampling of v7 at b=32,h=128,s=16,t=4096
// (docs/bench/h200-2026-11-30-v9/) put consumer 1, the one that ends each pair later, on the
// critical path: its speculative softmax B, then after page A's max arrives a second softmax B
// in 48 % of the (warp, pair) cases and O's rescale in 49 %, and only then PV(A) and P_B for
// consumer 0, which waits for P_B 18 % of its time.
//
// Here a row's running max moves only when a page's max passes it by more than 8 (log2 units):
// P then stays below 2^8, which bf16 and the fp32 sums hold exactly as well as values below 1,
// and O, the row sum and the LSE use the same max, so the softmax is unchanged. Once a row has
// seen its first page the max rarely moves again, so the second softmax B and the rescales of O
// mostly disappear. Everything else (schedule, staged store, combine) is v7's.
#include "flash_mla_seesaw.cuh"

namespace {
using namespace mla;
using namespace mla::seesaw;

constexpr int kOpt = OPT_V6 | OPT_LAZY_MAX;

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v9(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ LatentArgs a, int nsplits,
             float sl2, TileOut to)
{
    seesaw_cta<false, kOpt>(&tmap, a, nsplits, sl2, to, Plan{});
}

constexpr fmh::Version kVersion = {"flash_mla_v9", flash_mla_v9, SMEM_BYTES, fmh::flash_mla_hopper_combine_mlp<DA>};

}  // namespace

MLA_FMH_REGISTER(mla_kv_flash_mla_v9, 9, 0,
                 "hopper: v7 with a lazy running max (moves only when a page passes it by 2^8), which removes "
                 "most of consumer 1's second softmax and O's rescales")
