// flash_mla_v20 (hopper, sm_90a only; not_default): flash_mla_v19 with two changes to consumer 1's P,
// one a kernel.
//
// Nsight Compute on v19's one-split kernel at b=32,h=128,s=16,t=4096 (2026-12-01): a softmax is 288
// warp instructions a warp a page, ~60 of them integer and index work, mostly the 16 swizzled
// STS.32 addresses of the P store; the softmax regions stall on fixed-latency dependencies 37-43 %
// and issue 24-28 % of their samples, and each softmax is on the page chain (P_A -> consumer 1's
// PV(A,R) -> page A's reload -> the next S_A).
// - One-split kernel: OPT_LATE_PSTORE. Consumer 1 keeps its speculative P_B in registers through
//   the P_A barrier, issues PV(A,R) and only then stores P_B, so page A's reload is asked for
//   sooner. Probe, b=32,s=16, alternated (2026-12-01): 856.2 / 856.2 us a launch against v19's
//   867.5 / 869.2, the steady pair 5500 against 5600 cycles.
// - Merge kernel (b=32,s=1-like shapes): OPT_P_STSM, P stored by four stmatrix.x4 a warp instead
//   of 16 swizzled STS.32. Probe, b=32,s=1: 66.2 / 66.0 us against 66.9 / 67.1.
// Each alone: the stmatrix store at s=16 gave 864.6 / 863.5, the late store at s=1 66.8 / 67.1, and
// both together neither kernel's gain (867.1 / 867.0 at s=16, 66.7 / 66.5 at s=1).
// NOT THE DEFAULT: those probe figures are of kernels with the trace points compiled in. The
// uninstrumented kernels, through the library: the one-split kernel 0.8 % slower than v19 at s=16
// and 1.4 % at s=64 (CLI A/B, alternated), slower in 14 of 15 one-split bench rows (eleven
// bench-all passes), and the merge kernel 68.0 against 68.2 us at b=32,s=1 (within the noise).
// Kept by name for a later uninstrumented A/B (docs/kernels/flash_mla.md, fourteenth session).
#include "flash_mla_seesaw.cuh"

namespace {
using namespace mla;
using namespace mla::seesaw;

constexpr int kOpt = OPT_V6 | OPT_LAZY_MAX | OPT_Q_TMA | OPT_ONE_FINISH;

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v20(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
              const __grid_constant__ LatentArgs a, int nsplits, float sl2, TileOut to)
{
    seesaw_cta<false, kOpt | OPT_LATE_PSTORE>(&tmap, a, nsplits, sl2, to, Plan{}, &qmap);
}

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v20_merge(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
                    const __grid_constant__ LatentArgs a, int nsplits, float sl2, TileOut to)
{
    seesaw_cta<false, kOpt | OPT_P_STSM | OPT_CMERGE | OPT_CM_PUSH | OPT_CM_L2 | OPT_CM_SENTMAX>(
        &tmap, a, nsplits, sl2, to, Plan{}, &qmap);
}

constexpr fmh::Version kVersion = {"flash_mla_v20", nullptr,          0,           fmh::flash_mla_hopper_combine_mlp<DA>,
                                   nullptr,         0,                flash_mla_v20, MSMEM_BYTES,
                                   flash_mla_v20_merge, MSMEM_BYTES, CM_WS_CTA};

}  // namespace

MLA_FMH_REGISTER(mla_kv_flash_mla_v20, 20, 1,
                 "hopper: v19 with consumer 1's speculative P_B stored after PV(A,R) is issued (one-split kernel) and P "
                 "stored by stmatrix (merge kernel); no faster than v19 through the library")
