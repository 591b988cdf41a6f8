// A flash_mla CTA whose page pair follows FlashMLA's SM90 dense decode schedule as a whole
// (flash_mla_v54-v58, v61-v66, v68; v68 the default from the thirty-second session; plan: docs/knowledge/tiers/hopper/flash_mla_fmpair_plan.md,
// what each partial move towards it measured: flashmla_pair_vs_seesaw.md). Every piece of that schedule grafted
// onto seesaw_cta alone measured level or slower (v25, v34, v37, v51, v52, v53); the pieces lean
// on each other, so this is a kernel of its own, small enough that ptxas schedules its loops
// without seesaw_cta's thirty options around them.
//
// Two math warpgroups (with NT = 384 also an idle third that gives its registers away; see
// fmpair_cta). Warpgroup 0 owns page A (stage 0) and O's columns 0-255, warpgroup 1 page B
// (stage 1) and columns 256-511. One pair:
//   wg0: softmax A -> "scale A" -> PV(A,L) from registers -> "scale B" -> P_A, rescaled to B's
//        max, into its own box -> "P_A" -> (PV(A,L) done: reload A's 0-3 + 8) -> "issued" ->
//        PV(B,L) from P_B -> S_A' boxes 0-3 -> (PV(B,L) done: reload B's 0-3 + 8) -> S_A' 4-8.
//   wg1: "scale A" -> softmax B against A's max -> "scale B" -> P_B into B's RoPE box ->
//        PV(B,R) from registers -> "P_A" -> PV(A,R) from P_A's box -> "issued" -> (PV(B,R) done:
//        reload B's 4-7) -> (PV(A,R) done: reload A's 4-7) -> S_B' boxes 4-7, 8, 0-3, waited
//        only at the next pair's top, so it runs under the next softmax A.
// So the two softmaxes run one after the other, B's under PV(A,L); warpgroup 1 runs its own
// page's PV first; P_A leaves once B's max is known (rescaled when B moved a row's max, which the
// lazy max makes rare); S_B' overlaps the next softmax A.
// Deviations from FlashMLA, each its own later build if this one pays: Q's RoPE box stays in
// shared memory (FlashMLA keeps it in registers and puts P_B there; here P_B takes page B's RoPE
// box and P_A an 8 KB box of its own, 227 KB in all); the softmax is ours (OPT_NOMAX's lazy max,
// no row max in the common case, instead of the exact max). Three ways to feed it (fmpair_cta's
// MODE): the static split grid, the walk of whole row blocks, and FlashMLA's split of all
// requests' pages into parts (flash_mla_v57: correct, and slower at its first build).
// MLA_FMPAIR_V56_KERNELS (below) defines the default's kernel set under a version's name.
#pragma once
#ifdef MLA_FMPAIR_TRACE  // (the transition probe's marks inside finish_pair; defined below)
static __device__ __forceinline__ void fm_fin_mark(int own, int w, int k);
#define MLA_FIN_MARK(k) fm_fin_mark(own, c.w, k)
#endif
#include "flash_mla_seesaw.cuh"

