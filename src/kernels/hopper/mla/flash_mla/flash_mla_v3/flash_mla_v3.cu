// flash_mla_v3 (hopper, sm_90a only): absorbed MLA attention over the paged latent cache with a
// "seesaw" between the two math warpgroups.
//
// Computes out[b, s, h, 512] = softmax(scale * q . c) @ c[:512] and lse[b, h, s] (MLA_SPEC.md
// design 2). Same CTA shape, producer and host glue as flash_mla_v1 (64 rows x one split,
// warpgroup 0 issues TMA loads into a 2-stage ring); what changes is how the consumers divide
// the work. In v1 both consumers took half of every page's S and then half of every page's O,
// so each phase waited for the other consumer and the tensor cores idled during every softmax.
//
// Here pages go in pairs (A, B). Consumer 0 owns page A, consumer 1 owns page B: each computes
// the whole 64 x 64 S of its page (wgmma m64n64k16, box by box as the TMA boxes land) and its
// softmax alone (no shared-memory reduction of row maxima). O stays split by columns (consumer
// w holds O[:, 256w .. 256w + 256)), so each consumer multiplies both pages' P by its half of V:
//
//   consumer 0                               consumer 1
//   S_A = Q K_A^T                            S_B = Q K_B^T (issued, runs under softmax A)
//   m_A = max(m, rowmax S_A), P_A            .
//   publish m_A, P_A (RoPE box of A) ---->   O_R = O_R * 2^(m - m_A) + P_A V_A[R]  (smem P)
//   O_L = O_L * 2^(m - m_A) + P_A V_A[L]     m_B = max(m_A, rowmax S_B), P_B  (under both PVs)
//     (P_A from registers)            <----  publish m_B, P_B (RoPE box of B)
//   O_L = O_L * 2^(m_A - m_B) + P_B V_B[L]   O_R = O_R * 2^(m_A - m_B) + P_B V_B[R]  (registers)
//   (next pair: each waits for its PV(B), releases B's stage, issues its QK^T)
//
// so one consumer's softmax always has the other's GEMMs queued under it. Only the row maxima
// cross (64 floats per page), and P goes into the page's RoPE box, which is dead once its owner's
// QK^T is done: shared memory is Q + 2 pages, 216 KB. Row sums stay per consumer (each sums the
// P it computed, both rescaled to the common running max) and are added once at the end.
//
// The device code (shared with flash_mla_v4, which drives the same CTA from a device-side split
// plan) is in src/kernels/common/flash_mla_seesaw.cuh; this file is the static split grid (like
// v1: CTA = row block x split x request, splits from the SM count) and its registration.
//
// Tiling knobs: as v1 (block_m = 64, block_n = 64, warps = 12, stages = 2 fixed; splits free).
#include "flash_mla_seesaw.cuh"

namespace {
using namespace mla;
using namespace mla::seesaw;

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v3(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ LatentArgs a, int nsplits,
             float sl2, TileOut to)
{
    seesaw_cta<false>(&tmap, a, nsplits, sl2, to, Plan{});
}

constexpr fmh::Version kVersion = {"flash_mla_v3", flash_mla_v3, SMEM_BYTES};

}  // namespace

MLA_FMH_REGISTER(mla_kv_flash_mla_v3, 3, 0,
                 "hopper: seesaw - alternate page owners for QK^T/softmax, O split by columns, P from registers / "
                 "RoPE box, per-box TMA barriers reloaded by the last reader")
