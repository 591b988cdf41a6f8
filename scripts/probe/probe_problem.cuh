// The decode problem of the timeline probes (scripts/probe/v3_trace.cu, v8_trace.cu, v22_trace.cu,
// fmpair_trace.cu), and their timing loop. The problem, on the device: b requests of t tokens (uniform lengths, pages in order; MLA_PROBE_PAGES=random
// permutes them as bench-all's default does), s query tokens, h heads, causal, scale 0.0721, fixed
// pseudo-random bf16 inputs, packed strides, no lse (MLA_PROBE_LSE=1: lse too). Include after the kernel's .cu (it uses its DQK, DA,
// DB and bf16).
#pragma once
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

struct ProbeProblem {
    mla_problem pb;
    mla_flash_mla_tensors xt;
};

// b requests of t tokens, s query tokens, h heads; causal, scale 0.0721.
inline ProbeProblem probe_problem(int b, int s, int h, int t)
{
    const int ppr = (t + 63) / 64, num_pages = b * ppr;
    std::vector<bf16> hq((size_t)b * s * h * DQK), hc((size_t)num_pages * 64 * DQK);
    unsigned x = 12345u;
    for (auto &v : hq) { x = x * 1664525u + 1013904223u; v = __float2bfloat16(((x >> 9) & 1023) / 1024.f - 0.5f); }
    for (auto &v : hc) { x = x * 1664525u + 1013904223u; v = __float2bfloat16(((x >> 9) & 1023) / 1024.f - 0.5f); }
    std::vector<int> bt((size_t)b * ppr);
    for (int i = 0; i < b * ppr; ++i) bt[i] = i;
    const char *pg = getenv("MLA_PROBE_PAGES");
    if (pg && !strcmp(pg, "random")) {  // a fixed Fisher-Yates permutation of the physical pages
        unsigned y = 2463534242u;
        for (int i = b * ppr - 1; i > 0; --i) {
            y ^= y << 13; y ^= y >> 17; y ^= y << 5;
            const int j = (int)(y % (unsigned)(i + 1)), tmp = bt[i];
            bt[i] = bt[j];
            bt[j] = tmp;
        }
        printf("probe: pages in a random permutation (MLA_PROBE_PAGES=random)\n");
    }
    ProbeProblem p = {};
    p.pb.design = MLA_DESIGN_FLASH_MLA;
    p.pb.b = b; p.pb.s = s; p.pb.t = t; p.pb.h = h; p.pb.k = DA; p.pb.p = DB; p.pb.page_size = 64; p.pb.causal = 1;
    p.pb.scale = 0.0721f;
    bf16 *q, *cache, *out;
    int *dbt;
    cudaMalloc(&q, hq.size() * 2);
    cudaMalloc(&cache, hc.size() * 2);
    cudaMalloc(&out, (size_t)b * s * h * DA * 2);
    cudaMalloc(&dbt, bt.size() * 4);
    cudaMemcpy(q, hq.data(), hq.size() * 2, cudaMemcpyHostToDevice);
    cudaMemcpy(cache, hc.data(), hc.size() * 2, cudaMemcpyHostToDevice);
    cudaMemcpy(dbt, bt.data(), bt.size() * 4, cudaMemcpyHostToDevice);
    mla_flash_mla_tensors &xt = p.xt;
    xt.q = q;
    xt.q_strides[0] = (int64_t)s * h * DQK; xt.q_strides[1] = (int64_t)h * DQK; xt.q_strides[2] = DQK;
    xt.cache = cache;
    xt.num_pages = num_pages;
    xt.block_table = dbt;
    xt.max_pages = ppr;
    xt.out = out;
    xt.out_strides[0] = (int64_t)s * h * DA; xt.out_strides[1] = (int64_t)h * DA; xt.out_strides[2] = DA;
    // MLA_PROBE_LSE=1: the kernels also write lse, as the library's callers and the benchmarks
    // (flashmla_same_call.py, bench-all) have them do (from the forty-first session; before it
    // every probe ran without lse).
    const char *le = getenv("MLA_PROBE_LSE");
    if (le && !strcmp(le, "1")) {
        cudaMalloc(&xt.lse, (size_t)b * h * s * sizeof(float));
        printf("probe: lse written (MLA_PROBE_LSE=1)\n");
    }
    return p;
}

// us a launch of run() (3 warm-up launches, then reps timed back to back); < 0 on a CUDA error.
template <typename Run>
inline double persist_probe_time(Run run, int reps)
{
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    for (int it = 0; it < 3; ++it) run();
    cudaEventRecord(e0);
    for (int it = 0; it < reps; ++it) run();
    cudaEventRecord(e1);
    cudaError_t err = cudaDeviceSynchronize();
    if (err != cudaSuccess) { printf("CUDA error %s\n", cudaGetErrorString(err)); return -1.0; }
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    return ms * 1000.0 / reps;
}

#ifdef MLA_V3_TRACE  // (g_v3_cta: probes built without it, fmpair_trace.cu's, have no sustained runs)
// Runs run() back to back for `secs` seconds (20 launches between host syncs) and prints the
// launches' mean time, then the last launch's effective SM clock: clock64 cycles over globaltimer
// ns, summed over its `nctas` CTAs' records (g_v3_cta, compiled in by MLA_V3_TRACE). That is the
// clock the kernel ran at under the power cap, whatever nvidia-smi samples.
template <typename Run>
inline void probe_sustain(Run run, double secs, int nctas, const char *label)
{
    const auto w0 = std::chrono::steady_clock::now();
    long n = 0;
    double el = 0;
    do {
        for (int k = 0; k < 20; ++k) run();
        cudaDeviceSynchronize();
        n += 20;
        el = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
    } while (el < secs);
    printf("%s sustained %.1f s: %ld launches, %.1f us/launch\n", label, el, n, el * 1e6 / n);
    std::vector<unsigned long long> ct((size_t)nctas * 5);
    cudaMemcpyFromSymbol(ct.data(), g_v3_cta, ct.size() * 8);
    double cyc = 0, dt = 0;
    for (int i = 0; i < nctas; ++i) {
        cyc += (double)(ct[5 * (size_t)i + 4] - ct[5 * (size_t)i + 3]);
        dt += (double)(ct[5 * (size_t)i + 2] - ct[5 * (size_t)i + 1]);
    }
    printf("%s sustained, last launch: SM clock over the CTAs %.3f GHz, mean CTA %.1f us\n", label,
           dt > 0 ? cyc / dt : 0.0, dt / nctas * 1e-3);
}
#endif