namespace mla {
namespace fmpair {
using namespace mla::fmh;
using namespace mla::seesaw;

constexpr size_t OFF_Q = 0;
constexpr size_t OFF_K = OFF_Q + TILE_BYTES;
constexpr size_t OFF_PA = OFF_K + (size_t)STAGES * TILE_BYTES;  // P_A's own 64 x 64 box
constexpr size_t OFF_M = OFF_PA + BOX_BYTES;                    // float [2][64]: A's and B's row maxima
constexpr size_t OFF_RED = OFF_M + 2 * BM * sizeof(float);      // float [2][64]: final row sums
constexpr size_t OFF_BAR = OFF_RED + 2 * BM * sizeof(float);    // full[2][9], sums[2], q
constexpr size_t SMEM_BYTES = OFF_BAR + (STAGES * NBOX + 3) * sizeof(uint64_t) + 1024;
static_assert(SMEM_BYTES <= SMEM_OPTIN_MAX, "the fmpair CTA exceeds the 227 KB shared-memory opt-in");
static_assert(OFF_PA % 1024 == 0, "P_A's swizzled box needs 1024-byte alignment");
static_assert(OFF_M == seesaw::OFF_M + BOX_BYTES && OFF_RED - OFF_M == seesaw::OFF_RED - seesaw::OFF_M,
              "the finish (finish_pair) sees the same sums layout as seesaw_cta's");

// Named barriers, each arrived on by one warpgroup and synced by the other, once a pair: 2 =
// "A's max published" (0 -> 1), 3 = "B's max published, P_A's box free" (1 -> 0), 6 = "P_A stored" (0 -> 1),
// 7 = "P_B stored and PV(A,R) issued" (1 -> 0). 4 + w: warpgroup w alone (own_commit's tail).
constexpr int FB_SA = 2, FB_SB = 3, FB_PA = 6, FB_IS = 7;
constexpr unsigned A_BY0 = 0x10fu, A_BY1 = 0x0f0u, B_BY0 = 0x10fu, B_BY1 = 0x0f0u;

// The pair's timeline probe (scripts/probe/fmpair_trace.cu builds this file with MLA_FMPAIR_TRACE):
// the SM clock's low 32 bits at eight points a warpgroup a pair, for CTA 0's pairs FM_TR_P0 ..
// FM_TR_P0 + FM_TR_N - 1, kept past the CTA's layout in the 856 bytes of shared memory that the
// opt-in limit leaves (832 used, with FM_TF's marks) and copied to g_fm_trace after the last item.
// Not global stores at each point: fence.proxy.async compiles to MEMBAR.ALL.CTA +
// FENCE.VIEW.ASYNC.S, and the membar waits for the warp's outstanding global stores, so a global
// mark before a fence lengthens that fence's segment (the thirty-third session's first run read
// 750 cycles for softmax A that way). Outside the probe, V3_TR (empty).
#ifdef MLA_FMPAIR_TRACE
#ifndef MLA_FM_TR_P0  // the first marked pair; -DMLA_FM_TR_P0=26 puts t=4096's first item boundary (pairs 31, 32) inside
#define MLA_FM_TR_P0 8
#endif
constexpr int FM_TR_P0 = MLA_FM_TR_P0, FM_TR_N = 12;  // (13 before the fortieth session: FM_TF took the room)
// The transition marks (FM_TF, fortieth session): where the pair that ends an item spends its
// extra 8,000-15,000 cycles (thirty-eighth to fortieth sessions' probes). Per warpgroup, for CTA
// 0's item MLA_FM_TF_SEG (default 0: pairs 0-31 at t=4096, whose boundary FM_TR_P0=26 covers
// too): 0 the item's loop left, 1 the row sums exchanged (finish_pair), 2 the rows stored; then
// the next item's 3 top, 4 past the barrier between items, 5 its loads issued, 6 its Q landed.
// Words 2 * FM_TF_N + w hold the item warpgroup w is in (finish_pair's marks test it).
#ifndef MLA_FM_TF_SEG
#define MLA_FM_TF_SEG 0
#endif
constexpr int FM_TF_N = 7;
constexpr size_t FM_TR_OFF = SMEM_BYTES - 1024;
constexpr size_t FM_TF_OFF = FM_TR_OFF + 2 * FM_TR_N * 8 * sizeof(uint32_t);
constexpr size_t FM_TR_BYTES = (2 * FM_TR_N * 8 + 2 * FM_TF_N + 2) * sizeof(uint32_t);
static_assert(SMEM_BYTES + FM_TR_BYTES <= SMEM_OPTIN_MAX, "the probe's marks fit past the layout");
__device__ uint32_t g_fm_trace[2][FM_TR_N][8];
__device__ uint32_t g_fm_tf[2][FM_TF_N];
// A mark after a bar.sync reads the barrier's release (probe_clock32, ptx.cuh); the forty-first
// session's marks "past the barrier", read before that, were arrivals.
__device__ __forceinline__ uint32_t fm_clock() { return probe_clock32(); }
#define FM_TR(w, pair, slot)                                                                              \
    do {                                                                                                  \
        const int q_ = (pair) - FM_TR_P0;                                                                 \
        if (own == 0 && blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0 && q_ >= 0 && q_ < FM_TR_N) \
            reinterpret_cast<uint32_t *>(smem + FM_TR_OFF)[((w) * FM_TR_N + q_) * 8 + (slot)] = fm_clock(); \
    } while (0)
#define FM_TF(w, sg, slot)                                                                              \
    do {                                                                                                \
        if (own == 0 && blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0 && (sg) == MLA_FM_TF_SEG) \
            reinterpret_cast<uint32_t *>(smem + FM_TF_OFF)[(w) * FM_TF_N + (slot)] = fm_clock();       \
    } while (0)
#define FM_TF_SEGW(w, sg)                                                                                \
    do {                                                                                                 \
        if (own == 0) reinterpret_cast<volatile uint32_t *>(smem + FM_TF_OFF)[2 * FM_TF_N + (w)] = (sg); \
    } while (0)
} // namespace fmpair
} // namespace mla
// finish_pair's marks: its warpgroup's thread 0 in CTA 0, during item MLA_FM_TF_SEG.
static __device__ __forceinline__ void fm_fin_mark(int own, int w, int k)
{
    extern __shared__ char smem_raw[];
    char *smem = smem_raw + ((1024 - (mla::smem_addr(smem_raw) & 1023)) & 1023);
    uint32_t *tf = reinterpret_cast<uint32_t *>(smem + mla::fmpair::FM_TF_OFF);
    if (own == 0 && blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0 &&
        reinterpret_cast<volatile uint32_t *>(tf)[2 * mla::fmpair::FM_TF_N + w] == MLA_FM_TF_SEG)
        tf[w * mla::fmpair::FM_TF_N + k] = mla::fmpair::fm_clock();
}
namespace mla {
namespace fmpair {
#else
#define FM_TF(w, sg, slot) \
    do {                   \
    } while (0)
#define FM_TF_SEGW(w, sg) \
    do {                  \
    } while (0)
#define FM_TR(w, pair, slot) V3_TR(w, pair, slot)
#endif

// S (+)= Q . K^T over box c of one page, waiting for it to land; `first` zeroes S. Issued, not
// committed.
template <long long OPT>
__device__ __forceinline__ void qk_box(float (&s)[32], uint64_t qd, uint64_t kd, uint64_t *full, uint32_t parity,
                                       int c, bool first)
{
    wait_par<OPT>(&full[c], parity);
#pragma unroll
    for (int k4 = 0; k4 < 4; ++k4) {
        const uint32_t off = c * BOX_BYTES + k4 * 32;
        wgmma_m64n64k16_ss(s, gmma_desc_add(qd, off), gmma_desc_add(kd, off), !(first && k4 == 0));
    }
}

// O(64 x 256 of warpgroup w) += P . V, P the 64 x 64 box at p_base, V the page at v_base's
// columns 256w..: issued and committed, not waited.
__device__ __forceinline__ void pv_ss(float (&o)[128], uint32_t p_base, uint32_t v_base, int w)
{
    reg_fence(o);
    wgmma_fence();
    const uint64_t pd = gmma_desc_sw128(p_base, 16, 1024);
    const uint64_t vd = gmma_desc_sw128(v_base + 4 * w * BOX_BYTES, BOX_BYTES, 1024);
#pragma unroll
    for (int kk = 0; kk < BN / 16; ++kk)
        wgmma_m64n256k16_ss<1>(o, gmma_desc_add(pd, kk * 32), gmma_desc_add(vd, kk * 16 * 128), 1);
    wgmma_commit();
}

// bf16 pair times a factor, rounded back to bf16.
__device__ __forceinline__ uint32_t scale_bf16x2(uint32_t u, float f)
{
    return pack_bf16x2(__uint_as_float(u << 16) * f, __uint_as_float(u & 0xffff0000u) * f);
}

// The first S of a segment: all nine boxes of the page at kd, each as it lands; committed.
template <long long OPT>
__device__ __forceinline__ void issue_s(float (&s)[32], uint64_t qd, uint64_t kd, uint64_t *full, uint32_t parity)
{
    wgmma_fence();
#pragma unroll
    for (int cb = 0; cb < NBOX; ++cb) qk_box<OPT>(s, qd, kd, full, parity, cb, cb == 0);
    wgmma_commit();
}

// Request r's segment of a part (FM_PARTS) for the row block at m0: its pages clipped to the row
// block's causal pages, and where its result goes (slot >= 0 and partial: the fp32 partial slot of
// a request cut between parts).
__device__ __forceinline__ KvRange part_range(const LatentPolicy<DA, DB> &pol, const mla_sched_part &part,
                                              const Plan &plan, const LatentArgs &a, int r, int m0, long long &slot,
                                              int &partial)
{
    int bb = 0, be = 0, sidx = 0;
    mla_sched_segment(&part, a.seqlens, a.t, BN, r, &bb, &be, &sidx);
    const int ns = plan.prefix[r + 1] - plan.prefix[r];
    KvRange kr;
    kr.m0 = m0;
    kr.m_last = min(m0 + BM, pol.rows) - 1;
    const int nblk = (pol.row_limit(kr.m_last) + BN - 1) / BN;
    kr.b0 = min(bb, nblk);
    kr.b1 = max(kr.b0, min(be, nblk));
    slot = ns >= 2 ? (long long)plan.pprefix[r] + sidx : -1;
    partial = ns >= 2;
    return kr;
}

// One CTA (NT threads, SMEM_BYTES of dynamic shared memory), Q by TMA (qmap), launched with PDL
// (it waits for the previous grid before touching global memory). OPT: seesaw's softmax and
// finish options (v47's one-split set).
//   MODE = FM_STATIC: the static split grid, CTA (row block x, split y, request z), one segment.
//   MODE = FM_WALK: the walk (seesaw OPT_WALK's items): CTA x takes items x, x + gridDim.x, ...
//     of b * row blocks (nsplits carries b), each a whole row block, one split.
//   MODE = FM_PARTS: FlashMLA's split (the scheduled grid of seesaw_cta<true>, flash_mla_v4's
//     plan): CTA (row block x, part y) walks the request segments of part y of all requests'
//     pages; a request cut between parts writes fp32 partials into slot pprefix[r] + split,
//     merged by seesaw_combine; the others write their rows. The plan is written by the planner
//     launched just before (griddepcontrol.wait orders the reads).
//   NT = CONSUMERS: the two math warpgroups alone (up to 255 registers); NT = NTHREADS: a third
//     warpgroup that leaves at once and gives its registers away (232 for the math warpgroups),
//     so that the version's other kernels (v47's merge and walk) keep their 384-thread tile.
enum : int { FM_STATIC = 0, FM_WALK = 1, FM_PARTS = 2 };
template <long long OPT, int MODE = FM_STATIC, int NT = CONSUMERS>
__device__ __forceinline__ void fmpair_cta(const CUtensorMap *tmap, const LatentArgs &a, int nsplits, float sl2,
                                           const TileOut &to, const CUtensorMap *qmap, const CUtensorMap *omap,
                                           const Plan &plan = Plan{})
{
    static_assert((OPT & OPT_ONE_FINISH) && (OPT & OPT_STAGED_STORE) && (OPT & OPT_Q_TMA),
                  "the fmpair CTA finishes as v41's one-split kernel does");
    constexpr bool WK = MODE == FM_WALK, PARTS = MODE == FM_PARTS;
    static_assert(MODE == FM_STATIC || (OPT & OPT_TMA_STORE), "the walk and the parts store bf16 rows by TMA");
    static_assert(NT == CONSUMERS || NT == NTHREADS, "two math warpgroups, with or without an idle third");
    constexpr int T0 = NT - CONSUMERS;  // the math warpgroups' first thread
    extern __shared__ char smem_raw[];
    char *smem = smem_raw + ((1024 - (smem_addr(smem_raw) & 1023)) & 1023);
    pdl_launch_dependents();
    uint64_t *full = reinterpret_cast<uint64_t *>(smem + OFF_BAR);
    uint64_t *fullA = full, *fullB = full + NBOX, *sums = full + STAGES * NBOX, *qbar = sums + 2;
    char *sKA = smem + OFF_K, *sKB = smem + OFF_K + TILE_BYTES, *sPA = smem + OFF_PA;
    if (threadIdx.x == 0) {
        for (int i = 0; i < STAGES * NBOX; ++i) ptx::mbarrier_init(&full[i], 1);
        ptx::mbarrier_init(&sums[0], 128);
        ptx::mbarrier_init(&sums[1], 128);
        ptx::mbarrier_init(qbar, 1);
#ifdef MLA_FMPAIR_TRACE
        for (int k = 0; k < (int)(FM_TR_BYTES / 4); ++k) reinterpret_cast<uint32_t *>(smem + FM_TR_OFF)[k] = 0;
#endif
        ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
        prefetch_tensormap(tmap);
        prefetch_tensormap(qmap);
        prefetch_tensormap(omap);
    }
    __syncthreads();
    // The warpgroup through a shuffle: visibly warp-uniform to ptxas (C7520 otherwise).
    const int wgx = __shfl_sync(0xffffffffu, (int)threadIdx.x >> 7, 0);
    if (T0 > 0 && wgx == 0) {
        setmaxnreg_dec<40>();
        return;
    }
    if (T0 > 0) setmaxnreg_inc<232>();
    const int tid = (int)threadIdx.x - T0, wg = wgx - T0 / 128, own = tid & 127;
    pdl_wait();
#if defined(MLA_FMPAIR_TRACE) && defined(MLA_FM_STAGGER)
    // Probe only (forty-second session): the odd CTAs start MLA_FM_STAGGER SM cycles late, so that
    // their item edges fall mid-item for the even ones; CTA 0's transition marks then show the
    // transition with half the CTAs, not all, at an edge (is the edge a synchronized burst?).
    if (blockIdx.x & 1) {
        const long long c0 = clock64();
        while (clock64() - c0 < (long long)(MLA_FM_STAGGER)) {
        }
    }
#endif

    float *mb = reinterpret_cast<float *>(smem + OFF_M);
    float *red = reinterpret_cast<float *>(smem + OFF_RED);
    const uint32_t q_base = smem_addr(smem + OFF_Q), ka = smem_addr(sKA), kb = smem_addr(sKB);
    const uint32_t pa_base = smem_addr(sPA);
    // OPT_L2_EVICT (flash_mla_v58, v61): pages and Q evict-first; every page here feeds 3+ row blocks.
    const uint64_t l2pol = (OPT & OPT_L2_EVICT) ? l2_evict_first() : 0;
    constexpr long long LOPT = OPT & ~OPT_L2_PLAIN1;  // (never 0 here: every load hinted)
    const uint64_t qd = gmma_desc_sw128(q_base, 16, 1024);
    const uint64_t kda = gmma_desc_sw128(ka, 16, 1024), kdb = gmma_desc_sw128(kb, 16, 1024);
    // Items (WK): item it is row block it % wk_nx of request it / wk_nx. Page A's boxes complete
    // once a pair, B's once a pair that has a B: phA / phB carry the phases across items.
    // Parts (PARTS): it is the request, from the part's first to its last.
    const int wk_nx = WK ? (a.s * a.h + BM - 1) / BM : 1;
    mla_sched_part part = {0, 0, 0, 0, 0};
    if (PARTS) part = plan.parts[blockIdx.y];
    const int it0 = WK ? (int)blockIdx.x : PARTS ? part.r0 : 0;
    const int it1 = WK ? wk_nx * nsplits : PARTS ? part.r1 + 1 : 1;
    int phA = 0, phB = 0;
    // OPT_FM_QPRE (flash_mla_v64): the next item's Q was requested at the end of this one's loop.
    constexpr bool QPRE = (OPT & OPT_FM_QPRE) != 0 && MODE != FM_STATIC;
    bool qpre = false;  // (thread 0's own)
    for (int it = it0, seg = 0; it < it1; it += WK ? (int)gridDim.x : 1, ++seg) {
        int r = PARTS ? it : (int)blockIdx.z, rbx = blockIdx.x;
        if (WK) {
            r = it / wk_nx;
            rbx = it - r * wk_nx;
        }
        // The last segment's readers of Q and the stages are done (its finish's bulk stores have
        // read the stages: their threads waited for that before this barrier).
        FM_TF(wg, seg - 1, 3);
        FM_TF_SEGW(wg, seg);
        if (MODE != FM_STATIC && seg > 0) named_bar_sync(1, CONSUMERS);
        FM_TF(wg, seg - 1, 4);
        // OPT_EARLY_Q (flash_mla_v97, the static grid): Q and the split's first block-table
        // entries requested before the request's length arrives (seesaw_cta's note).
        constexpr bool EQ = (OPT & OPT_EARLY_Q) && MODE == FM_STATIC;
        EarlyPages eq;
        if constexpr (EQ) {
            if (tid == 0) {
                load_q_tma<LOPT>(qmap, smem + OFF_Q, qbar, r, rbx * BM, a.h, l2pol);
                eq = early_pages<PDLM_WAIT>(a, r, rbx * BM, (int)blockIdx.y, nsplits);
            }
        }
        LatentPolicy<DA, DB> pol(&a, r);
        long long slot = -1;
        TileOut tseg = to;
        const KvRange kr = PARTS ? part_range(pol, part, plan, a, r, rbx * BM, slot, tseg.partial)
                                 : kv_range(pol, rbx * BM, WK ? 0 : (int)blockIdx.y, WK ? 1 : nsplits);
        const int np = kr.b1 - kr.b0;
        const int *bt = a.block_table + (long long)r * a.bt_stride;
        Consumer c = make_consumer(pol, kr, tid + 128);
        c.w = wg;
        if (tid == 0) {
            // Q even when there is no page: every thread waits for it, so that no TMA still
            // writes into this CTA's shared memory when it exits.
            if (!qpre && !EQ) load_q_tma<LOPT>(qmap, smem + OFF_Q, qbar, r, kr.m0, a.h, l2pol);
            qpre = false;
            const bool eq_hit = EQ && kr.b0 == eq.b0;
            if (np > 0) load_boxes<LOPT>(tmap, sKA, fullA, eq_hit ? eq.p0 : ld_global_s32(bt + kr.b0), 0x1ffu, l2pol);
            if (np > 1) load_boxes<LOPT>(tmap, sKB, fullB, eq_hit ? eq.p1 : ld_global_s32(bt + kr.b0 + 1), 0x1ffu, l2pol);
        }
        FM_TF(wg, seg - 1, 5);
        wait_par<OPT>(qbar, (uint32_t)(seg & 1));
        FM_TF(wg, seg - 1, 6);
        const uint32_t pA0 = phA & 1, pB0 = phB & 1;

        float o[128];
#pragma unroll
        for (int i = 0; i < 128; ++i) o[i] = 0.f;
        float s[32];
        uint32_t pa[16];
        float f0, f1, g0, g1, ps0, ps1;

        if (wg == 0) {
            if (np > 0) issue_s<OPT>(s, qd, kda, fullA, pA0);
            for (int i = 0; i < np; i += 2) {
                const uint32_t parA = pA0 ^ ((i >> 1) & 1), parB = pB0 ^ ((i >> 1) & 1);
                const bool hasB = i + 1 < np, nextA = i + 2 < np, nextB = i + 3 < np;
                const int pgA = nextA && own == 0 ? ld_global_s32(bt + kr.b0 + i + 2) : 0;
                const int pgB = nextB && own == 0 ? ld_global_s32(bt + kr.b0 + i + 3) : 0;
                FM_TR(0, phA + (i >> 1), 0);  // (probe marks: scripts/probe/fmpair_trace.cu)
                wgmma_wait<0>();
                reg_fence(s);
                FM_TR(0, phA + (i >> 1), 1);
                // Softmax A; its max goes to warpgroup 1 at once, P_A stays in registers for PV(A,L).
                own_exp<OPT>(kr.b0 + i, sl2, c, s, pa, f0, f1, ps0, ps1);
                if (c.c4 == 0) {
                    mb[c.r0] = c.m_run0;
                    mb[c.r1] = c.m_run1;
                }
                if (page_is_tail(pol, kr.b0 + i)) zero_tail_rows(pol, kr.b0 + i, own, sKA, 128);  // CTA-uniform
                ptx::fence_proxy_async(ptx::space_shared);
                if (page_is_tail(pol, kr.b0 + i)) named_bar_sync(BAR_OWN + 0, 128);  // zeroed V rows before PV(A,L)
                named_bar_arrive(FB_SA, CONSUMERS);
                FM_TR(0, phA + (i >> 1), 2);
                c.l_run0 = c.l_run0 * f0 + ps0;
                c.l_run1 = c.l_run1 * f1 + ps1;
                rescale_o<OPT>(o, f0, f1);
                issue_pv_rs<OPT>(o, pa, ka, 0);
                // P_A at B's max (rescaled only in the warps where B moved a row's max). Synced
                // without a page B too: warpgroup 1 arrives once its PV(A,R) of the last pair is
                // done, and P_A's box may be overwritten only then.
                g0 = g1 = 1.f;
                named_bar_sync(FB_SB, CONSUMERS);
                FM_TR(0, phA + (i >> 1), 3);
                if (hasB) adopt_max<OPT>(mb + BM, c, g0, g1);
                if (__any_sync(0xffffffffu, g0 != 1.f || g1 != 1.f)) {
                    // (rare under the lazy max) PV(A,L) still reads pa: wait for it and scale
                    // in place rather than hold a second copy (16 registers more spilled at 232)
                    wgmma_wait<0>();
                    reg_fence(o);
                    reg_fence(pa);
#pragma unroll
                    for (int k = 0; k < 16; k += 2) {
                        pa[k] = scale_bf16x2(pa[k], g0);
                        pa[k + 1] = scale_bf16x2(pa[k + 1], g1);
                    }
                }
                store_p_opt<OPT>(sPA, pa, c);
                ptx::fence_proxy_async(ptx::space_shared);
                named_bar_arrive(FB_PA, CONSUMERS);
                FM_TR(0, phA + (i >> 1), 4);
                wgmma_wait<0>();
                reg_fence(o);
                reg_fence(pa);
                FM_TR(0, phA + (i >> 1), 5);
                if (nextA && own == 0) load_boxes<LOPT>(tmap, sKA, fullA, pgA, A_BY0, l2pol);
                c.l_run0 *= g0;
                c.l_run1 *= g1;
                rescale_o<OPT>(o, g0, g1);
                if (!hasB) continue;
                named_bar_sync(FB_IS, CONSUMERS);
                FM_TR(0, phA + (i >> 1), 6);
                wait_v_half<OPT>(fullB, parB, 0);
                pv_ss(o, kb + P_BOX * BOX_BYTES, kb, 0);
                if (nextA) {
                    wgmma_fence();
#pragma unroll
                    for (int cb = 0; cb < 4; ++cb) qk_box<OPT>(s, qd, kda, fullA, parA ^ 1, cb, cb == 0);
                    wgmma_commit();
                    wgmma_wait<1>();
                } else {
                    wgmma_wait<0>();
                }
                reg_fence(o);
                FM_TR(0, phA + (i >> 1), 7);
                if (nextB && own == 0) load_boxes<LOPT>(tmap, sKB, fullB, pgB, B_BY0, l2pol);
                if (nextA) {
                    wgmma_fence();
#pragma unroll
                    for (int cb = 4; cb < NBOX; ++cb) qk_box<OPT>(s, qd, kda, fullA, parA ^ 1, cb, false);
                    wgmma_commit();
                }
            }
            // OPT_FM_QPRE: the next item's Q into the Q tile now, so that its load runs under this
            // item's finish (FlashMLA requests the next request's Q before its output store).
            // Nothing reads the tile any more: this warpgroup's S were all waited, and warpgroup 1
            // waited its last S before its last "B's max" arrive, which the loop synced. Only after
            // a page (np > 0): that sync is also what says every thread of warpgroup 1 has waited
            // for this item's Q phase, so the barrier cannot complete the next phase unseen.
            if constexpr (QPRE) {
                const int itn = it + (WK ? (int)gridDim.x : 1);
                if (tid == 0 && np > 0 && itn < it1) {
                    const int rn = WK ? itn / wk_nx : itn;
                    const int m0n = WK ? (itn - rn * wk_nx) * BM : rbx * BM;
                    load_q_tma<LOPT>(qmap, smem + OFF_Q, qbar, rn, m0n, a.h, l2pol);
                    qpre = true;
                }
            }
        } else {
            if (np > 1) issue_s<OPT>(s, qd, kdb, fullB, pB0);
            for (int i = 0; i < np; i += 2) {
                const uint32_t parA = pA0 ^ ((i >> 1) & 1), parB = pB0 ^ ((i >> 1) & 1);
                const bool hasB = i + 1 < np, nextA = i + 2 < np, nextB = i + 3 < np;
                const int pgA = nextA && own == 0 ? ld_global_s32(bt + kr.b0 + i + 2) : 0;
                const int pgB = nextB && own == 0 ? ld_global_s32(bt + kr.b0 + i + 3) : 0;
                FM_TR(1, phA + (i >> 1), 0);
                named_bar_sync(FB_SA, CONSUMERS);
                FM_TR(1, phA + (i >> 1), 1);
                adopt_max<OPT>(mb, c, f0, f1);  // O_R and the row sums to A's max
                wgmma_wait<0>();               // S_B (issued at the end of the last pair)
                reg_fence(s);
                FM_TR(1, phA + (i >> 1), 2);
                if (hasB) {
                    own_exp<OPT>(kr.b0 + i + 1, sl2, c, s, pa, g0, g1, ps0, ps1);
                    if (c.c4 == 0) {
                        mb[BM + c.r0] = c.m_run0;
                        mb[BM + c.r1] = c.m_run1;
                    }
                    named_bar_arrive(FB_SB, CONSUMERS);
                    own_store<OPT>(pol, kr.b0 + i + 1, sKB, c, own, pa);  // P_B into B's RoPE box
                    ptx::fence_proxy_async(ptx::space_shared);
                    if (page_is_tail(pol, kr.b0 + i + 1)) named_bar_sync(BAR_OWN + 1, 128);
                    f0 *= g0;
                    f1 *= g1;
                    c.l_run0 = c.l_run0 * f0 + ps0;
                    c.l_run1 = c.l_run1 * f1 + ps1;
                    rescale_o<OPT>(o, f0, f1);
                    issue_pv_rs<OPT>(o, pa, kb, 1);
                    FM_TR(1, phA + (i >> 1), 3);
                } else {
                    named_bar_arrive(FB_SB, CONSUMERS);  // P_A's box is free (PV(A,R) waited last pair)
                    c.l_run0 *= f0;
                    c.l_run1 *= f1;
                    rescale_o<OPT>(o, f0, f1);
                }
                named_bar_sync(FB_PA, CONSUMERS);
                FM_TR(1, phA + (i >> 1), 4);
                wait_v_half<OPT>(fullA, parA, 1);
                pv_ss(o, pa_base, ka, 1);
                if (hasB) {
                    named_bar_arrive(FB_IS, CONSUMERS);
                    wgmma_wait<1>();
                    reg_fence(pa);
                    FM_TR(1, phA + (i >> 1), 5);
                    if (nextB && own == 0) load_boxes<LOPT>(tmap, sKB, fullB, pgB, B_BY1, l2pol);
                }
                wgmma_wait<0>();
                reg_fence(o);
                FM_TR(1, phA + (i >> 1), 6);
                if (nextA && own == 0) load_boxes<LOPT>(tmap, sKA, fullA, pgA, A_BY1, l2pol);
                if (nextB) {  // S_B': B's late boxes first (reloaded above), then warpgroup 0's
                    wgmma_fence();
#pragma unroll
                    for (int k = 0; k < NBOX; ++k) {
                        const int cb = k < 4 ? 4 + k : k == 4 ? 8 : k - 5;
                        qk_box<OPT>(s, qd, kdb, fullB, parB ^ 1, cb, k == 0);
                    }
                    wgmma_commit();
                }
                FM_TR(1, phA + (i >> 1), 7);
            }
        }
        FM_TF(wg, seg, 0);
        if constexpr (PARTS)
            finish_pair<OPT>(pol, tseg, 1, 0, kr, c, red, sums, (uint32_t)(seg & 1), slot, o, own, sKA, omap);
        else
            finish_pair<OPT>(pol, to, WK ? 1 : nsplits, WK ? 0 : (int)blockIdx.y, kr, c, red, sums,
                             (uint32_t)(seg & 1), -1, o, own, sKA, omap);
        phA += (np + 1) >> 1;
        phB += np >> 1;
    }
#ifdef MLA_FMPAIR_TRACE
    if (own == 0 && blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0) {
        for (int k = 0; k < FM_TR_N * 8; ++k)
            (&g_fm_trace[wg][0][0])[k] = reinterpret_cast<const uint32_t *>(smem + FM_TR_OFF)[wg * FM_TR_N * 8 + k];
        for (int k = 0; k < FM_TF_N; ++k)
            g_fm_tf[wg][k] = reinterpret_cast<const uint32_t *>(smem + FM_TF_OFF)[wg * FM_TF_N + k];
    }
#endif
}

}  // namespace fmpair
}  // namespace mla

