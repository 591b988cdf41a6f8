// Timeline probe for the FlashMLA-schedule pair (fmpair_cta; not part of the library or the tests):
// builds flash_mla_v68's kernels with MLA_FMPAIR_TRACE, runs its pair kernel alone on one shape (the
// walk where the library walks, b * row blocks in (SMs, 4 SMs], else the static grid; uniform
// lengths, direct launches without PDL) and prints, for CTA 0's pairs FM_TR_P0 .. FM_TR_P0 + 11 (the
// marks live in shared memory: flash_mla_fmpair.cuh says why), the SM clock at the points
// each math warpgroup passes (fmpair_cta's FM_TR marks) as cycles from the pair's top:
//   wg0: 0 top, 1 S_A waited, 2 A's max published (softmax A), 3 B's max in (FB_SB), 4 P_A stored,
//        5 PV(A,L) done, 6 P_B in (FB_IS), 7 PV(B,L) done (S_A' 0-3 issued)
//   wg1: 0 top, 1 A's max in (FB_SA), 2 S_B waited, 3 softmax B done and PV(B,R) issued,
//        4 P_A in (FB_PA), 5 PV(B,R) done, 6 PV(A,R) done, 7 S_B' issued
// Both warpgroups' points are on the SM clock of one SM, so wg1's are also given against wg0's top.
// Then the transition marks (fortieth session; FM_TF in flash_mla_fmpair.cuh): item MLA_FM_TF_SEG's
// loop exit, finish (row sums exchanged, rows stored) and the next item's top, barrier, loads and
// Q, against warpgroup 0's loop exit (-DMLA_FM_TF_SEG=k picks the item; first run in the
// forty-first session).
// Why (thirty-second session): v70 moved warpgroup 1's hottest sampled wait and lost 4 %; the next
// move needs the chain that sets the pair's period, measured rather than read off stall samples.
// Usage: fmpair_probe b s h t [reps] (MLA_PROBE_FORCE_PAIR=1: the pair at s * h <= 128 too).
// Built and run by scripts/device_probe.sh (MLA_PROBE_FMPAIR).
#define MLA_FMPAIR_TRACE 1
#include "../../src/kernels/hopper/mla/flash_mla/flash_mla_v68/flash_mla_v68.cu"
#include "probe_problem.cuh"
#include <algorithm>
#include <cstdlib>

