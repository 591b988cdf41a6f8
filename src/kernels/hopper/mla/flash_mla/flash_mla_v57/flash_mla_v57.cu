// flash_mla_v57 (hopper, sm_90a only): flash_mla_v56, with FlashMLA's split for the one-split
// plans where a request has 2-4 row blocks (64 < s * h <= 256) and more pages than the SMs hold
// in whole row blocks: CTA (row block x, part y) of SMs / row blocks parts walks a contiguous
// share of all requests' pages (flash_mla_v4's device-side plan, split_sched.h), with the
// FlashMLA-schedule pair (fmpair_cta FM_PARTS); requests cut between parts leave fp32 partials,
// merged by seesaw_combine launched with PDL. Launches: the planner (one CTA), the main kernel
// (PDL), the combine (PDL); stage 0 is the planner and the main kernel, stage 1 the combine.
// Every other plan runs v56's kernels as v56 runs them.
//
// Why (twenty-ninth session): at b=32,s=2, b=64,s=1, both b=128,s=1 rows and b=128,t=8192,s=2
// FlashMLA's split kernel fills all 132 SMs (33 or 66 parts of each row-block index) where v56's
// grids fill 128 (one row block a CTA, or 2 and 4 a CTA in the walk): ~3 % of the kernel
// (twenty-eighth session's timeline: ~3 % of FlashMLA's 6 % lead at s=2 is its 132 CTAs). The
// price: fp32 partials for the requests cut between parts (two a part at most) and a combine.
// Prediction (written before the run): 1-2 % faster than v56 on those five rows (3 % of SMs,
// less the partials' stores and the combine's ~1 us); v56's times elsewhere.
#include "flash_mla_fmpair.cuh"
#include "flash_mla_sched_host.cuh"

