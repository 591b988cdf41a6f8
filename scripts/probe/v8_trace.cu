// Timeline probe for the persistent seesaw (flash_mla_v8; not part of the library or the tests):
// builds flash_mla_v8's kernels with MLA_V3_TRACE, runs the planner and the main kernel on one
// decode shape (uniform lengths, direct launches, no combine), and prints per-CTA time, SM
// clock and SM cycles per pair (the CTA's cycles over its pairs, transitions included), the
// spread of that over the CTAs and SMs, and CTA (0, 0)'s cycles per segment.
// Usage: v8_probe b s h t [parts]  (parts: the tiling's splits, 0 = SMs / row blocks).
// Built and run by scripts/device_probe.sh (MLA_PROBE_V8).
#define MLA_V3_TRACE 1
#include "../../src/kernels/hopper/mla/flash_mla/flash_mla_v8/flash_mla_v8.cu"
#include "persist_probe.cuh"
#include <cstdlib>

int main(int argc, char **argv)
{
    const int b = argc > 1 ? atoi(argv[1]) : 32, s = argc > 2 ? atoi(argv[2]) : 16;
    const int h = argc > 3 ? atoi(argv[3]) : 128, t = argc > 4 ? atoi(argv[4]) : 4096;
    const int parts = argc > 5 ? atoi(argv[5]) : 0;
    auto kern = flash_mla_v8;
    ProbeProblem p = probe_problem(b, s, h, t);
    const mla_tiling til = {64, 64, 12, 2, parts};
    const SchedLayout L = sched_layout(&til, &p.pb, nullptr);
    void *ws;
    cudaMalloc(&ws, L.total);
    CUtensorMap tmap, qmap;
    LatentArgs a;
    if (latent_args(kVersion, &p.pb, &p.xt, &tmap, &a) != MLA_STATUS_OK ||
        fmh::q_tmap(kVersion, &p.pb, &p.xt, &qmap) != MLA_STATUS_OK) {
        printf("tensor maps failed: %s\n", mla_last_error());
        return 1;
    }
    const SchedBufs sb = sched_bufs(L, ws);
    const float sl2 = p.pb.scale * 1.4426950408889634f;
    cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)PSMEM_BYTES);
    const dim3 grid(L.row_blocks, L.num_parts, 1);
    auto run = [&]() {
        flash_mla_v8_sched<<<1, SCHED_THREADS>>>(nullptr, t, b, L.num_parts, sb.parts, sb.prefix, sb.pprefix, sb.costs);
        kern<<<grid, NTHREADS, PSMEM_BYTES>>>(tmap, qmap, a, sl2, sb.to, sb.plan);
    };
    const double us = persist_probe_time(run, 10);
    if (us < 0) return 1;
    const double flops = 2.0 * b * s * h * (double)t * (DQK + DA);
    printf("v8 b=%d s=%d h=%d t=%d grid=%ux%u (parts %d): %.1f us/launch (planner + main, no combine), %.1f TFLOP/s\n",
           b, s, h, t, grid.x, grid.y, L.num_parts, us, flops / us * 1e-6);
    return persist_probe_report((int)(grid.x * grid.y), "CTA (0,0)");
}
