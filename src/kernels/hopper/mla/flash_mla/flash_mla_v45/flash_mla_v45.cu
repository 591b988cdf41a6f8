// flash_mla_v45 (hopper, sm_90a only): flash_mla_v41 whose one-split kernel runs the pair in a
// staggered order (OPT_STAG): page B half a pair behind page A. The merge kernel is v41's.
//
// Why (twenty-fifth session): by the box watcher (twenty-third session) ~900 of the pair's ~1100
// cycles over its tensor work (5447 against 4352 at the peak rate, b=32,s=16) are the tensor pipe
// idle: ~540 while both consumers run their softmax at once (both S of a pair finish together at
// its end) and ~360 while consumer 0 waits for P_B. Here consumer 1 issues QK(B_k) behind PV(A_k),
// so the pipe runs QK(A_k) | PV(B_k-1) | PV(A_k) | QK(B_k) | QK(A_k+1) | PV(B_k): softmax A_k
// runs under PV(B_k-1) (1024 tensor cycles) and softmax B_k under QK(A_k+1) (1152), one at a
// time, and the reload windows are PV(A_k) for page B (1024) and QK(B_k) for page A (1152).
// With both GEMMs of the other page ready, the max chain A_k -> B_k -> A_k+1 is sequential and
// needs no speculative softmax B.
// Prediction (written before the run): the pair from ~5450 to ~4600-5000 cycles if the softmaxes
// (~800-1000 cycles alone) and the reloads (first box ~700-1200) fit their windows; so 8-15 %
// on the one-split rows (s >= 2, b=64/128 at s=1, h=16 less: memory-bound), nothing at b=32,s=1
// (the merge kernel). It may lose instead if page B's reload (now in a 1024-cycle window, not
// ~2000) lands late.
#include "flash_mla_seesaw.cuh"

namespace {
using namespace mla;
using namespace mla::seesaw;

constexpr long long kOpt = OPT_V6 | OPT_LAZY_MAX | OPT_Q_TMA | OPT_ONE_FINISH | OPT_NOMAX;  // v41's
constexpr long long kMergeOpt = (kOpt & ~OPT_SPEC_B) | OPT_CMERGE | OPT_CM_PUSH | OPT_CM_L2 | OPT_CM_SENTMAX;  // v41's

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v45(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
              const __grid_constant__ CUtensorMap omap, const __grid_constant__ LatentArgs a, int nsplits,
              float sl2, TileOut to)
{
    seesaw_cta<false, kOpt | OPT_TMA_STORE | OPT_STAG, NTHREADS, PDLM_WAIT>(&tmap, a, nsplits, sl2, to, Plan{}, &qmap,
                                                                             &omap);
}

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v45_merge(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
                    const __grid_constant__ LatentArgs a, int nsplits, float sl2, TileOut to)
{
    seesaw_cta<false, kMergeOpt, NTHREADS, PDLM_WAIT>(&tmap, a, nsplits, sl2, to, Plan{}, &qmap);
}

// As v41: mainqo (the last field) runs every Q-by-TMA plan with one split or more than two.
constexpr fmh::Version kVersion = {"flash_mla_v45", nullptr,     0,         fmh::flash_mla_hopper_combine_mlp<DA>,
                                   nullptr,         0,           nullptr,   MSMEM_BYTES,
                                   flash_mla_v45_merge, MSMEM_BYTES, CM_WS_CTA, nullptr,
                                   0,               nullptr,     NTHREADS,  true,
                                   flash_mla_v45};

}  // namespace

MLA_FMH_REGISTER(mla_kv_flash_mla_v45, 45, 1,
                 "hopper: v41 with the one-split kernel's page B half a pair behind page A (staggered pair)")
