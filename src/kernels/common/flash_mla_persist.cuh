// The persistent seesaw (flash_mla_v8): one CTA per SM walks its part's request segments back to
// back without restarting the pipeline between them.
//
// In v4-v7 every segment (a row block's pages of one request, or a split of them) starts cold:
// Q is loaded, the first two pages are requested, the first S waits for all of it, and at the
// end the final store runs while the tensor pipe idles. The timeline probe measured ~10 % of a
// 32-pair CTA there (docs/kernels/flash_mla.md, v6). Here the next segment is prepared inside
// the current one's last pair:
// - its first two pages come through the ordinary reload rule ("the last reader of a box
//   reloads it"): at the last pair, "the next page" is the next segment's first (or second);
// - its Q tile comes by TMA into the Q buffer as soon as Q is dead: both S of the last pair were
//   computed before it began, so once consumer 1 has passed the P_A barrier of the last pair
//   neither consumer reads Q again;
// - both consumers issue the next segment's first S before their finish (row sums, store), so
//   the store runs under the tensor pipe instead of beside it.
// The segments come from v4's device-side plan (CTA = row block x part); the pages' schedule
// within a segment is v5's (EARLY_B, SKIP_RESCALE, FAST_SOFTMAX, DESC, SPEC_B).
// Measured (docs/kernels/flash_mla.md, v8): the next Q and the next S are ready in time (waits of
// ~140 and ~50-240 cycles); the finish still costs ~10 k cycles a segment (the 8-byte register
// store), and the pairs themselves were not faster than v6's, so v8 ties or trails v7 except at
// s >= 32.
//
// OPT_PSTATIC (flash_mla_v21, v22): no plan. CTA x of min(SMs, b * row blocks) walks items x,
// x + gridDim.x, ... of the b * row blocks (item i: request i / nrb, row block i % nrb, all its
// pages), the order in which v19's one-split grid runs them wave after wave; every segment is a
// whole row block, so nothing is partial and there is no combine. The pair schedule is v5's with
// the lazy max (OPT_LAZY_MAX). Measured (timeline probe, b=32,s=16, 2026-12-01,
// docs/kernels/flash_mla.md, v22): the transition ~4200 SM cycles a row block (next-Q wait ~130,
// finish ~3600-4400 with OPT_ST16, next-S wait ~50) against v19's ~18000 (start-up ~11700, staged
// finish ~6400); but this loop's pairs take ~5725 cycles against seesaw_cta's ~5590 for the same
// options, which takes most of the gain back.
//
// OPT_PTAIL (flash_mla_v24), with OPT_PSTATIC: the full rounds as above, then the last round's
// T < gridDim.x row blocks cut by pages over the CTAs. Their W pages, in item order, are split
// into gt = min(gridDim.x, W / TAIL_MIN_PAGES) contiguous ranges, CTA c taking pages
// [c W / gt, (c + 1) W / gt). A row block cut between CTAs writes fp32 partials (normalised O
// and lse) into two compact slots a CTA (2c: the piece its range starts with, 2c + 1: the one it
// ends with), and tail_combine, launched after it with PDL, merges them. Why: at b=32,h=128,s=16
// the walk has 1024 row blocks on 132 SMs, 7.76 rounds, so the eighth round runs on 100 SMs while
// 32 idle: ~3 % of the kernel; FlashMLA's planner runs 128 of 132 SMs there. The host turns the
// cut on only where the pages it saves outweigh the merge (fmh::tail_cut in flash_mla_hopper.cuh)
// and passes it as PTAIL_ON in the kernel's int argument. Measured (docs/kernels/flash_mla.md,
// v24): no gain sustained (-0.8 .. +0.4 % with 4-68 cut row blocks, +1 .. +9 % with 100-116).
// Not in the consumers: the rows of tail row blocks with no page (a branch on a loaded length at
// the CTA's start cost the pair loops their uniform datapath, 7-8 % of every pair).

#pragma once
#include "flash_mla_seesaw.cuh"

