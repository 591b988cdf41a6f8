// What the persistent kernels' timeline probes share (scripts/probe/v8_trace.cu, v22_trace.cu):
// the report of the per-CTA records and CTA 0's segments (g_v3_cta, g_v8_pairs, g_v8_seg, compiled
// in by MLA_V3_TRACE; the timing loop is probe_problem.cuh's). Include after the kernel's .cu.
#pragma once
#include "probe_problem.cuh"
#include <algorithm>

// The n CTAs' records and CTA 0's (cta0: its name in the header) segments; 1 when no CTA had a pair.
inline int persist_probe_report(int n, const char *cta0)
{
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
    printf("%s segments, SM cycles: top -> loop exit (pairs) | of which the next Q's wait | finish "
           "(row sums, store) | next S's wait after it | next top\n", cta0);
    for (int k = 0; k + 1 < 64 && sg[k + 1][0] > sg[k][0] && sg[k][0] > 0; ++k) {
        const long long *g = sg[k];
        printf("  seg %2d: %7lld | q %6lld | finish %6lld | S' %6lld | top %6lld\n", k, g[1] - g[0],
               g[5] > g[4] && g[4] >= g[0] ? g[5] - g[4] : -1LL, g[2] - g[1], g[3] - g[2], sg[k + 1][0] - g[3]);
    }
    return 0;
}
