// flash_mla_v8 (hopper, sm_90a only): persistent seesaw CTAs that walk their segments without
// restarting the pipeline (src/kernels/common/flash_mla_persist.cuh).
//
// v6's timeline probe put ~10 % of a 32-pair CTA outside its pairs (Q load and first pages at
// the start, row sums and store at the end), plus 0.5-0.9 us between CTAs and 7.76 waves at
// b=32,s=16. Here the grid is v4's plan (row blocks x parts, parts = SMs / row blocks, so one
// CTA per SM), and a CTA prepares its next segment inside the current one's last pair: the next
// Q by TMA once Q is dead, the next pages by the reload rule, the next S before the finish.
// Three kernels, PDL-chained as in v4: planner, main, combine (the combine with every split's
// loads in flight, as v7's).
//
// Measured 2026-11-30 (docs/kernels/flash_mla.md, v8): faster than v7 at s = 32..128, slower at
// s <= 16 (the planner cuts short requests into parts that need a combine; the finish's store is
// not staged); registered not_default.
//
// Q comes by TMA (a 4-D tensor map over [b][s][h][576] with the caller's strides), which needs
// h to divide 64 or be a multiple of 64 (a row block is then a box of whole tokens or of 64
// heads); other h are refused by validate.
#include "flash_mla_persist.cuh"
#include "flash_mla_sched_host.cuh"

namespace {
using namespace mla;
using namespace mla::seesaw;

constexpr int kOpt = OPT_V5;

__global__ void __launch_bounds__(SCHED_THREADS)
flash_mla_v8_sched(const int *seqlens, int t, int b, int num_parts, mla_sched_part *parts, int *prefix, int *pprefix,
                   long long *costs)
{
    pdl_launch_dependents();  // launched without PDL: everything before it is complete
    seesaw_plan(seqlens, t, b, num_parts, parts, prefix, pprefix, costs);
}

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v8(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
             const __grid_constant__ LatentArgs a, float sl2, TileOut to, Plan plan)
{
    persist_cta<kOpt>(&tmap, &qmap, a, sl2, to, plan);
}

__global__ void __launch_bounds__(256)
flash_mla_v8_combine(const __grid_constant__ LatentArgs a, long long rows, Plan plan, const float *ws_o,
                     const float *ws_lse)
{
    pdl_wait();
    seesaw_combine<true>(a, rows, plan, ws_o, ws_lse);
}

constexpr fmh::Version kVersion = {"flash_mla_v8", nullptr, PSMEM_BYTES};

int v_validate(const mla_tiling *t, const mla_problem *pb, const mla_device_info *d, char *w, size_t wl)
{
    if (!validate(kVersion, t, pb, d, w, wl)) return 0;
    if (!fmh::q_tma_ok(pb->h))
        return why(w, wl, "flash_mla_v8 loads Q by TMA in whole 64-row boxes: h must divide 64 or be a multiple of 64 "
                          "(got %d)", pb->h);
    return 1;
}

int v_stage(const mla_tiling *t, const mla_problem *pb, const mla_device_info *d, int stage, mla_stage_config *cfg)
{
    if (!tile_ok(t)) return 0;
    const SchedLayout L = sched_layout(t, pb, d);
    if (stage == 0) {
        set_cfg(cfg, (const void *)flash_mla_v8_sched, 1, 1, 1, SCHED_THREADS, 0);
        return 1;
    }
    if (stage == 1) {
        set_cfg(cfg, (const void *)flash_mla_v8, L.row_blocks, L.num_parts, 1, NTHREADS, PSMEM_BYTES);
        return 1;
    }
    if (stage == 2 && L.num_parts > 1) {
        const long long rows = (long long)pb->b * pb->s * pb->h;
        set_cfg(cfg, (const void *)flash_mla_v8_combine, (unsigned)((rows + 7) / 8), 1, 1, 256, 0);
        return 1;
    }
    return 0;
}

size_t v_ws(const mla_tiling *t, const mla_problem *pb, const mla_device_info *d)
{
    return tile_ok(t) ? sched_layout(t, pb, d).total : 0;
}

mla_status v_prepare(const mla_tiling *t, const mla_problem *, const mla_device_info *)
{
    if (!tile_ok(t)) return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "flash_mla_v8: tile not compiled");
    return set_smem((const void *)flash_mla_v8, PSMEM_BYTES, "flash_mla_v8: cudaFuncSetAttribute");
}

