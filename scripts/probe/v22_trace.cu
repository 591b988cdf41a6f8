// Timeline probe for flash_mla_v22's persistent one-split kernel (not part of the library or the
// tests): builds flash_mla_v22's kernels with MLA_V3_TRACE, runs the persistent kernel alone on one
// shape (uniform lengths, direct launches, grid min(SMs, b * row blocks)) and prints what
// scripts/probe/v8_trace.cu prints for v8: per-CTA time, SM clock, SM cycles per pair with the
// transitions, and CTA 0's cycles per segment (pairs, next-Q wait, finish, next-S wait).
// Usage: v22_probe b s h t [reps]. Built and run by scripts/device_probe.sh (MLA_PROBE_V22).
#define MLA_V3_TRACE 1
#include "../../src/kernels/hopper/mla/flash_mla/flash_mla_v22/flash_mla_v22.cu"
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char **argv)
{
    const int b = argc > 1 ? atoi(argv[1]) : 32, s = argc > 2 ? atoi(argv[2]) : 16;
    const int h = argc > 3 ? atoi(argv[3]) : 128, t = argc > 4 ? atoi(argv[4]) : 4096;
    const int reps = argc > 5 ? atoi(argv[5]) : 10;
    auto kern = flash_mla_v22_persist;
    const int ppr = (t + 63) / 64, num_pages = b * ppr;
    std::vector<bf16> hq((size_t)b * s * h * DQK), hc((size_t)num_pages * 64 * DQK);
    unsigned x = 12345u;
    for (auto &v : hq) { x = x * 1664525u + 1013904223u; v = __float2bfloat16(((x >> 9) & 1023) / 1024.f - 0.5f); }
    for (auto &v : hc) { x = x * 1664525u + 1013904223u; v = __float2bfloat16(((x >> 9) & 1023) / 1024.f - 0.5f); }
    std::vector<int> bt((size_t)b * ppr);
    for (int i = 0; i < b * ppr; ++i) bt[i] = i;
    mla_problem pb = {};
    pb.design = MLA_DESIGN_FLASH_MLA;
    pb.b = b; pb.s = s; pb.t = t; pb.h = h; pb.k = DA; pb.p = DB; pb.page_size = 64; pb.causal = 1;
    pb.scale = 0.0721f;
    const int nrb = (s * h + 63) / 64, items = b * nrb;
    bf16 *q, *cache, *out;
    int *dbt;
    cudaMalloc(&q, hq.size() * 2);
    cudaMalloc(&cache, hc.size() * 2);
    cudaMalloc(&out, (size_t)b * s * h * DA * 2);
    cudaMalloc(&dbt, bt.size() * 4);
    cudaMemcpy(q, hq.data(), hq.size() * 2, cudaMemcpyHostToDevice);
    cudaMemcpy(cache, hc.data(), hc.size() * 2, cudaMemcpyHostToDevice);
    cudaMemcpy(dbt, bt.data(), bt.size() * 4, cudaMemcpyHostToDevice);
    mla_flash_mla_tensors xt = {};
    xt.q = q;
    xt.q_strides[0] = (int64_t)s * h * DQK; xt.q_strides[1] = (int64_t)h * DQK; xt.q_strides[2] = DQK;
    xt.cache = cache;
    xt.num_pages = num_pages;
    xt.block_table = dbt;
    xt.max_pages = ppr;
    xt.out = out;
    xt.out_strides[0] = (int64_t)s * h * DA; xt.out_strides[1] = (int64_t)h * DA; xt.out_strides[2] = DA;
    CUtensorMap tmap, qmap;
    LatentArgs a;
    if (latent_args(kVersion, &pb, &xt, &tmap, &a) != MLA_STATUS_OK || fmh::q_tmap(kVersion, &pb, &xt, &qmap) != MLA_STATUS_OK) {
        printf("tensor maps failed: %s\n", mla_last_error());
        return 1;
    }
    TileOut to = {};
    to.partial = false;
    const float sl2 = pb.scale * 1.4426950408889634f;
    cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)PSMEM_BYTES);
    const dim3 grid(items < 132 ? items : 132, 1, 1);
    auto run = [&]() { kern<<<grid, NTHREADS, PSMEM_BYTES>>>(tmap, qmap, a, b, sl2, to); };
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    for (int it = 0; it < 3; ++it) run();
    cudaEventRecord(e0);
    for (int it = 0; it < reps; ++it) run();
    cudaEventRecord(e1);
    cudaError_t err = cudaDeviceSynchronize();
    if (err != cudaSuccess) { printf("CUDA error %s\n", cudaGetErrorString(err)); return 1; }
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    const double us = ms * 1000.0 / reps;
    const double flops = 2.0 * b * s * h * (double)t * (DQK + DA);
    printf("v22 persistent b=%d s=%d h=%d t=%d grid=%u (items %d): %.1f us/launch, %.1f TFLOP/s\n", b, s, h, t,
           grid.x, items, us, flops / us * 1e-6);
    const int n = grid.x * grid.y;
    std::vector<unsigned long long> ct((size_t)n * 5);
    std::vector<int> np(n);
    cudaMemcpyFromSymbol(ct.data(), g_v3_cta, ct.size() * 8);
    cudaMemcpyFromSymbol(np.data(), g_v8_pairs, n * 4);
    unsigned long long t0 = ~0ull, t1 = 0;
    std::vector<double> cpp, dur;
    std::vector<double> sm_cpp(256, 0.0);
    double csum = 0, dsum = 0;
    for (int i = 0; i < n; ++i) {
        const unsigned long long *e = &ct[5 * (size_t)i];
        const double d = (double)(e[2] - e[1]), cyc = (double)(e[4] - e[3]);
        if (np[i] <= 0) continue;
        t0 = std::min(t0, e[1]);
        t1 = std::max(t1, e[2]);
        csum += cyc;
        dsum += d;
        dur.push_back(d * 1e-3);
        cpp.push_back(cyc / np[i]);
        if (e[0] < 256) sm_cpp[e[0]] = cyc / np[i];
    }
    std::vector<double> sc = cpp, sd = dur;
    std::sort(sc.begin(), sc.end());
    std::sort(sd.begin(), sd.end());
    if (sc.empty()) { printf("no CTA with pairs\n"); return 1; }
    auto pct = [](const std::vector<double> &v, double p) { return v[(size_t)(p * (v.size() - 1))]; };
    printf("CTAs with pairs %zu, pairs per CTA %d..%d; first start .. last end %.1f us; SM clock %.3f GHz\n", sc.size(),
           *std::min_element(np.begin(), np.end()), *std::max_element(np.begin(), np.end()), (t1 - t0) * 1e-3,
           csum / dsum);
    printf("CTA time us: min %.1f p10 %.1f median %.1f p90 %.1f max %.1f\n", pct(sd, 0), pct(sd, 0.1), pct(sd, 0.5),
           pct(sd, 0.9), pct(sd, 1));
    printf("SM cycles per pair (CTA cycles / CTA pairs, transitions included): min %.0f p10 %.0f median %.0f p90 %.0f "
           "max %.0f\n", pct(sc, 0), pct(sc, 0.1), pct(sc, 0.5), pct(sc, 0.9), pct(sc, 1));
    printf("cycles per pair by SM (0..%d):", n < 132 ? n - 1 : 131);
    for (int i = 0; i < 132 && i < 256; ++i) printf("%s%.0f", i % 16 ? " " : "\n  ", sm_cpp[i]);
    printf("\n");
    long long sg[64][6];
    cudaMemcpyFromSymbol(sg, g_v8_seg, sizeof sg);
    printf("CTA 0 segments, SM cycles: top -> loop exit (pairs) | of which the next Q's wait | finish "
           "(row sums, store) | next S's wait after it | next top\n");
    for (int k = 0; k + 1 < 64 && sg[k + 1][0] > sg[k][0] && sg[k][0] > 0; ++k) {
        const long long *g = sg[k];
        printf("  seg %2d: %7lld | q %6lld | finish %6lld | S' %6lld | top %6lld\n", k, g[1] - g[0],
               g[5] > g[4] && g[4] >= g[0] ? g[5] - g[4] : -1LL, g[2] - g[1], g[3] - g[2], sg[k + 1][0] - g[3]);
    }
    return 0;
}