// v47's three kernels (static grid, walk, split merge) under a version's name; flash_mla_v68 also
// builds a second set without the L2 hint for its narrow problems (Version::narrow).
#define MLA_FMPAIR_SEESAW_KERNELS(name, OPT)                                                                     \
    __global__ void __launch_bounds__(NTHREADS, 1)                                                                 \
    name(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,                       \
         const __grid_constant__ CUtensorMap omap, const __grid_constant__ LatentArgs a, int nsplits, float sl2,   \
         TileOut to)                                                                                               \
    {                                                                                                              \
        seesaw_cta<false, (OPT) | OPT_TMA_STORE, NTHREADS, PDLM_WAIT>(&tmap, a, nsplits, sl2, to, Plan{}, &qmap,  \
                                                                      &omap);                                     \
    }                                                                                                              \
    __global__ void __launch_bounds__(NTHREADS, 1)                                                                 \
    name##_walk(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,                \
                const __grid_constant__ CUtensorMap omap, const __grid_constant__ LatentArgs a, int b, float sl2,  \
                TileOut to)                                                                                        \
    {                                                                                                              \
        seesaw_cta<false, (OPT) | OPT_TMA_STORE | OPT_WALK, NTHREADS, PDLM_OFF>(&tmap, a, b, sl2, to, Plan{},     \
                                                                                &qmap, &omap);                    \
    }                                                                                                              \
    __global__ void __launch_bounds__(NTHREADS, 1)                                                                 \
    name##_merge(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,               \
                 const __grid_constant__ LatentArgs a, int nsplits, float sl2, TileOut to)                         \
    {                                                                                                              \
        seesaw_cta<false, ((OPT) & ~OPT_SPEC_B) | OPT_CMERGE | OPT_CM_PUSH | OPT_CM_L2 | OPT_CM_SENTMAX, NTHREADS, \
                   PDLM_WAIT>(&tmap, a, nsplits, sl2, to, Plan{}, &qmap);                                         \
    }