int main(int argc, char **argv)
{
    const int b = argc > 1 ? atoi(argv[1]) : 32, s = argc > 2 ? atoi(argv[2]) : 8;
    const int h = argc > 3 ? atoi(argv[3]) : 128, t = argc > 4 ? atoi(argv[4]) : 4096;
    const int reps = argc > 5 ? atoi(argv[5]) : 10;
    ProbeProblem p = probe_problem(b, s, h, t);
    const int nrb = (s * h + BM - 1) / BM, items = b * nrb;
    // MLA_PROBE_FORCE_PAIR=1: the pair at s * h <= 128 too (as v69 ran it), to see DRAM-fed pages' timeline
    const char *force = getenv("MLA_PROBE_FORCE_PAIR");
    if ((long long)s * h <= 128 && !(force && force[0] == '1')) {
        printf("fmpair probe: s*h = %d runs v47's kernels, not the pair (s*h > 128; MLA_PROBE_FORCE_PAIR=1 runs it)\n",
               s * h);
        return 1;
    }
    CUtensorMap tmap, qmap, omap;
    LatentArgs a;
    if (latent_args(kVersion, &p.pb, &p.xt, &tmap, &a) != MLA_STATUS_OK ||
        fmh::q_tmap(kVersion, &p.pb, &p.xt, &qmap) != MLA_STATUS_OK ||
        fmh::o_tmap(kVersion, &p.pb, &p.xt, &omap) != MLA_STATUS_OK) {
        printf("tensor maps failed: %s\n", mla_last_error());
        return 1;
    }
    TileOut to = {};
    to.partial = false;
    const float sl2 = p.pb.scale * 1.4426950408889634f;
    const bool walk = items > 132 && items <= 4 * 132;  // the library's rule for v68 (walk_max 4)
    const size_t smem = fmpair::SMEM_BYTES + fmpair::FM_TR_BYTES;
    cudaFuncSetAttribute(flash_mla_v68_pair_walk, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    cudaFuncSetAttribute(flash_mla_v68_pair, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    const dim3 grid = walk ? dim3(132, 1, 1) : dim3((unsigned)nrb, 1, (unsigned)b);
    auto run = [&]() {
        if (walk)
            flash_mla_v68_pair_walk<<<grid, NTHREADS, smem>>>(tmap, qmap, omap, a, b, sl2, to);
        else
            flash_mla_v68_pair<<<grid, NTHREADS, smem>>>(tmap, qmap, omap, a, 1, sl2, to);
    };
    const double us = persist_probe_time(run, reps);
    if (us < 0) return 1;
    const double flops = 2.0 * b * s * h * (double)t * (DQK + DA);
    const int ppi = ((t + 63) / 64 + 1) / 2;  // pairs an item (uniform lengths; causal trims the last rows only)
    printf("v68 pair %s b=%d s=%d h=%d t=%d grid=%ux%ux%u: %.1f us/launch, %.1f TFLOP/s; %d pairs an item\n",
           walk ? "walk" : "static", b, s, h, t, grid.x, grid.y, grid.z, us, flops / us * 1e-6, ppi);
    static uint32_t tr[2][fmpair::FM_TR_N][8];
    cudaMemcpyFromSymbol(tr, fmpair::g_fm_trace, sizeof tr);
    auto d = [](uint32_t x, uint32_t y) { return (long long)(int32_t)(x - y); };  // 32-bit clock
    // per pair: the period (next top - top), each point against its warpgroup's top, wg1's top against wg0's
    std::vector<long long> col[2][8], period, off1;
    printf("CTA 0, SM cycles from each warpgroup's pair top (item boundaries marked *):\n"
           " pair | period | wg0: S_A  smaxA  SB_in  P_A  PV_AL  PB_in  PV_BL | wg1 top-wg0 | wg1: SA_in  S_B  PV_BR_is  PA_in  PV_BR  PV_AR  S_B'\n");
    for (int q = 0; q < fmpair::FM_TR_N && tr[0][q][0] != 0; ++q) {
        const int k = fmpair::FM_TR_P0 + q;
        const uint32_t t0 = tr[0][q][0], t1 = tr[1][q][0];
        const bool next = q + 1 < fmpair::FM_TR_N && tr[0][q + 1][0] != 0;
        const bool edge = (k + 1) % ppi == 0 || k % ppi == 0;  // first or last pair of an item
        const long long per = next ? d(tr[0][q + 1][0], t0) : -1;
        printf(" %3d%s | %6lld |", k, edge ? "*" : " ", per);
        for (int j = 1; j < 8; ++j) printf(" %6lld", tr[0][q][j] ? d(tr[0][q][j], t0) : -1LL);
        printf(" | %6lld |", t1 ? d(t1, t0) : -1LL);
        for (int j = 1; j < 8; ++j) printf(" %6lld", tr[1][q][j] && t1 ? d(tr[1][q][j], t1) : -1LL);
        printf("\n");
        if (edge || per <= 0) continue;  // medians over the steady pairs
        period.push_back(per);
        off1.push_back(d(t1, t0));
        for (int w = 0; w < 2; ++w)
            for (int j = 1; j < 8; ++j) col[w][j].push_back(d(tr[w][q][j], tr[w][q][0]));
    }
    auto med = [](std::vector<long long> v) {
        if (v.empty()) return -1LL;
        std::sort(v.begin(), v.end());
        return v[v.size() / 2];
    };
    printf("medians over %zu steady pairs: period %lld | wg0:", period.size(), med(period));
    for (int j = 1; j < 8; ++j) printf(" %lld", med(col[0][j]));
    printf(" | wg1 top-wg0 %lld | wg1:", med(off1));
    for (int j = 1; j < 8; ++j) printf(" %lld", med(col[1][j]));
    printf("\n");
    // The transition marks (FM_TF): item MLA_FM_TF_SEG's end and the next item's start, both
    // warpgroups against warpgroup 0's loop exit; then the next item's first pair from FM_TR when
    // it lies in the marked pairs (its top; S_A or S_B waited).
    static uint32_t tf[2][fmpair::FM_TF_N];
    cudaMemcpyFromSymbol(tf, fmpair::g_fm_tf, sizeof tf);
    const int qn = (MLA_FM_TF_SEG + 1) * ppi - fmpair::FM_TR_P0;  // the next item's first pair, as marked
    printf("transition after item %d, cycles from wg0's loop exit: loop_exit sums_done rows_stored | next: top "
           "past_bar loads_issued Q_in | first pair top S_waited\n", MLA_FM_TF_SEG);
    for (int w = 0; w < 2; ++w) {
        printf("  wg%d:", w);
        for (int j = 0; j < 7; ++j) printf(" %6lld%s", tf[w][j] ? d(tf[w][j], tf[0][0]) : -1LL, j == 2 ? " |" : "");
        if (qn >= 0 && qn < fmpair::FM_TR_N && tr[w][qn][0])
            printf(" | %6lld %6lld", d(tr[w][qn][0], tf[0][0]), d(tr[w][qn][w == 0 ? 1 : 2], tf[0][0]));
        printf("\n");
    }
    return 0;
}
