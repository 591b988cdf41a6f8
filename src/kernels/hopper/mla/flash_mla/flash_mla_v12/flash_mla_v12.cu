// flash_mla_v12 (hopper, sm_90a only): flash_mla_v11 with the splits' merge in the main kernel
// (OPT_CMERGE) when a row block has two splits.
//
// At b=32,h=128,s=1,t=4096 the planner gives each of the 64 row blocks two splits (128 CTAs, one
// wave). v9 spent 72.9 us in the main kernel and 6.0 us in the combine launched after it (CLI
// stage times, 2026-11-30), and each main CTA wrote its 64 x 512 result as 128 KB of fp32
// partials that the combine read back. Here the two splits of a row block run as a cluster of
// two CTAs: each leaves its normalised O and row lse in its own shared memory, and each merges
// half of the rows from both copies over distributed shared memory and writes them in bf16
// (32 KB per CTA). No workspace, no second launch.
//
// Prediction: the 6.0 us combine goes, the finish of a CTA grows by about one 64 KB DSMEM read
// (well under 1 us), so b=32,s=1 78.4 -> ~73 us. Rows with one split (every other bench row but
// h=16's) run v11's kernel unchanged. More than two splits keep the workspace and the combine:
// clusters of four or eight CTAs at one CTA per SM would need every GPC's SM count to divide
// into them to stay one wave (see CMERGE_MAXS).
#include "flash_mla_seesaw.cuh"

namespace {
using namespace mla;
using namespace mla::seesaw;

constexpr int kOpt = OPT_V6 | OPT_LAZY_MAX | OPT_Q_TMA;

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v12(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
              const __grid_constant__ LatentArgs a, int nsplits, float sl2, TileOut to)
{
    seesaw_cta<false, kOpt>(&tmap, a, nsplits, sl2, to, Plan{}, &qmap);
}

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v12_merge(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
                    const __grid_constant__ LatentArgs a, int nsplits, float sl2, TileOut to)
{
    seesaw_cta<false, kOpt | OPT_CMERGE>(&tmap, a, nsplits, sl2, to, Plan{}, &qmap);
}

constexpr fmh::Version kVersion = {"flash_mla_v12", nullptr,          0,           fmh::flash_mla_hopper_combine_mlp<DA>,
                                   nullptr,         0,                flash_mla_v12, MSMEM_BYTES,
                                   flash_mla_v12_merge, MSMEM_BYTES};

}  // namespace

MLA_FMH_REGISTER(mla_kv_flash_mla_v12, 12, 1,
                 "hopper: v11 with two splits of a row block merged in a cluster through distributed shared "
                 "memory (no combine launch)")