namespace {
using namespace mla;
using namespace mla::seesaw;

constexpr long long kOpt = OPT_V6 | OPT_LAZY_MAX | OPT_Q_TMA | OPT_ONE_FINISH | OPT_NOMAX;  // v41's

// flash_mla_v57, _walk, _merge (v47's kernels) and _pair, _pair_walk (v55's pair).
MLA_FMPAIR_V56_KERNELS(flash_mla_v57, kOpt)
constexpr long long kPairOpt = kOpt | OPT_TMA_STORE | OPT_P_STSM;  // the pair's (v55's)

// FlashMLA's split: the planner (launched without PDL: the previous call is complete; the main
// kernel may launch at once and reads the plan after griddepcontrol.wait), the parts, the merge.
__global__ void __launch_bounds__(SCHED_THREADS)
flash_mla_v57_sched(const int *seqlens, int t, int b, int num_parts, mla_sched_part *parts, int *prefix, int *pprefix,
                    long long *costs)
{
    pdl_launch_dependents();
    seesaw_plan(seqlens, t, b, num_parts, parts, prefix, pprefix, costs);
}

__global__ void __launch_bounds__(NTHREADS, 1)
flash_mla_v57_parts(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
                    const __grid_constant__ CUtensorMap omap, const __grid_constant__ LatentArgs a, float sl2,
                    TileOut to, Plan plan)
{
    fmpair::fmpair_cta<kPairOpt, fmpair::FM_PARTS, NTHREADS>(&tmap, a, 1, sl2, to, &qmap, &omap, plan);
}

__global__ void __launch_bounds__(256)
flash_mla_v57_combine(const __grid_constant__ LatentArgs a, long long rows, Plan plan, const float *ws_o,
                      const float *ws_lse)
{
    pdl_wait();
    seesaw_combine<true>(a, rows, plan, ws_o, ws_lse);
}

MLA_FMPAIR_V56_VERSION(flash_mla_v57);

// FlashMLA's split where it fills more SMs: the auto tiling (splits = 0) whose plan is one split,
// 2-4 row blocks a request (64 < s * h <= 256, Q by TMA), and at least 1 % less work for the
// busiest SM in SMs / row blocks parts of each row-block index than in the one-split grid's rounds
// of whole row blocks (b=32,s=2: 128 row blocks on 132 parts, ~0.97 row block each, against 1).
bool parts(const mla_tiling *t, const mla_problem *pb, const mla_device_info *dev)
{
    if (!fmh::tile_ok(kVersion, t) || t->splits != 0 || !fmh::q_tma_ok(pb->h)) return false;
    const long long sh = (long long)pb->s * pb->h;
    if (sh <= BM || sh > 4 * BM) return false;
    if (fmh::resolve(kVersion, t, pb, dev).splits != 1) return false;
    const long long nx = (sh + BM - 1) / BM, items = nx * pb->b;
    const long long sms = dev && dev->sm_count > 0 ? dev->sm_count : 132, np = sms / nx;
    const long long rounds = (items + sms - 1) / sms;
    return np >= 2 && items * 101 < rounds * nx * np * 100;
}

int v_validate(const mla_tiling *t, const mla_problem *pb, const mla_device_info *d, char *w, size_t wl)
{
    if (!fmh::validate(kVersion, t, pb, d, w, wl)) return 0;
    if (parts(t, pb, d) && d && d->smem_per_block_optin && d->smem_per_block_optin < fmpair::SMEM_BYTES)
        return why(w, wl, "flash_mla_v57 needs %zu bytes of shared memory per block, the device allows %zu",
                   fmpair::SMEM_BYTES, (size_t)d->smem_per_block_optin);
    return 1;
}

int v_stage(const mla_tiling *t, const mla_problem *pb, const mla_device_info *d, int stage, mla_stage_config *cfg)
{
    if (!parts(t, pb, d)) return fmh::stage_config(kVersion, t, pb, d, stage, cfg);
    const SchedLayout L = sched_layout(t, pb, d);
    if (stage == 0) {  // (the planner, one CTA, is launched with it)
        set_cfg(cfg, (const void *)flash_mla_v57_parts, L.row_blocks, L.num_parts, 1, NTHREADS, fmpair::SMEM_BYTES);
        return 1;
    }
    if (stage == 1) {
        const long long rows = (long long)pb->b * pb->s * pb->h;
        set_cfg(cfg, (const void *)flash_mla_v57_combine, (unsigned)((rows + 7) / 8), 1, 1, 256, 0);
        return 1;
    }
    return 0;
}

size_t v_ws(const mla_tiling *t, const mla_problem *pb, const mla_device_info *d)
{
    return parts(t, pb, d) ? sched_layout(t, pb, d).total : fmh::workspace_bytes(kVersion, t, pb, d);
}

mla_status v_prepare(const mla_tiling *t, const mla_problem *, const mla_device_info *)
{
    const mla_status e = fmh::prepare(kVersion, t);
    if (e != MLA_STATUS_OK) return e;
    return set_smem((const void *)flash_mla_v57_parts, fmpair::SMEM_BYTES, "flash_mla_v57: cudaFuncSetAttribute");
}

mla_status v_launch(const mla_tiling *t, const mla_launch_args *args)
{
    const mla_problem *pb = args->pb;
    if (!parts(t, pb, args->dev)) return fmh::launch(kVersion, t, args);
    const mla_flash_mla_tensors *x = (const mla_flash_mla_tensors *)args->tensors;
    const SchedLayout L = sched_layout(t, pb, args->dev);
    if (args->workspace_bytes < L.total)
        return mla_fail(MLA_STATUS_WORKSPACE_TOO_SMALL, "flash_mla_v57: workspace %zu < %zu bytes",
                        args->workspace_bytes, L.total);
    CUtensorMap tmap, qmap, omap;
    LatentArgs a;
    mla_status e = fmh::latent_args(kVersion, pb, x, &tmap, &a);
    if (e == MLA_STATUS_OK) e = fmh::q_tmap(kVersion, pb, x, &qmap);
    if (e == MLA_STATUS_OK) e = fmh::o_tmap(kVersion, pb, x, &omap);
    if (e != MLA_STATUS_OK) return e;
    const SchedBufs sb = sched_bufs(L, args->workspace);
    cudaStream_t st = (cudaStream_t)args->stream;
    const float sl2 = pb->scale * 1.4426950408889634f;
    if (args->stage_mask & 1u) {
        flash_mla_v57_sched<<<1, SCHED_THREADS, 0, st>>>(x->seqlens, pb->t, pb->b, L.num_parts, sb.parts, sb.prefix,
                                                         sb.pprefix, sb.costs);
        e = check_launch("flash_mla_v57_sched");
        if (e != MLA_STATUS_OK) return e;
        cudaError_t ce = fmh::launch_pdl(flash_mla_v57_parts, dim3(L.row_blocks, L.num_parts, 1), NTHREADS,
                                         fmpair::SMEM_BYTES, st, tmap, qmap, omap, a, sl2, sb.to, sb.plan);
        if (ce != cudaSuccess) return cuda_fail(ce, "flash_mla_v57 parts launch");
    }
    if (args->stage_mask & 2u) {
        const long long rows = (long long)pb->b * pb->s * pb->h;
        cudaError_t ce = fmh::launch_pdl(flash_mla_v57_combine, dim3((unsigned)((rows + 7) / 8)), 256, 0, st, a, rows,
                                         sb.plan, (const float *)sb.to.ws_o, (const float *)sb.to.ws_lse);
        if (ce != cudaSuccess) return cuda_fail(ce, "flash_mla_v57 combine launch");
    }
    return MLA_STATUS_OK;
}

constexpr int kW = kVersion.threads / 32;
const mla_tiling kCandidates[] = {
    {64, 64, kW, 2, 0}, {64, 64, kW, 2, 1}, {64, 64, kW, 2, 2}, {64, 64, kW, 2, 4}, {64, 64, kW, 2, 8},
};

}  // namespace

extern "C" const mla_kernel_version mla_kv_flash_mla_v57 = {
    "flash_mla_v57", MLA_DESIGN_FLASH_MLA, 57, MLA_TIER_HOPPER, MLA_TARGET_SM90A,
    "hopper: v56, with FlashMLA's split (a share of all requests' pages a CTA, 132 CTAs) for one-split plans of "
    "2-4 row blocks a request (measured 14-28 % slower than v56 on those rows: its combine 26-31 us, its main "
    "kernel 12-14 % longer; FlashMLA's own plan cuts none of those rows but b=128,t=8192)",
    2, {"main", "combine", nullptr, nullptr}, (int)(sizeof kCandidates / sizeof kCandidates[0]), kCandidates,
    v_validate, v_stage, v_ws, v_prepare, v_launch, 1,
};
