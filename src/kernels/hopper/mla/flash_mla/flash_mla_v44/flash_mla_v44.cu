// flash_mla_v44 (hopper, sm_90a only; an experiment): flash_mla_v42 launched without programmatic
// dependent launch, its walk kernel without griddepcontrol.wait (PDLM_OFF), to tell whether PDL is
// what separates v42's timeline-probe gain (direct launches, no PDL: -1.3 % sustained at
// b=32,s=16, -1.7 % at s=4) from its bench-all results (PDL launches in graphs and after the L2
// flush: 0.6-3.7 % slower than v41 on the one-split rows of call 2's graph passes). Its other
// kernels keep PDLM_WAIT, a no-op without the launch attribute.
// Measured (H200, 2026-12-01, twenty-fourth session; docs/kernels/flash_mla.md): CLI A/B (graph
// replays, a burst) b=128,t=8192,s=2 952.7 against v41's 961.2 us (-0.9 %, every one of 6 rounds),
// b=32,s=16 943.8 against 946.8 (v42 955.2); bench-all, 4 passes (flush): s=4 -1.9 %, s=8 -1.4 %,
// s=64 -0.8 %, b=128,s=2 -1.4 %, b=128,t=8192,s=2 -1.2 %, but s=16 +1.2 % and s=128 +1.6 %; the rows
// without a walk level. v44 is no faster than v41 on every row. Its walk loops are also scheduled
// differently from v42's (opcode sequences 0.90 / 0.98 alike), so this does not isolate PDL.
#include "flash_mla_seesaw.cuh"

namespace {
using namespace mla;
using namespace mla::seesaw;

constexpr long long kOpt = OPT_V6 | OPT_LAZY_MAX | OPT_Q_TMA | OPT_ONE_FINISH | OPT_NOMAX;  // v35's, v40's, v41's
constexpr long long kMergeOpt = (kOpt & ~OPT_SPEC_B) | OPT_CMERGE | OPT_CM_PUSH | OPT_CM_L2 | OPT_CM_SENTMAX;  // v40's

// More than two splits (fp32 partials by the copy loop): v41's static kernel.
__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v44(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
              const __grid_constant__ CUtensorMap omap, const __grid_constant__ LatentArgs a, int nsplits,
              float sl2, TileOut to)
{
    seesaw_cta<false, kOpt | OPT_TMA_STORE, NTHREADS, PDLM_WAIT>(&tmap, a, nsplits, sl2, to, Plan{}, &qmap, &omap);
}

// One split: the walk (the int argument is b).
__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v44_walk(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
                   const __grid_constant__ CUtensorMap omap, const __grid_constant__ LatentArgs a, int b, float sl2,
                   TileOut to)
{
    seesaw_cta<false, kOpt | OPT_TMA_STORE | OPT_WALK, NTHREADS, PDLM_OFF>(&tmap, a, b, sl2, to, Plan{}, &qmap, &omap);
}

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v44_merge(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
                    const __grid_constant__ LatentArgs a, int nsplits, float sl2, TileOut to)
{
    seesaw_cta<false, kMergeOpt, NTHREADS, PDLM_WAIT>(&tmap, a, nsplits, sl2, to, Plan{}, &qmap);
}

constexpr fmh::Version kVersion = {"flash_mla_v44", nullptr,     0,         fmh::flash_mla_hopper_combine_mlp<DA>,
                                   nullptr,         0,           nullptr,   MSMEM_BYTES,
                                   flash_mla_v44_merge, MSMEM_BYTES, CM_WS_CTA, nullptr,
                                   0,               nullptr,     NTHREADS,  false,
                                   flash_mla_v44,   flash_mla_v44_walk};

}  // namespace

MLA_FMH_REGISTER(mla_kv_flash_mla_v44, 44, 1,
                 "hopper (experiment): v42 launched without PDL")
