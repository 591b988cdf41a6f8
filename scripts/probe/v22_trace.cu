// Timeline probe for flash_mla_v22's persistent one-split kernel (not part of the library or the
// tests): builds flash_mla_v22's kernels with MLA_V3_TRACE, runs the persistent kernel alone on one
// shape (uniform lengths, direct launches, grid min(SMs, b * row blocks)) and prints what
// scripts/probe/v8_trace.cu prints for v8: per-CTA time, SM clock, SM cycles per pair with the
// transitions, and CTA 0's cycles per segment (pairs, next-Q wait, finish, next-S wait).
// Usage: v22_probe b s h t [reps [seconds]] (seconds > 0: also a sustained run and its clock). Built and run by scripts/device_probe.sh (MLA_PROBE_V22).
// Built with -DPROBE_V24 it probes flash_mla_v24's persistent kernel instead (the last round cut
// by pages where fmh::tail_cut says so; the partials go to a workspace and are not merged: only
// the persistent kernel is timed).
#define MLA_V3_TRACE 1
#ifdef PROBE_V24
#include "../../src/kernels/hopper/mla/flash_mla/flash_mla_v24/flash_mla_v24.cu"
#define PROBE_KERN flash_mla_v24_persist
#define PROBE_NAME "v24"
#define PROBE_SMEM PSMEM_TAIL_BYTES
#else
#include "../../src/kernels/hopper/mla/flash_mla/flash_mla_v22/flash_mla_v22.cu"
#define PROBE_KERN flash_mla_v22_persist
#define PROBE_NAME "v22"
#define PROBE_SMEM PSMEM_BYTES
#endif
#include "persist_probe.cuh"
#include <cstdlib>

int main(int argc, char **argv)
{
    const int b = argc > 1 ? atoi(argv[1]) : 32, s = argc > 2 ? atoi(argv[2]) : 16;
    const int h = argc > 3 ? atoi(argv[3]) : 128, t = argc > 4 ? atoi(argv[4]) : 4096;
    const int reps = argc > 5 ? atoi(argv[5]) : 10;
    const double sustain_s = argc > 6 ? atof(argv[6]) : 0.0;  // > 0: also run that long, then the clock
    auto kern = PROBE_KERN;
    ProbeProblem p = probe_problem(b, s, h, t);
    const int nrb = (s * h + 63) / 64, items = b * nrb;
    CUtensorMap tmap, qmap;
    LatentArgs a;
    if (latent_args(kVersion, &p.pb, &p.xt, &tmap, &a) != MLA_STATUS_OK ||
        fmh::q_tmap(kVersion, &p.pb, &p.xt, &qmap) != MLA_STATUS_OK) {
        printf("tensor maps failed: %s\n", mla_last_error());
        return 1;
    }
    TileOut to = {};
    to.partial = false;
    int nb = b;
#ifdef PROBE_V24
    const int cut = fmh::tail_cut(kVersion, &p.pb, 1, items < 132 ? items : 132);
    if (cut) {
        nb |= fmh::PTAIL_ON;
        cudaMalloc(&to.ws_o, (size_t)2 * 132 * BM * DA * sizeof(float));
        cudaMalloc(&to.ws_lse, (size_t)2 * 132 * BM * sizeof(float));
    }
    printf("v24: last round %s (%d row blocks)\n", cut ? "cut" : "not cut", cut);
#endif
    const float sl2 = p.pb.scale * 1.4426950408889634f;
    cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)PROBE_SMEM);
    const dim3 grid(items < 132 ? items : 132, 1, 1);
    auto run = [&]() { kern<<<grid, NTHREADS, PROBE_SMEM>>>(tmap, qmap, a, nb, sl2, to); };
    const double us = persist_probe_time(run, reps);
    if (us < 0) return 1;
    const double flops = 2.0 * b * s * h * (double)t * (DQK + DA);
    printf(PROBE_NAME " persistent b=%d s=%d h=%d t=%d grid=%u (items %d): %.1f us/launch, %.1f TFLOP/s\n", b, s, h, t,
           grid.x, items, us, flops / us * 1e-6);
    if (persist_probe_report((int)grid.x, "CTA 0")) return 1;
    // Drift: in round k, CTA x walks item x + k * grid (request (x + k * grid) / nrb). v19's waves
    // start a round's CTAs together; here nothing re-aligns them. Per round: the spread of the
    // segment tops over all CTAs, and over the CTAs of each request (median and max over requests).
    static unsigned long long top[256][64];
    cudaMemcpyFromSymbol(top, g_v8_top, sizeof top);
    const int G = (int)grid.x, rounds = (items + G - 1) / G;
    printf("drift, segment tops (us): round | spread over all CTAs | spread within a request: median, max\n");
    for (int k = 0; k < rounds && k < 64; ++k) {
        unsigned long long lo = ~0ull, hi = 0;
        std::vector<double> per;
        for (int r0 = (k * G) / nrb; r0 * nrb < (k + 1) * G && r0 < b; ++r0) {
            unsigned long long rl = ~0ull, rh = 0;
            for (int x = 0; x < G && x < 256; ++x) {
                const int w = x + k * G;
                if (w >= items || w / nrb != r0 || !top[x][k]) continue;
                rl = std::min(rl, top[x][k]);
                rh = std::max(rh, top[x][k]);
            }
            if (rh >= rl && rh) per.push_back((rh - rl) * 1e-3);
        }
        for (int x = 0; x < G && x < 256; ++x)
            if (x + k * G < items && top[x][k]) { lo = std::min(lo, top[x][k]); hi = std::max(hi, top[x][k]); }
        std::sort(per.begin(), per.end());
        if (per.empty() || hi < lo) continue;
        printf("  %2d | %7.2f | %7.2f %7.2f\n", k, (hi - lo) * 1e-3, per[per.size() / 2], per.back());
    }
    if (sustain_s > 0) probe_sustain(run, sustain_s, (int)grid.x, PROBE_NAME " persistent");
    return 0;
}
