// Timeline probe for the seesaw (flash_mla_v3 / v5; not part of the library or the tests): builds
// the CTA with MLA_V3_TRACE for a set of schedule-option masks (flash_mla_seesaw.cuh's OPT_*; 0 is
// v3, 63 is v5), runs one decode shape (default b=32, s=16, h=128, t=4096) with a direct launch,
// and prints, for CTA (0,0,0), the SM-clock timestamps of each pair's events relative to the
// pair's start, for both consumer warpgroups, and the median steady-state pair period.
// Usage: v3_probe b s h t [opt [seconds]]. Built and run by scripts/device_probe.sh. With seconds > 0
// the launch is then repeated for that long (nothing else printed in between), for the script's
// nvidia-smi sampling of power and clocks under a steady load. MLA_PROBE_BOXES=1 adds when each
// box of each pair's pages landed (one-split masks).
#define MLA_V3_TRACE 1
#include "../../src/kernels/hopper/mla/flash_mla/flash_mla_v3/flash_mla_v3.cu"
#include "probe_problem.cuh"
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <cmath>
#include <chrono>

template <long long OPT>
__global__ void __launch_bounds__(NTHREADS, 1)
probe_cta(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
          const __grid_constant__ CUtensorMap omap, const __grid_constant__ LatentArgs a, int nsplits, float sl2,
          TileOut to)
{
    seesaw_cta<false, OPT>(&tmap, a, nsplits, sl2, to, Plan{}, &qmap, &omap);
}
// MLA_PROBE_PDL=1: the same CTA as the library builds it for PDL launches (PDLM_WAIT: the tensor
// maps prefetched, griddepcontrol.wait before any global access, the block table by coherent
// loads), launched with programmatic stream serialisation as the library launches it. Q-by-TMA
// static-grid masks only (PDLM's own condition). Added in the twenty-fourth session, after the
// walk (OPT_WALK) was faster in this probe's direct launches and slower through the library;
// compiled here, NOT YET RUN on a GPU.
template <long long OPT>
__global__ void __launch_bounds__(NTHREADS, 1)
probe_cta_pdl(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,
              const __grid_constant__ CUtensorMap omap, const __grid_constant__ LatentArgs a, int nsplits, float sl2,
              TileOut to)
{
    seesaw_cta<false, OPT, NTHREADS, PDLM_WAIT>(&tmap, a, nsplits, sl2, to, Plan{}, &qmap, &omap);
}
// (omap, the output's tensor map, is read by OPT_TMA_STORE's masks only)
typedef void (*ProbeFn)(CUtensorMap, CUtensorMap, CUtensorMap, LatentArgs, int, float, TileOut);
static ProbeFn probe_fn_pdl(long long opt)
{
    switch (opt) {
    case 88098047: return probe_cta_pdl<88098047>;  // flash_mla_v41's one-split kernel, as the library launches it
    case 2235581695LL: return probe_cta_pdl<2235581695LL>;  // flash_mla_v42's walk kernel, the same
    default: return nullptr;
    }
}
static ProbeFn probe_fn(long long opt)
{
    switch (opt) {
#ifdef V3_PROBE_CMERGE_ONLY  // the split merge's kernels only, quick to build
    case 180405503: return probe_cta<180405503>;
    case 137636136159LL: return probe_cta<137636136159LL>;  // flash_mla_v61-v68's merge kernel (197182687 + OPT_L2_EVICT)
    case 4535682647263LL: return probe_cta<4535682647263LL>;  // + OPT_EARLY_Q (flash_mla_v97's and v99's merge kernel)
    // (13331775669471, + OPT_Q_MCAST, was flash_mla_v98's merge kernel: removed in the forty-third session)
    case 4211967: return probe_cta<4211967>;
    case 4211935: return probe_cta<4211935>;
    case 717276415: return probe_cta<717276415>;
    case 541082879: return probe_cta<541082879>;
    case 448840959: return probe_cta<448840959>;
    case 272647423: return probe_cta<272647423>;
    case 985711871: return probe_cta<985711871>;
    case 809518335: return probe_cta<809518335>;
    case 20989183: return probe_cta<20989183>;
    case 20989151: return probe_cta<20989151>;
    case 197182719: return probe_cta<197182719>;
    case 197182687: return probe_cta<197182687>;
    case 88098047: return probe_cta<88098047>;  // 20989183 + OPT_TMA_STORE (flash_mla_v41's one-split kernel)
    case 2235581695LL: return probe_cta<2235581695LL>;  // 88098047 + OPT_WALK (flash_mla_v42's walk kernel)
#else
    case 0: return probe_cta<0>;
    case 1: return probe_cta<1>;
    case 2: return probe_cta<2>;
    case 4: return probe_cta<4>;
    case 7: return probe_cta<7>;
    case 8: return probe_cta<8>;
    case 31: return probe_cta<31>;
    case 63: return probe_cta<63>;
    case 255: return probe_cta<255>;
    case 1279: return probe_cta<1279>; // v6 + OPT_LAZY_MAX (flash_mla_v9)
    case 3327: return probe_cta<3327>; // v9 + OPT_MCAST (flash_mla_v10, clusters of 2; h = 128)
    case 7423: return probe_cta<7423>; // 3327 + OPT_MC_NOMULTI: coupled release, own loads
    case 11519: return probe_cta<11519>; // 3327 + OPT_MC_LOCAL: producer thread only
    case 17663: return probe_cta<17663>; // v9 + OPT_Q_TMA (flash_mla_v11; h divides 64 or 64 | h)
    case 50431: return probe_cta<50431>; // 17663 + OPT_CMERGE (flash_mla_v12's merge kernel, 2 splits)
    case 115967: return probe_cta<115967>; // 50431 + OPT_CM_LEAN (flash_mla_v16's merge kernel)
    case 148735: return probe_cta<148735>; // 17663 + OPT_LATE_B (page B after Q; one split)
    case 181503: return probe_cta<181503>; // 50431 + OPT_LATE_B
    case 247039: return probe_cta<247039>; // 115967 + OPT_LATE_B
    case 378111: return probe_cta<378111>; // 115967 + OPT_CM_XLOCAL (wrong results: timing only)
    case 640255: return probe_cta<640255>; // 115967 + OPT_CM_XNOST (no output: timing only)
    case 1164543: return probe_cta<1164543>; // 115967 + OPT_CM_F16 (flash_mla_v17's merge kernel)
    case 1426687: return probe_cta<1426687>; // 1164543 + OPT_CM_XLOCAL (timing only)
    case 1688831: return probe_cta<1688831>; // 1164543 + OPT_CM_XNOST (timing only)
    case 3261695: return probe_cta<3261695>; // 1164543 + OPT_CM_XBLOAT: v16's run, v17's code size
    case 5358847: return probe_cta<5358847>; // 1164543 + OPT_ONE_FINISH
    case 4310271: return probe_cta<4310271>; // 115967 + OPT_ONE_FINISH
    case 12633343: return probe_cta<12633343>; // 50431 + OPT_ONE_FINISH + OPT_CM_PUSH (flash_mla_v18's merge kernel)
    case 4211967: return probe_cta<4211967>; // 17663 + OPT_ONE_FINISH (flash_mla_v17's one-split kernel)
    case 46187775: return probe_cta<46187775>; // 12633343 + OPT_CM_L2 (the rows through L2)
    case 146851071: return probe_cta<146851071>; // 12633343 + OPT_CM_SENTMAX
    case 180405503: return probe_cta<180405503>; // 46187775 + OPT_CM_SENTMAX (flash_mla_v19's merge kernel)
    case 180405471: return probe_cta<180405471>; // 180405503 without OPT_SPEC_B
    case 4211935: return probe_cta<4211935>; // 4211967 without OPT_SPEC_B
    case 717276415: return probe_cta<717276415>; // 180405503 + OPT_P_STSM (flash_mla_v20's merge kernel)
    case 541082879: return probe_cta<541082879>; // 4211967 + OPT_P_STSM (flash_mla_v20's one-split kernel)
    case 448840959: return probe_cta<448840959>; // 180405503 + OPT_LATE_PSTORE (P_B stored after PV(A,R)'s issue)
    case 272647423: return probe_cta<272647423>; // 4211967 + OPT_LATE_PSTORE
    case 985711871: return probe_cta<985711871>; // 717276415 + OPT_LATE_PSTORE
    case 809518335: return probe_cta<809518335>; // 541082879 + OPT_LATE_PSTORE
    case 20989183: return probe_cta<20989183>; // 4211967 + OPT_NOMAX (flash_mla_v35's one-split kernel)
    case 88098047: return probe_cta<88098047>; // 20989183 + OPT_TMA_STORE (flash_mla_v41's one-split kernel)
    case 2235581695LL: return probe_cta<2235581695LL>; // 88098047 + OPT_WALK (flash_mla_v42's walk kernel)
    case 20989151: return probe_cta<20989151>; // 20989183 without OPT_SPEC_B (the removed flash_mla_v37's one-split kernel)
    case 197182719: return probe_cta<197182719>; // flash_mla_v35's merge kernel (20989183 + CMERGE, CM_PUSH, CM_L2, CM_SENTMAX)
    case 197182687: return probe_cta<197182687>; // flash_mla_v40's merge kernel (197182719 without OPT_SPEC_B)
#endif
    default: return nullptr;
    }
}