// The kernels of flash_mla_v56 under a version's name (the __global__ functions carry the name of
// the version that launches them: DESIGN.md), for v56 and the versions built on it: v41's one-split
// kernel (PDL), v44's walk (no griddepcontrol.wait, never launched with PDL), v41's merge kernel,
// and the FlashMLA-schedule pair's static grid and walk (both PDL). OPT: v41's one-split options;
// PAIR_OPT: options of the pair kernels alone (OPT_L2_EVICT).
#define MLA_FMPAIR_KERNELS(name, OPT, PAIR_OPT)                                                                 \
    MLA_FMPAIR_SEESAW_KERNELS(name, OPT)                                                                           \
    MLA_FMPAIR_PAIR_KERNELS(name, (OPT) | (PAIR_OPT))

// The pair's two kernels alone (static grid, walk) with the options OPT (flash_mla_v99: the seesaw
// kernels of a version built with options the pair does not take).
#define MLA_FMPAIR_PAIR_KERNELS(name, OPT)                                                                         \
    __global__ void __launch_bounds__(NTHREADS, 1)                                                                 \
    name##_pair(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,                \
                const __grid_constant__ CUtensorMap omap, const __grid_constant__ LatentArgs a, int nsplits,       \
                float sl2, TileOut to)                                                                             \
    {                                                                                                              \
        fmpair::fmpair_cta<(OPT) | OPT_TMA_STORE | OPT_P_STSM, fmpair::FM_STATIC, NTHREADS>(&tmap, a, nsplits, sl2, \
                                                                                         to, &qmap, &omap);     \
    }                                                                                                              \
    __global__ void __launch_bounds__(NTHREADS, 1)                                                                 \
    name##_pair_walk(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap qmap,           \
                     const __grid_constant__ CUtensorMap omap, const __grid_constant__ LatentArgs a, int b,        \
                     float sl2, TileOut to)                                                                        \
    {                                                                                                              \
        fmpair::fmpair_cta<(OPT) | OPT_TMA_STORE | OPT_P_STSM, fmpair::FM_WALK, NTHREADS>(&tmap, a, b, sl2, to,   \
                                                                                        &qmap, &omap);          \
    }

