// flash_mla_v7 (hopper, sm_90a only): flash_mla_v6 with the pages prefetched into L2.
//
// With only two 72 KB page stages next to the Q tile (216 of the 227 KB), a page's TMA reload
// can start only once the previous page in its stage has been read, and the v5/v6 timeline puts
// that reload on the pair's critical chain. Where a page is read by many row blocks (s = 16: 32
// row blocks per request) it mostly comes from L2; at s = 1 only the two row blocks of its request
// read it, so it comes from DRAM, and the probe's s=1 pair period is 6550-6800 SM cycles against
// 5780 at s=16 (same code). The TMA probe: a 72 KB page takes 1450-2000 cycles from L2 and
// 4000-4900 from DRAM with every SM loading.
//
// OPT_L2_PREFETCH (src/kernels/common/flash_mla_seesaw.cuh): consumer 1's threads prefetch each page
// into L2 (prefetch.L2, line by line, through the load/store path) about a pair before its TMA
// reload; the rest is v6. (One bulk prefetch per page through the TMA unit was tried first and
// made every row slower: it queues ahead of the reloads.)
#include "flash_mla_seesaw.cuh"

namespace {
using namespace mla;
using namespace mla::seesaw;

constexpr int kOpt = OPT_EARLY_B | OPT_SKIP_RESCALE | OPT_FAST_SOFTMAX | OPT_DESC | OPT_EARLY_FILL | OPT_SPEC_B |
                     OPT_Q_BATCH | OPT_STAGED_STORE | OPT_L2_PREFETCH;

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v7(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ LatentArgs a, int nsplits,
             float sl2, TileOut to)
{
    seesaw_cta<false, kOpt>(&tmap, a, nsplits, sl2, to, Plan{});
}

constexpr fmh::Version kVersion = {"flash_mla_v7", flash_mla_v7, SMEM_BYTES};

}  // namespace

MLA_FMH_REGISTER(mla_kv_flash_mla_v7, 7, 0,
                 "hopper: v6 with every page prefetched into L2 about a pair before its TMA reload")
