// flash_mla_v4 (hopper, sm_90a only): flash_mla_v3's seesaw CTA driven by a device-side split plan.
//
// v3 splits every request's KV range evenly (split count from the SM count): a batch of very
// different lengths leaves the long requests' CTAs running alone. Here three kernels run on the
// caller's stream, chained by programmatic dependent launch:
// - planner (1 CTA): from the device-side seqlens, the positional plan of split_sched.h cuts
//   the flattened (request, block) work into num_parts = SMs / row blocks parts of equal cost
//   (blocks + a fixed overhead per request segment), a part's range spanning requests;
// - main: CTA (row block, part) walks its part's segments with the seesaw of v3, writing a
//   request's output directly when the request lies in one part, else a partial row;
// - combine: merges the partial rows of the requests cut between parts.
// Everything is on the device and in the stream (no host round trip): graph-capturable.
// The planner is the positional plan of split_sched.h (one thread per request, then per part;
// a first cut walked the greedy plan on one thread and cost tens of microseconds at b = 128).
//
// Tiling knobs: block_m = 64, block_n = 64, warps = 12, stages = 2 fixed; splits = the number of
// parts per row block (0: SMs / row blocks).
#include "flash_mla_sched_host.cuh"

namespace {
using namespace mla;
using namespace mla::seesaw;

__global__ void __launch_bounds__(SCHED_THREADS)
flash_mla_v4_sched(const int *seqlens, int t, int b, int num_parts, mla_sched_part *parts, int *prefix, int *pprefix,
                   long long *costs)
{
    // Launched without PDL: everything the previous call wrote is complete. The main kernel
    // may launch now; it reads the plan after griddepcontrol.wait.
    pdl_launch_dependents();
    seesaw_plan(seqlens, t, b, num_parts, parts, prefix, pprefix, costs);
}

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v4(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ LatentArgs a, float sl2, TileOut to,
             Plan plan)
{
    seesaw_cta<true>(&tmap, a, 1, sl2, to, plan);
}

__global__ void __launch_bounds__(256)
flash_mla_v4_combine(const __grid_constant__ LatentArgs a, long long rows, Plan plan, const float *ws_o,
                     const float *ws_lse)
{
    pdl_wait();
    seesaw_combine(a, rows, plan, ws_o, ws_lse);
}

// ---------------------------------------------------------------------------------------------
// Host glue: three stages (planner, main, combine) over one workspace (flash_mla_sched_host.cuh).

constexpr fmh::Version kVersion = {"flash_mla_v4", nullptr, SMEM_BYTES};

int v_validate(const mla_tiling *t, const mla_problem *pb, const mla_device_info *d, char *w, size_t wl)
{
    if (!validate(kVersion, t, pb, d, w, wl)) return 0;
    if (t->splits > 1024) return why(w, wl, "splits (parts of the KV work per row block) %d > 1024", t->splits);
    return 1;
}

int v_stage(const mla_tiling *t, const mla_problem *pb, const mla_device_info *d, int stage, mla_stage_config *cfg)
{
    if (!tile_ok(t)) return 0;
    const SchedLayout L = sched_layout(t, pb, d);
    if (stage == 0) {
        set_cfg(cfg, (const void *)flash_mla_v4_sched, 1, 1, 1, SCHED_THREADS, 0);
        return 1;
    }
    if (stage == 1) {
        set_cfg(cfg, (const void *)flash_mla_v4, L.row_blocks, L.num_parts, 1, NTHREADS, SMEM_BYTES);
        return 1;
    }
    if (stage == 2 && L.num_parts > 1) {
        const long long rows = (long long)pb->b * pb->s * pb->h;
        set_cfg(cfg, (const void *)flash_mla_v4_combine, (unsigned)((rows + 7) / 8), 1, 1, 256, 0);
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
    if (!tile_ok(t)) return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "flash_mla_v4: tile not compiled");
    return set_smem((const void *)flash_mla_v4, SMEM_BYTES, "flash_mla_v4: cudaFuncSetAttribute");
}

mla_status v_launch(const mla_tiling *t, const mla_launch_args *args)
{
    const mla_problem *pb = args->pb;
    const mla_flash_mla_tensors *x = (const mla_flash_mla_tensors *)args->tensors;
    if (!tile_ok(t)) return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "flash_mla_v4: tile not compiled");
    const SchedLayout L = sched_layout(t, pb, args->dev);
    if (args->workspace_bytes < L.total)
        return mla_fail(MLA_STATUS_WORKSPACE_TOO_SMALL, "flash_mla_v4: workspace %zu < %zu bytes", args->workspace_bytes,
                        L.total);
    CUtensorMap tmap;
    LatentArgs a;
    mla_status e = latent_args(kVersion, pb, x, &tmap, &a);
    if (e != MLA_STATUS_OK) return e;
    const SchedBufs sb = sched_bufs(L, args->workspace);
    const Plan &plan = sb.plan;
    const TileOut &to = sb.to;
    cudaStream_t st = (cudaStream_t)args->stream;
    const float sl2 = pb->scale * 1.4426950408889634f;
    if (args->stage_mask & 1u) {
        flash_mla_v4_sched<<<1, SCHED_THREADS, 0, st>>>(x->seqlens, pb->t, pb->b, L.num_parts, sb.parts, sb.prefix,
                                                        sb.pprefix, sb.costs);
        e = check_launch("flash_mla_v4_sched");
        if (e != MLA_STATUS_OK) return e;
    }
    if (args->stage_mask & 2u) {
        cudaError_t ce = launch_pdl(flash_mla_v4, dim3(L.row_blocks, L.num_parts, 1), NTHREADS, SMEM_BYTES, st, tmap,
                                    a, sl2, to, plan);
        if (ce != cudaSuccess) return cuda_fail(ce, "flash_mla_v4 launch");
    }
    if (L.num_parts > 1 && (args->stage_mask & 4u)) {
        const long long rows = (long long)pb->b * pb->s * pb->h;
        cudaError_t ce = launch_pdl(flash_mla_v4_combine, dim3((unsigned)((rows + 7) / 8)), 256, 0, st, a, rows, plan,
                                    (const float *)to.ws_o, (const float *)to.ws_lse);
        if (ce != cudaSuccess) return cuda_fail(ce, "flash_mla_v4 combine launch");
    }
    return MLA_STATUS_OK;
}

const mla_tiling kCandidates[] = {
    {64, 64, 12, 2, 0}, {64, 64, 12, 2, 1}, {64, 64, 12, 2, 2}, {64, 64, 12, 2, 4}, {64, 64, 12, 2, 8},
};

}  // namespace

extern "C" const mla_kernel_version mla_kv_flash_mla_v4 = {
    "flash_mla_v4", MLA_DESIGN_FLASH_MLA, 4, MLA_TIER_HOPPER, MLA_TARGET_SM90A,
    "hopper: v3's seesaw driven by a device-side split plan (planner -> main -> combine, PDL-chained)",
    3, {"sched", "main", "combine", nullptr}, (int)(sizeof kCandidates / sizeof kCandidates[0]), kCandidates,
    v_validate, v_stage, v_ws, v_prepare, v_launch, 1,
};