// flash_mla_v56's set (v56, v57); v58 adds a pair-only option (PAIR_OPT).
#define MLA_FMPAIR_V56_KERNELS(name, OPT) MLA_FMPAIR_KERNELS(name, OPT, 0)

// The fmh::Version of that kernel set under a version's name (v56, v57, v58, v61): the split-merge
// kernel for split plans, v47's walk (at most 4 row blocks a CTA, launched without PDL), the pair
// where s * h > 128 (pair_sh), PDL on every main kernel.
// (The fields up to the pair's: v47's three kernels of the set named `stem`.)
#define MLA_FMPAIR_SEESAW_FIELDS(name, stem)                                                                   \
    #name, nullptr, 0, fmh::flash_mla_hopper_combine_mlp<DA>, nullptr, 0, nullptr, MSMEM_BYTES, stem##_merge,  \
        MSMEM_BYTES, CM_WS_CTA, nullptr, 0, nullptr, NTHREADS, true, stem, stem##_walk, 4, false
#define MLA_FMPAIR_V56_VERSION(name)                                                                              \
    constexpr fmh::Version kVersion = {MLA_FMPAIR_SEESAW_FIELDS(name, name), name##_pair, name##_pair_walk, \
                                       fmpair::SMEM_BYTES, 128}

// flash_mla_v68: MLA_FMPAIR_V56_VERSION's set with `narrow`, the version of the seesaw kernels
// name##_n (MLA_FMPAIR_SEESAW_KERNELS) that the host picks where a page feeds one row block.
#define MLA_FMPAIR_V56_VERSION_NARROW(name)                                                                       \
    constexpr fmh::Version kNarrow = {MLA_FMPAIR_SEESAW_FIELDS(name, name##_n)};                              \
    constexpr fmh::Version kVersion = {MLA_FMPAIR_SEESAW_FIELDS(name, name), name##_pair, name##_pair_walk,  \
                                       fmpair::SMEM_BYTES, 128, &kNarrow}
