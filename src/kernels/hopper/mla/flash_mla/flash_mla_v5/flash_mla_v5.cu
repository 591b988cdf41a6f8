// flash_mla_v5 (hopper, sm_90a only): flash_mla_v3's seesaw with the schedule options of
// src/kernels/common/flash_mla_seesaw.cuh switched on. Same CTA, shared-memory map, static split
// grid and host glue as v3; what changes is when the reloads are issued and how much CUDA-core
// work sits on each consumer's critical path:
//
//   OPT_EARLY_B       consumer 0 waits for its PV(B) and reloads page B's left half and P box
//                     before it issues the next S_A. In v3 it issued the first boxes of S_A
//                     first, which blocked the thread on page A's reload and so held B's reload
//                     back behind A's.
//   OPT_SKIP_RESCALE  no 128-FMUL O rescale when no row maximum of the warp moved.
//   OPT_FAST_SOFTMAX  ex2.approx.ftz, and a mask-free softmax for fully visible pages.
//   OPT_DESC          wgmma descriptors moved by one add instead of rebuilt per instruction.
//   OPT_EARLY_FILL    the first two pages are requested before the Q tile is loaded.
//   OPT_SPEC_B        consumer 1's softmax B runs before page A's max arrives, against the max
//                     before page A, and is redone (per warp) only when page A moved a maximum.
//
// v3 stays as it is (the options default to off there), so the two can be benchmarked side by
// side; scripts/probe/v3_trace.cu measures each option alone.
#include "flash_mla_seesaw.cuh"

namespace {
using namespace mla;
using namespace mla::seesaw;

constexpr int kOpt = OPT_V5;

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v5(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ LatentArgs a, int nsplits,
             float sl2, TileOut to)
{
    seesaw_cta<false, kOpt>(&tmap, a, nsplits, sl2, to, Plan{});
}

constexpr fmh::Version kVersion = {"flash_mla_v5", flash_mla_v5, SMEM_BYTES};

}  // namespace

MLA_FMH_REGISTER(mla_kv_flash_mla_v5, 5, 0,
                 "hopper: v3's seesaw with page B reloaded before the next S_A, O rescale skipped when no max moved, "
                 "ex2.approx and a mask-free softmax for full pages, wgmma descriptors built once")