mla_status v_launch(const mla_tiling *t, const mla_launch_args *args)
{
    const mla_problem *pb = args->pb;
    const mla_flash_mla_tensors *x = (const mla_flash_mla_tensors *)args->tensors;
    if (!tile_ok(t)) return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "flash_mla_v8: tile not compiled");
    const SchedLayout L = sched_layout(t, pb, args->dev);
    if (args->workspace_bytes < L.total)
        return mla_fail(MLA_STATUS_WORKSPACE_TOO_SMALL, "flash_mla_v8: workspace %zu < %zu bytes", args->workspace_bytes,
                        L.total);
    CUtensorMap tmap, qmap;
    LatentArgs a;
    mla_status e = latent_args(kVersion, pb, x, &tmap, &a);
    if (e != MLA_STATUS_OK) return e;
    e = fmh::q_tmap(kVersion, pb, x, &qmap);
    if (e != MLA_STATUS_OK) return e;
    const SchedBufs sb = sched_bufs(L, args->workspace);
    cudaStream_t st = (cudaStream_t)args->stream;
    const float sl2 = pb->scale * 1.4426950408889634f;
    if (args->stage_mask & 1u) {
        flash_mla_v8_sched<<<1, SCHED_THREADS, 0, st>>>(x->seqlens, pb->t, pb->b, L.num_parts, sb.parts, sb.prefix,
                                                        sb.pprefix, sb.costs);
        e = check_launch("flash_mla_v8_sched");
        if (e != MLA_STATUS_OK) return e;
    }
    if (args->stage_mask & 2u) {
        cudaError_t ce = launch_pdl(flash_mla_v8, dim3(L.row_blocks, L.num_parts, 1), NTHREADS, PSMEM_BYTES, st, tmap,
                                    qmap, a, sl2, sb.to, sb.plan);
        if (ce != cudaSuccess) return cuda_fail(ce, "flash_mla_v8 launch");
    }
    if (L.num_parts > 1 && (args->stage_mask & 4u)) {
        const long long rows = (long long)pb->b * pb->s * pb->h;
        cudaError_t ce = launch_pdl(flash_mla_v8_combine, dim3((unsigned)((rows + 7) / 8)), 256, 0, st, a, rows,
                                    sb.plan, (const float *)sb.to.ws_o, (const float *)sb.to.ws_lse);
        if (ce != cudaSuccess) return cuda_fail(ce, "flash_mla_v8 combine launch");
    }
    return MLA_STATUS_OK;
}

// splits = parts per row block: 0 is one CTA per SM; the others let the autotuner try fewer
// (shorter tail) or more parts.
const mla_tiling kCandidates[] = {
    {64, 64, 12, 2, 0}, {64, 64, 12, 2, 1}, {64, 64, 12, 2, 2}, {64, 64, 12, 2, 4}, {64, 64, 12, 2, 8},
};

}  // namespace

extern "C" const mla_kernel_version mla_kv_flash_mla_v8 = {
    "flash_mla_v8", MLA_DESIGN_FLASH_MLA, 8, MLA_TIER_HOPPER, MLA_TARGET_SM90A,
    "hopper: persistent seesaw CTAs (one per SM, v4's plan) that prepare the next segment's Q, pages and first S "
    "inside the current one's last pair",
    3, {"sched", "main", "combine", nullptr}, (int)(sizeof kCandidates / sizeof kCandidates[0]), kCandidates,
    v_validate, v_stage, v_ws, v_prepare, v_launch, 1,
};