int main(int argc, char **argv)
{
    const int b = argc > 1 ? atoi(argv[1]) : 32, s = argc > 2 ? atoi(argv[2]) : 16;
    const int h = argc > 3 ? atoi(argv[3]) : 128, t = argc > 4 ? atoi(argv[4]) : 4096;
    const long long opt = argc > 5 ? atoll(argv[5]) : 0;
    const double sustain_s = argc > 6 ? atof(argv[6]) : 0.0;
    // MLA_PROBE_BOXES=1: the idle producer warp of CTA (0,0,0) records each box's landing
    // (flash_mla_seesaw.cuh, v3_box_poll); run the same mask with 0 to see what the watching costs.
    const int boxpoll = getenv("MLA_PROBE_BOXES") ? atoi(getenv("MLA_PROBE_BOXES")) : 0;
    cudaMemcpyToSymbol(g_v3_boxpoll, &boxpoll, sizeof boxpoll);
    const bool pdl = getenv("MLA_PROBE_PDL") && atoi(getenv("MLA_PROBE_PDL")) != 0;
    const ProbeFn fn = pdl ? probe_fn_pdl(opt) : probe_fn(opt);
    if ((opt & OPT_MCAST) && h != 128) {
        printf("opt=%lld needs h = 128 (clusters of a token's two row blocks); skipped\n", opt);
        return 0;
    }
    if ((opt & OPT_Q_TMA) && !fmh::q_tma_ok(h)) {
        printf("opt=%lld needs h dividing 64 or a multiple of 64 (Q by TMA); skipped\n", opt);
        return 0;
    }
    if (!fn) {
        printf("opt %lld is not instantiated in the probe%s\n", opt, pdl ? " with MLA_PROBE_PDL" : "");
        return 1;
    }
    const ProbeProblem pp = probe_problem(b, s, h, t);
    bf16 *q = (bf16 *)pp.xt.q, *cache = (bf16 *)pp.xt.cache, *out = (bf16 *)pp.xt.out;
    int *dbt = (int *)pp.xt.block_table;
    const int ppr = pp.xt.max_pages, num_pages = pp.xt.num_pages;
    CUtensorMap tmap;
    if (tmap_bf16_2d_sw128(&tmap, cache, DQK, (unsigned long long)num_pages * 64, DQK * 2, 64, 64, "probe") !=
        MLA_STATUS_OK) {
        printf("tensor map failed: %s\n", mla_last_error());
        return 1;
    }
    // The query's and the output's tensor maps, by the library's own builders (packed [b][s][h][576]
    // and [b][s][h][512]); the output's for OPT_TMA_STORE only.
    mla_problem tpb;
    mla_problem_init(&tpb, MLA_DESIGN_FLASH_MLA);
    tpb.b = b, tpb.s = s, tpb.h = h;
    mla_flash_mla_tensors tx = {};
    tx.q = q;
    tx.out = out;
    const int64_t rows = (int64_t)s * h;
    tx.q_strides[0] = rows * DQK, tx.q_strides[1] = (int64_t)h * DQK, tx.q_strides[2] = DQK;
    tx.out_strides[0] = rows * DA, tx.out_strides[1] = (int64_t)h * DA, tx.out_strides[2] = DA;
    const fmh::Version tv = {"probe", nullptr, 0};
    CUtensorMap qmap = {}, omap = {};
    if (((opt & OPT_Q_TMA) && fmh::q_tmap(tv, &tpb, &tx, &qmap) != MLA_STATUS_OK) ||
        ((opt & OPT_TMA_STORE) && fmh::o_tmap(tv, &tpb, &tx, &omap) != MLA_STATUS_OK)) {
        printf("tensor map failed: %s\n", mla_last_error());
        return 1;
    }
    LatentArgs a = {};
    a.qa = q;
    a.qb = q + DA;
    a.qa_s[0] = a.qb_s[0] = (long long)s * h * DQK;
    a.qa_s[1] = a.qb_s[1] = (long long)h * DQK;
    a.qa_s[2] = a.qb_s[2] = DQK;
    a.cache = cache;
    a.block_table = dbt;
    a.bt_stride = ppr;
    a.page = 64;
    a.seqlens = nullptr;
    a.s = s; a.h = h; a.t = t; a.causal = 1; a.n_new = 0;
    a.out = out;
    a.os[0] = (long long)s * h * DA; a.os[1] = (long long)h * DA; a.os[2] = DA;
    a.lse = nullptr;
    const float sl2 = 0.0721f;
    // OPT_CMERGE (flash_mla_v12's merge kernel): two splits a row block, run as a cluster of two
    // CTAs over grid y that merge through distributed shared memory (no workspace).
    const bool cm = (opt & OPT_CMERGE) != 0;
    const int nsplits = cm ? 2 : 1;
    TileOut to = {nullptr, nullptr, cm ? 1 : 0};
    if (opt & OPT_CM_L2)  // the merge's workspace: one slice a CTA
        cudaMalloc(&to.ws_o, CM_WS_CTA * (size_t)((s * h + 63) / 64) * nsplits * b);
    const bool mc = (opt & OPT_MCAST) != 0;  // clusters of two row blocks
    const size_t smem = mc || (opt & OPT_Q_TMA) ? MSMEM_BYTES : SMEM_BYTES;
    cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    // static grid: one split, or two with OPT_CMERGE; OPT_WALK: one CTA an SM walking the row
    // blocks, its int argument b
    const bool wk = (opt & OPT_WALK) != 0;
    int nsm = 132;
    cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, 0);
    const int items = (s * h + 63) / 64 * b;
    const dim3 grid = wk ? dim3(items < nsm ? items : nsm) : dim3((s * h + 63) / 64, nsplits, b);
    const int iarg = wk ? b : nsplits;
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute cattr[1];
    cfg.gridDim = grid;
    cfg.blockDim = dim3(NTHREADS);
    cfg.dynamicSmemBytes = smem;
    cattr[0].id = cudaLaunchAttributeClusterDimension;
    cattr[0].val.clusterDim.x = mc ? 2 : 1;
    cattr[0].val.clusterDim.y = cm ? 2 : 1;
    cattr[0].val.clusterDim.z = 1;
    cfg.attrs = cattr;
    cfg.numAttrs = 1;
    if (mc || cm) {
        int nc = 0;
        const cudaError_t oe = cudaOccupancyMaxActiveClusters(&nc, fn, &cfg);
        printf("opt=%lld: at most %d clusters of 2 CTAs resident (%s)\n", opt, nc, cudaGetErrorString(oe));
    }
    cudaLaunchConfig_t pcfg = {};  // MLA_PROBE_PDL: each launch may start under the previous one's tail
    cudaLaunchAttribute pattr[1];
    pcfg.gridDim = grid;
    pcfg.blockDim = dim3(NTHREADS);
    pcfg.dynamicSmemBytes = smem;
    pattr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    pattr[0].val.programmaticStreamSerializationAllowed = 1;
    pcfg.attrs = pattr;
    pcfg.numAttrs = 1;
    auto run = [&]() {
        if (mc || cm)
            cudaLaunchKernelEx(&cfg, fn, tmap, qmap, omap, a, nsplits, sl2, to);
        else if (pdl)
            cudaLaunchKernelEx(&pcfg, fn, tmap, qmap, omap, a, iarg, sl2, to);
        else
            fn<<<grid, NTHREADS, smem>>>(tmap, qmap, omap, a, iarg, sl2, to);
    };
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    for (int it = 0; it < 3; ++it) run();
    cudaEventRecord(e0);
    const int reps = 10;
    for (int it = 0; it < reps; ++it) run();
    cudaEventRecord(e1);
    cudaError_t err = cudaDeviceSynchronize();
    if (err != cudaSuccess) { printf("CUDA error %s\n", cudaGetErrorString(err)); return 1; }
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    const double us = ms * 1000.0 / reps;
    const double flops = 2.0 * b * s * h * (double)t * (DQK + DA);  // causal ~ full at s << t
    printf("opt=%lld b=%d s=%d h=%d t=%d grid=%ux%ux%u: %.1f us/launch (main kernel, one split%s), %.1f TFLOP/s\n", opt, b, s,
           h, t, grid.x, grid.y, grid.z, us, pdl ? ", PDL launches" : "", flops / us * 1e-6);
    {  // per-CTA durations and per-SM gaps between consecutive CTAs (last launch)
        const int n = grid.x * grid.y * grid.z;
        std::vector<unsigned long long> ct((size_t)n * 5);
        cudaMemcpyFromSymbol(ct.data(), g_v3_cta, ct.size() * 8);
        unsigned long long t0 = ~0ull, t1 = 0;
        double dsum = 0, dmin = 1e30, dmax = 0, csum = 0, ghz_min = 1e30, ghz_max = 0;
        for (int i = 0; i < n; ++i) {
            const unsigned long long *e = &ct[5 * (size_t)i];
            const double d = (double)(e[2] - e[1]), cyc = (double)(e[4] - e[3]);
            dsum += d; dmin = d < dmin ? d : dmin; dmax = d > dmax ? d : dmax;
            csum += cyc;
            const double g = d > 0 ? cyc / d : 0;
            ghz_min = g < ghz_min ? g : ghz_min; ghz_max = g > ghz_max ? g : ghz_max;
            t0 = e[1] < t0 ? e[1] : t0;
            t1 = e[2] > t1 ? e[2] : t1;
        }
        printf("CTAs %d: consumer time (setmaxnreg .. after store) mean %.1f us, min %.1f, max %.1f; first start .. last end %.1f us\n",
               n, dsum / n * 1e-3, dmin * 1e-3, dmax * 1e-3, (t1 - t0) * 1e-3);
        {  // when the CTAs start and end, from the first start: the wave's skew and its tail
            std::vector<double> st, en;
            for (int i = 0; i < n; ++i) {
                st.push_back((double)(ct[5 * (size_t)i + 1] - t0) * 1e-3);
                en.push_back((double)(ct[5 * (size_t)i + 2] - t0) * 1e-3);
            }
            std::sort(st.begin(), st.end());
            std::sort(en.begin(), en.end());
            printf("CTA starts (us from the first): median %.1f, p90 %.1f, last %.1f | ends: first %.1f, median %.1f, "
                   "p90 %.1f, last %.1f\n",
                   st[n / 2], st[n * 9 / 10], st[n - 1], en[0], en[n / 2], en[n * 9 / 10], en[n - 1]);
        }
        printf("SM clock over the CTAs (clock64 cycles / globaltimer ns): mean %.3f GHz, per CTA %.3f .. %.3f\n",
               csum / dsum, ghz_min, ghz_max);
        if (!wk && grid.y == 2) {  // the split-merge kernel: the two splits of a row block, one cluster
            // Consumer 0's loop exit per CTA (g_v3_lx). The cluster's merge starts once both have
            // exited, so the kernel's pre-merge end is the latest exit; if the two splits shared
            // their pages dynamically, a cluster's exit would be ~the mean of its two.
            std::vector<unsigned long long> lx((size_t)n);
            cudaMemcpyFromSymbol(lx.data(), g_v3_lx, lx.size() * 8);
            double dsum2 = 0, dmax2 = 0, late = 0, late_bal = 0;
            int nc = 0;
            for (unsigned z = 0; z < grid.z; ++z)
                for (unsigned x = 0; x < grid.x; ++x) {
                    const size_t i0 = x + (size_t)grid.x * (0 + 2 * (size_t)z), i1 = x + (size_t)grid.x * (1 + 2 * (size_t)z);
                    const double e0 = (double)(lx[i0] - t0) * 1e-3, e1 = (double)(lx[i1] - t0) * 1e-3;
                    const double d = e0 > e1 ? e0 - e1 : e1 - e0;
                    dsum2 += d;
                    dmax2 = d > dmax2 ? d : dmax2;
                    late = std::max(late, std::max(e0, e1));
                    late_bal = std::max(late_bal, 0.5 * (e0 + e1));
                    ++nc;
                }
            printf("loop exits (us from the first start), %d clusters of 2: |split 0 - split 1| mean %.2f, max %.2f; "
                   "latest exit %.2f, latest cluster mean %.2f (what balancing pages inside a cluster could reach)\n",
                   nc, dsum2 / nc, dmax2, late, late_bal);
            // Is a late exit a late start or a slow walk? Each CTA's walk (start to loop exit).
            std::vector<double> wl;
            double late_start = 0, late_ex = 0;
            for (int i = 0; i < n; ++i) {
                const double s0 = (double)(ct[5 * (size_t)i + 1] - t0) * 1e-3, e = (double)(lx[i] - t0) * 1e-3;
                wl.push_back(e - s0);
                if (e > late_ex) late_ex = e, late_start = s0;
            }
            std::sort(wl.begin(), wl.end());
            printf("walks (CTA start to loop exit, us): min %.2f, p10 %.2f, median %.2f, p90 %.2f, max %.2f; "
                   "the latest exit's CTA started at %.2f\n",
                   wl[0], wl[n / 10], wl[n / 2], wl[n * 9 / 10], wl[n - 1], late_start);
            // Split each walk at consumer 0's first S (g_v3_fs): the start (loads' burst) and the
            // steady pairs; their correlation with the exit says which one makes a CTA late.
            std::vector<unsigned long long> fs((size_t)n);
            cudaMemcpyFromSymbol(fs.data(), g_v3_fs, fs.size() * 8);
            std::vector<double> f1, st1, ex1;
            for (int i = 0; i < n; ++i) {
                f1.push_back((double)(fs[i] - t0) * 1e-3);
                ex1.push_back((double)(lx[i] - t0) * 1e-3);
                st1.push_back(ex1.back() - f1.back());
            }
            auto corr = [&](const std::vector<double> &u, const std::vector<double> &v) {
                double mu = 0, mv = 0, suv = 0, suu = 0, svv = 0;
                for (int i = 0; i < n; ++i) mu += u[i] / n, mv += v[i] / n;
                for (int i = 0; i < n; ++i)
                    suv += (u[i] - mu) * (v[i] - mv), suu += (u[i] - mu) * (u[i] - mu), svv += (v[i] - mv) * (v[i] - mv);
                return suu > 0 && svv > 0 ? suv / std::sqrt(suu * svv) : 0.0;
            };
            std::vector<double> fso = f1, sto = st1;
            std::sort(fso.begin(), fso.end());
            std::sort(sto.begin(), sto.end());
            printf("first S done (us from the first start): min %.2f, median %.2f, max %.2f | first S to loop exit: min "
                   "%.2f, median %.2f, max %.2f | corr(exit, first S) %.2f, corr(exit, first S to exit) %.2f\n",
                   fso[0], fso[n / 2], fso[n - 1], sto[0], sto[n / 2], sto[n - 1], corr(ex1, f1), corr(ex1, st1));
            double bx[2] = {0, 0};
            for (int i = 0; i < n; ++i) bx[(i % (int)grid.x) & 1] += ex1[i] / (n / 2);
            std::vector<int> ord((size_t)n);
            for (int i = 0; i < n; ++i) ord[i] = i;
            std::sort(ord.begin(), ord.end(), [&](int u, int v) { return ex1[u] > ex1[v]; });
            printf("mean loop exit by row block x: %.2f (x even) %.2f (x odd); the 8 latest (x,y,z sm: first S, exit):",
                   bx[0], bx[1]);
            for (int k = 0; k < 8 && k < n; ++k) {
                const int i = ord[k];
                printf(" (%d,%d,%d sm%d: %.1f, %.1f)", i % (int)grid.x, (i / (int)grid.x) % (int)grid.y,
                       i / (int)(grid.x * grid.y), (int)ct[5 * (size_t)i], f1[i], ex1[i]);
            }
            printf("\n");
            if (getenv("MLA_PROBE_DUMP"))  // every CTA, for offline reading (forty-third session)
                for (int i = 0; i < n; ++i)
                    printf("cta %d %d %d sm %d start %.2f firstS %.2f exit %.2f end %.2f\n", i % (int)grid.x,
                           (i / (int)grid.x) % (int)grid.y, i / (int)(grid.x * grid.y), (int)ct[5 * (size_t)i],
                           (double)(ct[5 * (size_t)i + 1] - t0) * 1e-3, f1[i], ex1[i],
                           (double)(ct[5 * (size_t)i + 2] - t0) * 1e-3);
        }
        if (wk || pdl) {  // where the last launch's CTAs ran: PDL places them as the previous launch frees SMs
            printf("CTA -> SM (last launch, CTAs 0-31):");
            for (int i = 0; i < n && i < 32; ++i) printf(" %d", (int)ct[5 * i]);
            printf("\n");
        }
        for (int sm = 0; sm < 3; ++sm) {
            printf("SM %d:", sm);
            for (int i = 0; i < n; ++i)
                if ((int)ct[5 * i] == sm) printf(" [%d: %.1f..%.1f]", i, (ct[5 * i + 1] - t0) * 1e-3, (ct[5 * i + 2] - t0) * 1e-3);
            printf("\n");
        }
    }
    long long tr[2][64][8], mk[4];
    cudaMemcpyFromSymbol(tr, g_v3_trace, sizeof tr);
    cudaMemcpyFromSymbol(mk, g_v3_mark, sizeof mk);
    const int ppc = (ppr + nsplits - 1) / nsplits;  // pages of CTA (0,0,0)'s split
    const int pairs = (ppc + 1) / 2 < 64 ? (ppc + 1) / 2 : 64;
    if (wk) {  // CTA 0's items: start-up, pairs, finish, and the gap from one item's loop exit to the next's first S
        long long wm[16][5];
        cudaMemcpyFromSymbol(wm, g_v3_wk, sizeof wm);
        const int ni = (items - 1) / (int)grid.x + 1 < 16 ? (items - 1) / (int)grid.x + 1 : 16;
        for (int k = 0; k < ni; ++k)
            printf("walk CTA 0 item %d: top at %lld, -> Q landed %lld, -> first S_A %lld | loop %lld | finish %lld | "
                   "loop exit -> next item's first S_A %lld (SM cycles)\n",
                   k, wm[k][0] - mk[0], wm[k][1] - wm[k][0], wm[k][2] - wm[k][0], wm[k][3] - wm[k][2],
                   wm[k][4] - wm[k][3], k + 1 < ni ? wm[k + 1][2] - wm[k][3] : -1LL);
    }
    if (!wk) {  // where CTA (0,0,0)'s cycles go: before the first pair, the pairs, after the last
        const long long all = mk[3] - mk[0], pre = tr[0][0][0] - mk[0], body = mk[2] - tr[0][0][0];
        printf("CTA (0,0,0) cycles: start -> Q loaded %lld, -> first S_A done %lld | %d pairs %lld (%.0f per pair) | "
               "loop exit -> stored %lld | total %lld (start-up + finish = %.1f %%)\n",
               mk[1] - mk[0], pre, pairs, body, (double)body / pairs, mk[3] - mk[2], all,
               100.0 * (all - body) / (double)all);
    }
    if (cm) {  // the split merge's finish, per CTA and consumer, from finish_pair's entry (SM cycles)
        long long fin[2][2][8];
        cudaMemcpyFromSymbol(fin, g_v3_fin, sizeof fin);
        for (int y = 0; y < 2; ++y)
            for (int w = 0; w < 2; ++w)
                if (opt & OPT_CM_PUSH)
                    printf("push finish CTA (0,%d,0) WG%d: sums %lld, scale %lld, barrier 1 waited %lld, rows pushed %lld, "
                           "barrier 2 %lld, merged+staged %lld (cycles from finish entry)\n",
                           y, w, fin[y][w][0] - fin[y][w][6], fin[y][w][1] - fin[y][w][6], fin[y][w][2] - fin[y][w][6],
                           fin[y][w][3] - fin[y][w][6], fin[y][w][4] - fin[y][w][6], fin[y][w][5] - fin[y][w][6]);
                else
                printf("merge finish CTA (0,%d,0) WG%d: sums %lld, halves written %lld, cluster barrier 1 %lld, weights %lld, "
                       "merged+stored %lld, barrier 2 %lld (cycles from finish entry)\n",
                       y, w, fin[y][w][0] - fin[y][w][6], fin[y][w][1] - fin[y][w][6], fin[y][w][2] - fin[y][w][6],
                       fin[y][w][3] - fin[y][w][6], fin[y][w][4] - fin[y][w][6], fin[y][w][5] - fin[y][w][6]);
    }
    if (!cm) {  // the one-split staged store's finish, CTA (0,0,0), from finish_pair's entry (SM cycles)
        long long fin[2][2][8];
        cudaMemcpyFromSymbol(fin, g_v3_fin, sizeof fin);
        for (int w = 0; w < 2; ++w)
            printf("one-split finish CTA (0,0,0) WG%d: entry at loop exit + %lld, sums %lld, half in smem %lld, "
                   "barrier %lld, stores issued %lld (cycles from finish entry)\n",
                   w, fin[0][w][6] - mk[2], fin[0][w][0] - fin[0][w][6], fin[0][w][1] - fin[0][w][6],
                   fin[0][w][2] - fin[0][w][6], fin[0][w][3] - fin[0][w][6]);
    }
    printf("clocks relative to WG0 slot 0 of each pair (WG0: 0 top/S ready, 1 P_A out, 2 PV(A,L) done, 3 P_B in, "
           "4 PV(B,L) done, 5 QK(A') issued, 6 S_A' done | WG1: 0 P_A in, 1 P_B out, 2 PV(A,R) done, 3 PV(B,R) done, "
           "4 QK(B') issued, 6 S_B' done)\n");
    std::vector<long long> per;
    for (int p = 2; p + 2 < pairs; ++p) per.push_back(tr[0][p + 1][0] - tr[0][p][0]);
    std::sort(per.begin(), per.end());
    if (!per.empty())
        printf("opt=%lld steady pair period: median %lld, min %lld, max %lld SM cycles (%zu pairs)\n", opt,
               per[per.size() / 2], per.front(), per.back(), per.size());
    long long prev = 0;
    for (int p = 0; p < pairs; ++p) {
        const long long t0 = tr[0][p][0];
        if (p >= 4 && p < pairs - 2) {  // steady state: one line for the middle
            prev = t0;
            continue;
        }
        printf("pair %2d period %6lld | WG0", p, p ? t0 - prev : 0LL);
        for (int k = 1; k < 7; ++k) printf(" %6lld", tr[0][p][k] ? tr[0][p][k] - t0 : -1LL);
        printf(" | WG1");
        for (int k = 0; k < 7; ++k) if (k != 5) printf(" %6lld", tr[1][p][k] ? tr[1][p][k] - t0 : -1LL);
        printf("\n");
        prev = t0;
    }
    if (boxpoll && !cm) {  // when each box of the next pair's pages landed, from this pair's top
        long long bx[64][18];
        cudaMemcpyFromSymbol(bx, g_v3_box, sizeof bx);
        printf("opt=%lld box landings for pair p+1, SM cycles from pair p's top (A' boxes 0-8 | B' boxes 0-8); reloads "
               "issued at about WG0 slot 2 (A' 0-3), WG1 slot 2 (A' 4-8), WG0 slot 4 (B' 0-3), WG1 slot 3 (B' 4-8)\n",
               opt);
        std::vector<long long> lat[4];  // last box of each reload group, from its issue
        for (int p = 0; p + 1 < pairs; ++p) {
            const long long t0 = tr[0][p][0];
            if (p >= 2 && p + 3 < pairs) {
                lat[0].push_back(bx[p + 1][3] - tr[0][p][2]);
                lat[1].push_back(bx[p + 1][8] - tr[1][p][2]);
                lat[2].push_back(bx[p + 1][12] - tr[0][p][4]);
                lat[3].push_back(bx[p + 1][17] - tr[1][p][3]);
            }
            if (p >= 4 && p < pairs - 3) continue;
            printf("boxes %2d |", p + 1);
            for (int l = 0; l < 18; ++l) printf("%s %6lld", l == 9 ? " |" : "", bx[p + 1][l] ? bx[p + 1][l] - t0 : -1LL);
            printf("\n");
        }
        const char *grp[4] = {"A' 0-3", "A' 4-8", "B' 0-3", "B' 4-8"};
        for (int g = 0; g < 4; ++g) {
            if (lat[g].empty()) continue;
            std::sort(lat[g].begin(), lat[g].end());
            printf("opt=%lld reload group %s: issue -> last box landed median %lld, min %lld, max %lld SM cycles (%zu pairs)\n",
                   opt, grp[g], lat[g][lat[g].size() / 2], lat[g].front(), lat[g].back(), lat[g].size());
        }
    }
    if (sustain_s > 0) {
        char label[32];
        snprintf(label, sizeof label, "opt=%lld", opt);
        probe_sustain(run, sustain_s, (int)(grid.x * grid.y * grid.z), label);
    }
    return 0;
}