namespace mla {
namespace seesaw {

// Timeline probe (scripts/probe/v8_trace.cu builds this with MLA_V3_TRACE): each CTA's pair
// count beside flash_mla_seesaw.cuh's per-CTA record, and the SM clock at six points of each of
// CTA (0, 0)'s segments (consumer 0's thread 0): 0 the top, 1 the loop's exit, 2 after the
// finish, 3 after the next S, 4 / 5 before / after the next Q's wait. Not in the library.
// g_v8_top: the global timer (ns) at the top of every segment of CTAs x < 256 of grid row 0, for
// the drift between CTAs that walk the same request's row blocks (scripts/probe/v22_trace.cu).
#ifdef MLA_V3_TRACE
__device__ int g_v8_pairs[1 << 16];
__device__ long long g_v8_seg[64][6];
__device__ unsigned long long g_v8_top[256][64];
#define V8_TOP(k)                                                                                           \
    do {                                                                                                    \
        if (tid == 128 && blockIdx.y == 0 && blockIdx.x < 256 && (k) < 64) g_v8_top[blockIdx.x][k] = v3_gtime(); \
    } while (0)
#define V8_SEG(k, slot)                                                                             \
    do {                                                                                            \
        if (tid == 128 && blockIdx.x == 0 && blockIdx.y == 0 && (k) < 64) g_v8_seg[k][slot] = clock64(); \
    } while (0)
#define V8_PAIRS(n)                                                                                     \
    do {                                                                                                \
        if (tid == 128 && blockIdx.x + gridDim.x * blockIdx.y < (1u << 16)) g_v8_pairs[blockIdx.x + gridDim.x * blockIdx.y] = (n); \
    } while (0)
#else
#define V8_TOP(k) \
    do {          \
    } while (0)
#define V8_SEG(k, slot) \
    do {                \
    } while (0)
#define V8_PAIRS(n) \
    do {            \
    } while (0)
#endif

// One more mbarrier (Q) after the seesaw's: full[STAGES][NBOX], sums[2], q.
constexpr size_t PSMEM_BYTES = OFF_BAR + (STAGES * NBOX + 3) * sizeof(uint64_t) + 1024;
static_assert(PSMEM_BYTES <= SMEM_OPTIN_MAX, "flash_mla_v8 exceeds the 227 KB shared-memory opt-in");

// A segment of the walk: request r's pages [b0, b0 + np) for this CTA's row block, its partial
// slot (the request is cut between parts) or -1 (straight to out). Kept small: a consumer holds
// two (the current and the next) beside O.
struct Seg {
    int r, b0, np, slot, m0;  // m0: the segment's first row (the row block)
};

// Rows m0.. of the segment's request (all requests have s * h rows).
__device__ __forceinline__ KvRange seg_rows(const LatentArgs &a, const Seg &g)
{
    KvRange k;
    k.m0 = g.m0;
    k.m_last = min(k.m0 + BM, a.s * a.h) - 1;
    k.b0 = g.b0;
    k.b1 = g.b0 + g.np;
    return k;
}
__device__ __forceinline__ const int *seg_bt(const LatentArgs &a, const Seg &g)
{
    return a.block_table + (long long)g.r * a.bt_stride;
}

template <long long OPT>
__device__ __forceinline__ Seg seg_at(const LatentArgs &a, const Plan &plan, const mla_sched_part &part, int r)
{
    Seg g;
    if (OPT & OPT_PSTATIC) {  // r is the walk's item: request r / nrb, row block r % nrb, all pages
        const int nrb = (a.s * a.h + BM - 1) / BM;
        g.r = r / nrb;
        g.m0 = (r - g.r * nrb) * BM;
        g.b0 = 0;
        g.slot = -1;
        const LatentPolicy<DA, DB> pol(&a, g.r);
        g.np = (pol.row_limit(min(g.m0 + BM, pol.rows) - 1) + BN - 1) / BN;
        return g;
    }
    g.r = r;
    g.m0 = blockIdx.x * BM;
    const LatentPolicy<DA, DB> pol(&a, r);
    int bb = 0, be = 0, sidx = 0;
    mla_sched_segment(&part, a.seqlens, a.t, BN, r, &bb, &be, &sidx);
    const KvRange k = seg_rows(a, g);
    const int nblk = k.m0 < pol.rows ? (pol.row_limit(k.m_last) + BN - 1) / BN : 0;
    g.b0 = min(bb, nblk);
    g.np = min(be, nblk) - g.b0;
    const int ns = plan.prefix[r + 1] - plan.prefix[r];
    g.slot = ns >= 2 ? plan.pprefix[r] + sidx : -1;
    return g;
}

// The page (index into the request's blocks) of the segment's i-th step. A rotated order (row
// block x starting at page 2x, so that the row blocks of a request would not wait on the same
// DRAM miss in lockstep) was measured and removed: no change at s = 1, 4, 16 or 64
// (docs/kernels/flash_mla.md, v8).
__device__ __forceinline__ int seg_page(const Seg &g, int i) { return g.b0 + i; }

// A segment with no page for this row block (a request shorter than the row block's causal
// start, or of length 0): its rows are written at once, O = 0 and lse = -inf, each consumer its
// 256 columns (consumer 0 the lse).
__device__ __forceinline__ void store_empty(const LatentArgs &a, const TileOut &to, const Seg &g, int w, int own)
{
    const LatentPolicy<DA, DB> pol(&a, g.r);
    const KvRange k = seg_rows(a, g);
    for (int m = k.m0 + (own >> 5); m <= k.m_last; m += 4) {
        const int lane = own & 31;
        if (g.slot >= 0) {
            float *dst = to.ws_o + ((long long)g.slot * pol.rows + m) * DA + w * 256 + lane * 8;
            reinterpret_cast<float4 *>(dst)[0] = make_float4(0.f, 0.f, 0.f, 0.f);
            reinterpret_cast<float4 *>(dst)[1] = make_float4(0.f, 0.f, 0.f, 0.f);
            if (w == 0 && lane == 0) to.ws_lse[(long long)g.slot * pol.rows + m] = -CUDART_INF_F;
        } else {
            *reinterpret_cast<uint4 *>(pol.out_row(m) + w * 256 + lane * 8) = make_uint4(0u, 0u, 0u, 0u);
            float *lp = pol.lse_at(m);
            if (lp && w == 0 && lane == 0) *lp = -CUDART_INF_F;
        }
    }
}

// OPT_PTAIL ------------------------------------------------------------------------------------
constexpr int TAIL_MIN_PAGES = 4;  // the fewest pages a CTA's tail range holds (two pairs)

// The pages row block `item` of the walk reads (its causal limit; 0 for a request too short).
__device__ __forceinline__ int item_pages(const LatentArgs &a, int nrb, int item)
{
    const int r = item / nrb, m0 = (item - r * nrb) * BM;
    const LatentPolicy<DA, DB> pol(&a, r);
    return max(0, (pol.row_limit(min(m0 + BM, pol.rows) - 1) + BN - 1) / BN);
}

// Warp-wide (every lane calls it): the pages of tail items [0, T) (items nf..), and those before
// tail item `upto`.
__device__ __forceinline__ void tail_sums(const LatentArgs &a, int nrb, int nf, int T, int upto, int &w, int &pre)
{
    int sw = 0, sp = 0;
    for (int j = threadIdx.x & 31; j < T; j += 32) {
        const int n = item_pages(a, nrb, nf + j);
        sw += n;
        sp += j < upto ? n : 0;
    }
    w = __reduce_add_sync(0xffffffffu, sw);
    pre = __reduce_add_sync(0xffffffffu, sp);
}

// Warp-wide: the tail item whose pages hold tail page p (T if none), and the pages before it.
__device__ __forceinline__ int tail_find(const LatentArgs &a, int nrb, int nf, int T, int p, int &pre)
{
    const int lane = threadIdx.x & 31;
    int base = 0;
    for (int j0 = 0; j0 < T; j0 += 32) {
        const int n = j0 + lane < T ? item_pages(a, nrb, nf + j0 + lane) : 0;
        int inc = n;
#pragma unroll
        for (int d = 1; d < 32; d <<= 1) {
            const int y = __shfl_up_sync(0xffffffffu, inc, d);
            inc += lane >= d ? y : 0;
        }
        const unsigned hit = __ballot_sync(0xffffffffu, base + inc > p);
        if (hit) {
            const int l = __ffs(hit) - 1;
            pre = base + __shfl_sync(0xffffffffu, inc - n, l);
            return j0 + l;
        }
        base += __shfl_sync(0xffffffffu, inc, 31);
    }
    pre = base;
    return T;
}

// The CTAs that hold a tail range (0: no tail pages) and CTA c's range [lo, hi).
__device__ __forceinline__ int tail_ctas(int w, int G) { return w > 0 ? min(G, max(1, w / TAIL_MIN_PAGES)) : 0; }
__device__ __forceinline__ int tail_lo(int c, int w, int gt) { return (int)((long long)c * w / gt); }

// This CTA's tail pieces, built once by warp 0 of the idle producer warpgroup into shared memory
// (OFF_TAIL) while the consumers run the full rounds, and published by an mbarrier (tbar): the
// same walk done at each segment's top by the consumers, with S live, made ptxas spill in the
// pair loops. A piece is {tail item, first page, pages, slot} (slot >= 0: a cut row block's
// partial, 2c for the piece CTA c's range starts with, 2c + 1 for the one it ends with); a CTA's
// range meets at most T < gridDim.x items, so TAIL_MAXP (the host cuts only for grids below it)
// always holds them.
constexpr int TAIL_MAXP = 256;
constexpr size_t OFF_TAIL = OFF_BAR + (STAGES * NBOX + 4) * sizeof(uint64_t);  // after PSMEM's + tbar
constexpr size_t PSMEM_TAIL_BYTES = OFF_TAIL + (TAIL_MAXP + 1) * sizeof(int4) + 1024;
static_assert(PSMEM_TAIL_BYTES <= SMEM_OPTIN_MAX, "flash_mla_v24 exceeds the 227 KB shared-memory opt-in");

__device__ __forceinline__ void tail_build(const LatentArgs &a, int nrb, int items, int4 *list, uint64_t *tbar)
{
    const int G = (int)gridDim.x, nf = items - items % G, T = items - nf, c = (int)blockIdx.x;
    int w, pre;
    tail_sums(a, nrb, nf, T, 0, w, pre);
    const int gt = tail_ctas(w, G);
    int n = 0;
    if (c < gt) {
        const int lo = tail_lo(c, w, gt), hi = tail_lo(c + 1, w, gt);
        for (int jt = tail_find(a, nrb, nf, T, lo, pre); jt < T && pre < hi && n < TAIL_MAXP; ++jt) {
            const int np = item_pages(a, nrb, nf + jt);
            if (np == 0) continue;  // its rows: tail_combine's
            const int s0 = max(lo, pre), s1 = min(hi, pre + np);
            if ((threadIdx.x & 31) == 0)
                list[1 + n] = make_int4(jt, s0 - pre, s1 - s0, s1 - s0 < np ? 2 * c + (s0 == lo ? 0 : 1) : -1);
            ++n;
            pre += np;
        }
    }
    if ((threadIdx.x & 31) == 0) {
        list[0].x = n;
        ptx::mbarrier_arrive(ptx::sem_release, ptx::scope_cta, ptx::space_shared, tbar);
    }
}

// The next segment after request r that has pages for this row block (part.r1 + 1: none),
// writing the rows of the empty ones it passes.
// OPT_PSTATIC: the walk's items instead of requests, part.r1 the last item, a stride of gridDim.x.
// tail: OPT_PTAIL's cut is on (the kernel argument's PTAIL_ON bit); tl / tbar: the piece list
// and its barrier (tail_build).
template <long long OPT>
__device__ __forceinline__ int next_seg(const LatentArgs &a, const Plan &plan, const mla_sched_part &part,
                                        const TileOut &to, int r, int w, int own, Seg &g, bool tail = false,
                                        const int4 *tl = nullptr, uint64_t *tbar = nullptr)
{
    const int step = (OPT & OPT_PSTATIC) ? (int)gridDim.x : 1;
    if ((OPT & OPT_PTAIL) && tail) {  // full rounds up to nf, then the cut tail
        const int items = part.r1 + 1, nf = items - items % step;
        int k = r - nf + 1;  // the next piece of the list
        if (r < nf) {
            for (r += step; r < nf; r += step) {
                g = seg_at<OPT>(a, plan, part, r);
                if (g.np > 0) return r;
                store_empty(a, to, g, w, own);
            }
            wait_parity(tbar, 0);  // the list is built (once: the barrier completes one phase)
            k = 0;
        }
        // Values read from shared memory go through a shuffle from lane 0: visibly warp-uniform
        // to ptxas, which must keep the pair loop's branches, barrier waits and wgmma operands on
        // the uniform datapath (a branch it could not prove uniform cost v24's first build its
        // pairs 7-8 %: the tail-empty rows written at the CTA's start, now in tail_combine).
        if (k >= __shfl_sync(0xffffffffu, tl[0].x, 0)) return items;
        const int4 pc = tl[1 + k];
        g = seg_at<OPT>(a, plan, part, nf + __shfl_sync(0xffffffffu, pc.x, 0));
        g.b0 = __shfl_sync(0xffffffffu, pc.y, 0);
        g.np = __shfl_sync(0xffffffffu, pc.z, 0);  // (the slot, pc.w, stays in the list: read at the finish)
        return nf + k;
    }
    for (r += step; r <= part.r1; r += step) {
        g = seg_at<OPT>(a, plan, part, r);
        if (g.np > 0) return r;
        store_empty(a, to, g, w, own);
    }
    return r;
}

// The next two pages of the stream after pair i of segment cur (the next segment's first two at
// its last pair): whether each exists and its page id (read by `own == 0` only).
struct NextPages {
    bool a, b;
    int pga, pgb;
};
__device__ __forceinline__ NextPages next_pages(const LatentArgs &a, const Seg &cur, const Seg &nxt, bool has_next,
                                                int i, int own)
{
    NextPages n;
    const bool last = i + 2 >= cur.np;
    n.a = last ? has_next : true;
    n.b = last ? has_next && nxt.np > 1 : i + 3 < cur.np;
    // field by field: a reference picked at run time would put both segments in local memory
    Seg g;
    g.r = last ? nxt.r : cur.r;
    g.b0 = last ? nxt.b0 : cur.b0;
    g.np = last ? nxt.np : cur.np;
    const int ia = last ? 0 : i + 2;
    const int *bt = seg_bt(a, g);
    n.pga = n.a && own == 0 ? __ldg(bt + seg_page(g, ia)) : 0;
    n.pgb = n.b && own == 0 ? __ldg(bt + seg_page(g, ia + 1)) : 0;
    return n;
}

// One persistent CTA (384 threads, PSMEM_BYTES of dynamic shared memory): CTA (row block x,
// part y) of the plan. tmap: the cache's tensor map; qmap: the query's (load_q_tma).
template <long long OPT, int NT = NTHREADS>
__device__ __forceinline__ void persist_cta(const CUtensorMap *tmap, const CUtensorMap *qmap, const LatentArgs &a,
                                            float sl2, const TileOut &to, const Plan &plan, int nb = 0)
{
    static_assert((OPT & OPT_EARLY_B) && (OPT & OPT_SPEC_B) && !(OPT & OPT_STAGED_STORE),
                  "persist_cta is written for v5's pair schedule");
    extern __shared__ char smem_raw[];
    char *smem = smem_raw + ((1024 - (smem_addr(smem_raw) & 1023)) & 1023);
    pdl_launch_dependents();

    // NT == CONSUMERS: no producer warpgroup, the consumers seen as threads 128-383 (seesaw_cta)
    static_assert(NT == NTHREADS || NT == CONSUMERS, "a producer warpgroup and two consumers, or the consumers");
    constexpr bool NOPROD = NT == CONSUMERS;
    static_assert(!NOPROD || !(OPT & OPT_PTAIL), "OPT_PTAIL's piece list is built by the producer warpgroup");
    const int tid = threadIdx.x + (NOPROD ? 128 : 0);
    const int wg = __shfl_sync(0xffffffffu, tid >> 7, 0);  // C7520, see seesaw_cta
    uint64_t *full = reinterpret_cast<uint64_t *>(smem + OFF_BAR);
    uint64_t *fullA = full, *fullB = full + NBOX;
    uint64_t *sums = full + STAGES * NBOX;
    uint64_t *qbar = sums + 2;
    uint64_t *tbar = qbar + 1;                                 // OPT_PTAIL: the piece list is built
    int4 *tl = reinterpret_cast<int4 *>(smem + OFF_TAIL);      // OPT_PTAIL: the piece list
    char *sKA = smem + OFF_K, *sKB = smem + OFF_K + TILE_BYTES, *sQ = smem + OFF_Q;
    if (threadIdx.x == 0) {
        for (int i = 0; i < STAGES * NBOX; ++i) ptx::mbarrier_init(&full[i], 1);
        ptx::mbarrier_init(&sums[0], 128);
        ptx::mbarrier_init(&sums[1], 128);
        ptx::mbarrier_init(qbar, 1);
        if (OPT & OPT_PTAIL) ptx::mbarrier_init(tbar, 1);
        ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
    }
    __syncthreads();
    if (!NOPROD && wg == 0) {  // no producer role: its registers go to the consumers
        setmaxnreg_dec<40>();
        if ((OPT & OPT_PTAIL) && (nb & PTAIL_ON) && tid < 32)
            tail_build(a, (a.s * a.h + BM - 1) / BM, (nb & ~PTAIL_ON) * ((a.s * a.h + BM - 1) / BM), tl, tbar);
        return;
    }
    if (!NOPROD) setmaxnreg_inc<232>();
    mla_sched_part part;
    if (OPT & OPT_PSTATIC) {  // items blockIdx.x, + gridDim.x, ... of the b * nrb row blocks
        const int nrb = (a.s * a.h + BM - 1) / BM;
        part.r0 = blockIdx.x;
        part.r1 = ((OPT & OPT_PTAIL) ? nb & ~PTAIL_ON : nb) * nrb - 1;
        part.blk0 = part.blk1 = part.split0 = 0;
    } else {
        pdl_wait();  // the plan is written by the planner launched just before
        part = plan.parts[blockIdx.y];
    }
    const int step = (OPT & OPT_PSTATIC) ? (int)gridDim.x : 1;
    const int own = (tid - 128) & 127, cw = wg - 1;
    float *mb = reinterpret_cast<float *>(smem + OFF_M);
    float *red = reinterpret_cast<float *>(smem + OFF_RED);
    const uint32_t q_base = smem_addr(sQ), ka = smem_addr(sKA), kb = smem_addr(sKB);

    V3_CTA(1);
    Seg cur;
    int ci = next_seg<OPT>(a, plan, part, to, part.r0 - step, cw, own, cur, (nb & PTAIL_ON) != 0, tl, tbar);  // the walk's cursor
    if (ci > part.r1) return;
    if (tid == 128) {  // the first segment starts cold
        const int *bt = seg_bt(a, cur);
        load_q_tma(qmap, sQ, qbar, cur.r, cur.m0, a.h);
        load_boxes(tmap, sKA, fullA, __ldg(bt + seg_page(cur, 0)), 0x1ffu);
        if (cur.np > 1) load_boxes(tmap, sKB, fullB, __ldg(bt + seg_page(cur, 1)), 0x1ffu);
    }
    // Parities: fa / fb of the stage fill the current pair reads (A: one fill a pair, B: one a
    // pair that has a B), qp of the next Q fill, seg of the row-sum chain.
    uint32_t fa = 0, fb = 0, qp = 0, seg = 0;
    float s[32];
    wait_parity(qbar, qp);
    qp ^= 1;
    if (cw == 0) {
        issue_qk<0, NBOX, OPT>(s, q_base, ka, fullA, fa);
    } else if (cur.np > 1) {
        issue_qk<0, NBOX, OPT>(s, q_base, kb, fullB, fb);
    }
    wgmma_wait<0>();
    reg_fence(s);

    int npairs = 0;
    for (;;) {
        V8_SEG(seg, 0);
        V8_TOP(seg);
        npairs += (cur.np + 1) >> 1;
        const LatentPolicy<DA, DB> pol(&a, cur.r);
        Consumer c = make_consumer(pol, seg_rows(a, cur), tid);
        c.w = cw;
        Seg nxt = cur;
        const int ni = next_seg<OPT>(a, plan, part, to, ci, cw, own, nxt, (nb & PTAIL_ON) != 0, tl, tbar);
        const bool has_next = ni <= part.r1;

        TileOut tseg = to;
        tseg.partial = cur.slot >= 0;
        const int np = cur.np;

        float o[128];
#pragma unroll
        for (int i = 0; i < 128; ++i) o[i] = 0.f;
        uint32_t pa[16];
        float f0, f1, g0, g1, ps0, ps1;
        if (cw == 0) {
            // Owner of A (pages b0, b0 + 2, ...), O columns 0..255; v5's consumer 0 with the
            // stream's next pages.
            for (int i = 0; i < np; i += 2) {
                const bool hasB = i + 1 < np, last = i + 2 >= np;
                const NextPages nx = next_pages(a, cur, nxt, has_next, i, own);
                V3_TR(0, i >> 1, 0);
                own_softmax<OPT>(pol, seg_page(cur, i), sKA, mb, sl2, c, own, s, pa, f0, f1, ps0, ps1);
                named_bar_arrive(BAR_PA, CONSUMERS);
                c.l_run0 = c.l_run0 * f0 + ps0;
                c.l_run1 = c.l_run1 * f1 + ps1;
                rescale_o<OPT>(o, f0, f1);
                issue_pv_rs<OPT>(o, pa, ka, 0);
                wgmma_wait<0>();
                reg_fence(o);
                reg_fence(pa);
                if (nx.a && own == 0) load_boxes(tmap, sKA, fullA, nx.pga, A_BY0);
                if (hasB) {
                    named_bar_sync(BAR_PB, CONSUMERS);
                    adopt_max<OPT>(mb + BM, c, g0, g1);
                    c.l_run0 *= g0;
                    c.l_run1 *= g1;
                    rescale_o<OPT>(o, g0, g1);
                    wait_v_half(fullB, fb, 0);
                    issue_pv_ss<(OPT & OPT_DESC) != 0>(o, kb, 0);
                }
                wgmma_wait<0>();
                reg_fence(o);
                if (nx.b && own == 0) load_boxes(tmap, sKB, fullB, nx.pgb, B_BY0);
                if (nx.a) {
                    if (last) {  // the next segment's Q
                        V8_SEG(seg, 4);
                        wait_parity(qbar, qp);
                        V8_SEG(seg, 5);
                    }
                    issue_qk<0, NBOX, OPT>(s, q_base, ka, fullA, fa ^ 1);
                }
                fa ^= 1;
                fb ^= hasB ? 1u : 0u;
                if (last) break;  // the next S stays in flight through the finish
                wgmma_wait<0>();
                reg_fence(s);
            }
        } else {
            // Owner of B (pages b0 + 1, b0 + 3, ...), O columns 256..511; v5's consumer 1 (SPEC_B)
            // with the stream's next pages, and the next segment's Q load.
            for (int i = 0; i < np; i += 2) {
                const bool hasB = i + 1 < np, last = i + 2 >= np;
                const NextPages nx = next_pages(a, cur, nxt, has_next, i, own);
                const float mp0 = c.m_run0, mp1 = c.m_run1;
                if (hasB) {
                    own_exp<OPT>(seg_page(cur, i + 1), sl2, c, s, pa, g0, g1, ps0, ps1);
                    own_store(pol, seg_page(cur, i + 1), sKB, c, own, pa);
                }
                named_bar_sync(BAR_PA, CONSUMERS);
                // Both S of this pair are done (consumer 0 arrived after its S_A), and no later
                // S of this segment exists: Q is dead.
                if (last && has_next && own == 0) load_q_tma(qmap, sQ, qbar, nxt.r, nxt.m0, a.h);
                const float ma0 = mb[c.r0], ma1 = mb[c.r1];
                f0 = fexp2<OPT>(mp0 - finite_or_zero(ma0));
                f1 = fexp2<OPT>(mp1 - finite_or_zero(ma1));
                if (!hasB || __any_sync(0xffffffffu, ma0 != mp0 || ma1 != mp1)) {
                    c.m_run0 = ma0;  // page A moved a maximum of this warp: P_B against it
                    c.m_run1 = ma1;
                    if (hasB) {
                        own_exp<OPT>(seg_page(cur, i + 1), sl2, c, s, pa, g0, g1, ps0, ps1);
                        store_p(sKB + P_BOX * BOX_BYTES, pa, c.r0, c.c4);
                    }
                }
                V3_TR(1, i >> 1, 0);
                c.l_run0 *= f0;
                c.l_run1 *= f1;
                rescale_o<OPT>(o, f0, f1);
                wait_v_half(fullA, fa, 1);
                issue_pv_ss<(OPT & OPT_DESC) != 0>(o, ka, 1);
                if (hasB) {
                    own_commit(pol, seg_page(cur, i + 1), mb + BM, c);
                    named_bar_arrive(BAR_PB, CONSUMERS);
                }
                wgmma_wait<0>();
                reg_fence(o);
                if (nx.a && own == 0) load_boxes(tmap, sKA, fullA, nx.pga, A_BY1);
                if (hasB) {
                    c.l_run0 = c.l_run0 * g0 + ps0;
                    c.l_run1 = c.l_run1 * g1 + ps1;
                    rescale_o<OPT>(o, g0, g1);
                    issue_pv_rs<OPT>(o, pa, kb, 1);
                }
                wgmma_wait<0>();
                reg_fence(o);
                reg_fence(pa);
                if (nx.b && own == 0) load_boxes(tmap, sKB, fullB, nx.pgb, B_BY1);
                const uint32_t fbn = fb ^ (hasB ? 1u : 0u);  // the next B fill
                if (nx.b) {
                    if (last) wait_parity(qbar, qp);
                    issue_qk<0, NBOX, OPT>(s, q_base, kb, fullB, fbn);
                }
                fa ^= 1;
                fb = fbn;
                if (last) break;
                wgmma_wait<0>();
                reg_fence(s);
            }
        }
        V8_SEG(seg, 1);
        long long fslot = cur.slot;
        if (OPT & OPT_PTAIL) {
            // A cut tail row block: rows m0.. of its partial go to compact slot ts (BM rows), not
            // to row slot * rows + m as a plan's slots do, so store_rows sees slot 0 and a
            // workspace moved back by m0 rows. The slot is read from the piece list here, not
            // carried in Seg: two more live values across the pair loop made ptxas spill.
            const int items = part.r1 + 1, nf = items - items % step;
            const int ts = __shfl_sync(0xffffffffu, (nb & PTAIL_ON) && ci >= nf ? tl[1 + ci - nf].w : -1, 0);
            if (ts >= 0) {
                tseg.partial = 1;
                tseg.ws_o = to.ws_o + ((long long)ts * BM - cur.m0) * DA;
                tseg.ws_lse = to.ws_lse + ((long long)ts * BM - cur.m0);
                fslot = 0;
            }
        }
        finish_pair<OPT>(pol, tseg, 1, 0, seg_rows(a, cur), c, red, sums, seg & 1, fslot, o);
        V8_SEG(seg, 2);
        wgmma_wait<0>();
        reg_fence(s);
        V8_SEG(seg, 3);
        ++seg;
        if (!has_next) break;
        qp ^= 1;
        cur = nxt;
        ci = ni;
    }
    V8_SEG(seg, 0);
    V8_PAIRS(npairs);
    V3_CTA(2);
}

// OPT_PTAIL's merge of the cut tail row blocks, launched after persist_cta with PDL: CTA (jt, y)
// of a (T, BM / 8) grid of 256 threads, warp w merging row y * 8 + w of tail item jt. The pieces'
// slots follow from the ranges persist_cta walked: a cut item's pages lie in the ranges of CTAs
// cf..cl, and CTA c's piece is in slot 2c (its range starts with it), except cf's when the item
// starts inside cf's range (the piece cf's range ends with: 2cf + 1).
__device__ __forceinline__ void tail_combine(const LatentArgs &a, int b, int G, const float *ws_o, const float *ws_lse)
{
    const int nrb = (a.s * a.h + BM - 1) / BM, items = b * nrb, nf = items - items % G, T = items - nf;
    const int jt = (int)blockIdx.x;
    if (jt >= T) return;
    int w, pre;
    tail_sums(a, nrb, nf, T, jt, w, pre);  // (reads the lengths only: before the PDL wait)
    const int n = item_pages(a, nrb, nf + jt), gt = tail_ctas(w, G);
    const int item = nf + jt, r = item / nrb, rr = (int)blockIdx.y * 8 + (int)(threadIdx.x >> 5);
    const int m = (item - r * nrb) * BM + rr;
    const LatentPolicy<DA, DB> pol(&a, r);
    const int lane = threadIdx.x & 31;
    if (m >= pol.rows) return;
    if (n == 0) {
        // No page (a request shorter than the row block's causal start, or empty): no range
        // holds it, so its rows are written here (O = 0, lse = -inf). Not in persist_cta: a
        // branch on a loaded length at its start cost the pair loops their uniform datapath.
        bf16 *out = pol.out_row(m);
#pragma unroll
        for (int k = 0; k < 4; ++k) *reinterpret_cast<uint2 *>(out + 4 * (lane + 32 * k)) = make_uint2(0u, 0u);
        float *lp = pol.lse_at(m);
        if (lp && lane == 0) *lp = -CUDART_INF_F;
        return;
    }
    const int cf = (int)(((long long)(pre + 1) * gt - 1) / w);
    const int cl = min(gt - 1, (int)(((long long)(pre + n) * gt - 1) / w));
    if (cf >= cl) return;  // whole in one range: written by persist_cta
    pdl_wait();  // launched early: the partials are complete only after this
    const int first = 2 * cf + (tail_lo(cf, w, gt) < pre ? 1 : 0);
    float mx = -CUDART_INF_F;
    for (int c = cf; c <= cl; ++c) mx = fmaxf(mx, ws_lse[(long long)(c == cf ? first : 2 * c) * BM + rr]);
    float acc[16];
#pragma unroll
    for (int k = 0; k < 16; ++k) acc[k] = 0.f;
    float l = 0.f;
    if (mx != -CUDART_INF_F) {
        for (int c = cf; c <= cl; ++c) {
            const long long row = (long long)(c == cf ? first : 2 * c) * BM + rr;
            const float wt = __expf(ws_lse[row] - mx);  // (-inf: a piece with no visible token, 0)
            l += wt;
            const float4 *src = reinterpret_cast<const float4 *>(ws_o + row * DA);
#pragma unroll
            for (int k = 0; k < 4; ++k) {
                const float4 v = src[lane + 32 * k];
                acc[4 * k] += wt * v.x;
                acc[4 * k + 1] += wt * v.y;
                acc[4 * k + 2] += wt * v.z;
                acc[4 * k + 3] += wt * v.w;
            }
        }
    }
    const float inv = l > 0.f ? 1.f / l : 0.f;
    bf16 *out = pol.out_row(m);
#pragma unroll
    for (int k = 0; k < 4; ++k)
        *reinterpret_cast<uint2 *>(out + 4 * (lane + 32 * k)) =
            make_uint2(pack_bf16x2(acc[4 * k] * inv, acc[4 * k + 1] * inv),
                       pack_bf16x2(acc[4 * k + 2] * inv, acc[4 * k + 3] * inv));
    float *lp = pol.lse_at(m);
    if (lp && lane == 0) *lp = l > 0.f ? mx + logf(l) : -CUDART_INF_F;
}

}  // namespace seesaw
}  // namespace mla
