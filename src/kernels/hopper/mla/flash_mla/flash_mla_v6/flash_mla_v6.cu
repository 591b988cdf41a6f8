// flash_mla_v6 (hopper, sm_90a only): flash_mla_v5 with P_A moved out of page A's RoPE box.
//
// In v5 (and v3) both consumers publish P into the RoPE box (dims 512..575) of the page they
// own, because that box is dead once the owner's QK^T is done. For page A that made the box
// live until consumer 1's PV(A) had read P_A, so the reload of page A for the next pair waited
// for PV(A, right half) on five boxes: K/V right (4-7) and RoPE (8). The v5 timeline probe puts
// that reload on the critical chain of the pair: PV(A, R) done -> reload (~1500-2000 cycles with
// every SM loading) -> the tail of the next S_A -> softmax A -> ...
//
// v6 (OPT_P_SPARE in src/kernels/common/flash_mla_seesaw.cuh) writes P_A into a ninth-and-a-bit
// box of its own (the 8 KB left of the 227 KB after Q and two pages), so:
//   - consumer 0 reloads page A's RoPE box with page A' right after S_A is done (the top of the
//     pair), about 3000 cycles before the rest of A' is requested;
//   - the next S_A takes that box first (RoPE-first order), then 0-3, then 4-7;
//   - consumer 1's late reload after PV(A, R) is four boxes (32 KB) instead of five (40 KB), and
//     the tail of S_A' behind it four boxes of QK^T instead of five.
// Page B is unchanged (P_B stays in B's RoPE box). Everything else is v5: same options, static
// split grid, host glue.
#include "flash_mla_seesaw.cuh"

namespace {
using namespace mla;
using namespace mla::seesaw;

constexpr int kOpt =
    OPT_EARLY_B | OPT_SKIP_RESCALE | OPT_FAST_SOFTMAX | OPT_DESC | OPT_EARLY_FILL | OPT_SPEC_B | OPT_P_SPARE;

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v6(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ LatentArgs a, int nsplits,
             float sl2, TileOut to)
{
    seesaw_cta<false, kOpt>(&tmap, a, nsplits, sl2, to, Plan{});
}

constexpr fmh::Version kVersion = {"flash_mla_v6", flash_mla_v6, SMEM_BYTES_PX};

}  // namespace

MLA_FMH_REGISTER(mla_kv_flash_mla_v6, 6, 0,
                 "hopper: v5 with P_A in a box of its own, so page A's RoPE box is reloaded as soon as S_A is done "
                 "and the late reload of page A is four boxes, not five")
