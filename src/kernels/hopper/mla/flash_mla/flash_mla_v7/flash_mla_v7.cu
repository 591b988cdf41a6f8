// flash_mla_v7 (hopper, sm_90a only): flash_mla_v6 with a combine stage that keeps every load of
// a row in flight.
//
// At b=32,h=128,s=1 the pipeline is the main kernel (two splits per row block, 81.1 us for v6)
// and the combine (8.3 us for v5 and v6, --prof_type=event). The combine merges 2 x 4096 fp32
// rows of 2 KB: 21 MB, which at 8.3 us is 2.5 TB/s from L2, where the partials were just written.
// Its loop (combine_row in attn_core.cuh, shared with the portable versions) issues one 8-byte
// load per split and column pair and recomputes each split's weight per element. Little is in
// flight per lane, so the stage waits on L2 latency rather than bandwidth.
//
// flash_mla_hopper_combine_mlp (src/kernels/common/flash_mla_hopper.cuh): lane i computes split i's
// weight once and shuffles it to the others; each lane loads its four 16-byte pieces of every
// split (up to 4; more fall back to combine_row) before it adds any of them up, and stores 8 bytes of bf16 per piece. The main
// kernel is v6's, unchanged.
#include "flash_mla_seesaw.cuh"

namespace {
using namespace mla;
using namespace mla::seesaw;

constexpr int kOpt = OPT_V6;

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v7(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ LatentArgs a, int nsplits,
             float sl2, TileOut to)
{
    seesaw_cta<false, kOpt>(&tmap, a, nsplits, sl2, to, Plan{});
}

constexpr fmh::Version kVersion = {"flash_mla_v7", flash_mla_v7, SMEM_BYTES, fmh::flash_mla_hopper_combine_mlp<DA>};

}  // namespace

MLA_FMH_REGISTER(mla_kv_flash_mla_v7, 7, 0,
                 "hopper: v6 with a combine stage that loads every split of a row at once (16-byte pieces, weights "
                 "computed once per split)")
