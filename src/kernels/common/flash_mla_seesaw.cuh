// What the seesaw versions of the hopper flash_mla share (flash_mla_v3: static split grid,
// flash_mla_v4: the same CTA driven by a device-side split plan): the shared-memory map, the
// QK^T / softmax / PV steps, the reload rule and one CTA's whole schedule as a template. The
// schedule itself is described in src/kernels/hopper/mla/flash_mla/flash_mla_v3/flash_mla_v3.cu.
#pragma once
#include "flash_mla_hopper.cuh"
#include "split_sched.h"

namespace mla {
namespace seesaw {
using namespace mla::fmh;

constexpr size_t OFF_Q = 0;
constexpr size_t OFF_K = OFF_Q + TILE_BYTES;
constexpr size_t OFF_M = OFF_K + (size_t)STAGES * TILE_BYTES;  // float [2][64]: owners' row maxima
constexpr size_t OFF_RED = OFF_M + 2 * BM * sizeof(float);      // float [2][64]: final row sums
constexpr size_t OFF_BAR = OFF_RED + 2 * BM * sizeof(float);    // full[STAGES][NBOX], sums[2]
constexpr size_t SMEM_BYTES = OFF_BAR + (STAGES * NBOX + 2) * sizeof(uint64_t) + 1024;
constexpr size_t MSMEM_BYTES = SMEM_BYTES + 2 * STAGES * sizeof(uint64_t);  // + empty[stage][group]
static_assert(SMEM_BYTES <= SMEM_OPTIN_MAX, "flash_mla_v3 exceeds the 227 KB shared-memory opt-in");
static_assert(OFF_K % 1024 == 0, "swizzled tiles need 1024-byte alignment");

// Named barriers (one arrives, the other waits): 2 = "P_A published" (consumer 0 -> 1), 3 = "P_B
// published" (1 -> 0); 1 = both consumers (Q); 4 + w = consumer w alone.
constexpr int BAR_PA = 2, BAR_PB = 3, BAR_OWN = 4;

// Schedule options of seesaw_cta, a bit each, so that the timeline probe can measure each alone
// (scripts/probe/v3_trace.cu). flash_mla_v3 and v4 use none; flash_mla_v5 all.
//   OPT_EARLY_B: consumer 0 waits for its PV(B) and reloads page B's boxes before it starts the
//     next S_A, which blocks on page A's reload: B's reload no longer waits for A's.
//   OPT_SKIP_RESCALE: O is not multiplied by the rescale factors when they are all 1 in a warp
//     (no row maximum of the warp moved), the common case once a long row has seen its peak.
//   OPT_FAST_SOFTMAX: exponentials by ex2.approx.ftz (no range fix-up around MUFU.EX2), and a
//     mask-free path, with the scale folded into one FFMA, for pages every row of a warp sees
//     in full.
//   OPT_DESC: wgmma descriptors built once per GEMM and moved by one add per instruction
//     (gmma_desc_add) instead of rebuilt from the address (ten uniform instructions per wgmma,
//     issued by every consumer warp: ~360 per page's QK^T).
//   OPT_EARLY_FILL: a segment's first two pages are requested before its Q tile is loaded (by
//     the consumer threads, from global memory), not after: the TMA latency overlaps the Q load.
//   OPT_SPEC_B: consumer 1 computes softmax B as soon as S_B is done, against the running max
//     before page A, instead of waiting for page A's max; once that arrives, a warp whose
//     maxima page A moved redoes its P_B against it (the result is then exactly the in-order
//     one), the others keep theirs (page A left their maxima where they were, so it already
//     is). P_B is published right after PV(A) is issued, and consumer 1 reaches its PV(A) wait,
//     and the reload of page A's right half, ~1000 cycles sooner.
//   OPT_SPEC_B re-measured with OPT_LAZY_MAX (probe, 2026-12-01, same call, v19's kernels
//     without it): b=32,s=16 940 us against 874 (pair 6168 against 5559 cycles), b=32,s=1
//     68.0-68.5 against 67.1-67.3 us. Still needed.
//   Re-measured with OPT_NOMAX (twenty-first session, flash_mla_v37, removed): without it the
//     pair was 5976-6036 SM cycles against 5373-5421 (b=32,s=16 and s=2, probe, same call). Its
//     softmax A alone was shorter (P_A out ~730 against ~860), but PV(A,R)'s wgmmas, issued by
//     consumer 1 while PV(A,L) ran, held its softmax B back: P_B out ~2210-2340 against ~1900.
//     bench-all: 0.2-3.2 % slower at s >= 2 (flush), yet 0.8-3.9 % faster at b=32,s=1 (the merge
//     kernel; one call, 3 passes a method): not settled for that shape.
// Two more were measured and removed (docs/kernels/flash_mla.md, v5): consumer 1 waiting for
// its PV(A) inside softmax B to reload page A's right half sooner (pair +10 %: P_B's
// publication then waits for PV(A)), and consumer 1 issuing PV(B) right behind PV(A) when no
// maximum moved (pair +8 %: three PVs in flight push consumer 0's PV(B) and so page A's reload
// later). A third (P_A in a box of its own after the 216 KB, so that page A's RoPE box could be
// reloaded as soon as S_A was done and the late reload of A was four boxes, not five) made the
// pair 4 % longer (5930-6055 against 5777-5804 cycles, same run) and was removed too.
//   OPT_Q_BATCH (flash_mla_v6): the Q tile is loaded with all of a thread's loads in flight at
//     once (load_q_batched) instead of one round trip per 16 bytes: the probe measured 21000-
//     24000 SM cycles from CTA start to Q loaded with load_q, 12 % of a 32-pair CTA.
//   OPT_STAGED_STORE (flash_mla_v6): the final O goes through shared memory (the two stages are
//     dead by then) and leaves in coalesced 16-byte rows, instead of 8-byte stores that touch
//     eight rows per warp instruction: ~9000 cycles from the loop's exit to the stores issued.
//     Static split grid only (one segment per CTA; the next segment's loads would race it).
// Two softmax options were measured against v6 (probe, b=32 s=16, same run, 2026-11-30) and
// removed: half of P's exponentials by a degree-3 polynomial on the FMA pipe instead of MUFU
// (984 -> 1057 us) and P's bf16 rounding by integer adds and a byte permute instead of F2FP
// (984 -> 998 us). The MUFU and conversion pipes are not what bounds the softmax windows; more
// issued instructions are.
// Prefetching the pages into L2 about a pair before their TMA reload (for s = 1, where a page is
// read by two row blocks only and its reload comes from DRAM) was measured twice and removed:
// one cp.async.bulk.prefetch per 72 KB page from one thread made the pair 9 % longer at s=16 and
// s=1, and prefetch.L2 by line from consumer 1's 128 threads 24-27 % longer (docs/kernels/
// flash_mla.md, v6; why is not measured: the bulk prefetches may queue in the SM's TMA unit
// ahead of the reloads, the line prefetches add 1152 L2 requests per pair per CTA). A third try
// (flash_mla_v13, ninth session, removed) had warp 0 of the idle producer warpgroup prefetch by
// line, 4 pages past the consumers' pair (published in shared memory), only when s * h <= 128:
// b=32,s=1 78.5 vs 70.8 us, b=64,s=1 134.8 vs 128.8, h=16,t=8192 397 vs 301.5 (same call,
// v12/v13/v13/v12 order). No consumer thread issued a prefetch, so it is not the consumers'
// issue slots or release waits; the prefetches themselves cost DRAM or L2 time.
// Two more were measured and removed in the tenth session (docs/kernels/flash_mla.md, v14, v15):
// consumer 1's PVs as four 64-column wgmma groups, each V box reloaded as soon as its group
// retired (the pair 5498 -> 5864 SM cycles at s=16: P_B's publication waits behind 16 wgmma
// issues, and the next S still waits for the last box, which lands ~1800 cycles after its reload
// is issued, pure latency); and the split merge fed by bulk copies into the peer's dead Q tile
// instead of DSMEM loads (finish 15300 -> 18900 cycles: 64 one-KB bulk copies a CTA take ~4400
// cycles to issue, and the merge loop took ~9200 cycles with local loads too, so the DSMEM loads
// were not its cost).
enum : long long {
    OPT_EARLY_B = 1,
    OPT_SKIP_RESCALE = 2,
    OPT_FAST_SOFTMAX = 4,
    OPT_DESC = 8,
    OPT_EARLY_FILL = 16,
    OPT_SPEC_B = 32,
    OPT_Q_BATCH = 64,
    OPT_STAGED_STORE = 128,
    OPT_LAZY_MAX = 1024,
    OPT_MCAST = 2048,
    OPT_MC_NOMULTI = 4096,  // probe only: OPT_MCAST's coupling, each CTA loading its own pages
    OPT_MC_LOCAL = 8192,    // probe only: OPT_MCAST's producer thread, no coupling, own pages
    OPT_Q_TMA = 16384,
    OPT_CMERGE = 32768,
    OPT_CM_LEAN = 65536,
    OPT_LATE_B = 131072,
    OPT_CM_XLOCAL = 262144,  // probe only: OPT_CM_LEAN's loop reads its own copy for every peer's
    OPT_CM_XNOST = 524288,   // probe only: OPT_CM_LEAN's loop without its global stores
    OPT_CM_F16 = 1048576,
    OPT_CM_XBLOAT = 2097152,  // probe only: OPT_CM_F16's code compiled in but never run
    OPT_ONE_FINISH = 4194304,
    OPT_CM_PUSH = 8388608,
    // (16777216 was the removed evict-first pages' bit until the twenty-first session gave it to
    // OPT_NOMAX; 67108864 the removed OPT_CM_L2HALF's, then the removed OPT_LATE_BT's (probe mask
    // 88098047 in the twenty-first session) and OPT_PB_AFTER_PVA's (the same mask in the
    // twenty-second): the twelfth, thirteenth, twenty-first and twenty-second sessions' records
    // use them. From the twenty-third session 67108864 is OPT_TMA_STORE: probe mask 88098047
    // means v35 + OPT_TMA_STORE from then on. It was the last free bit below 2^31; the
    // twenty-fourth session widened the mask to long long, see below.)
    OPT_TMA_STORE = 67108864,  // the one-split finish's bf16 rows leave by TMA tensor stores (flash_mla_v41)
    OPT_NOMAX = 16777216,
    OPT_CM_L2 = 33554432,
    OPT_CM_SENTMAX = 134217728,
    OPT_P_STSM = 536870912,
    OPT_LATE_PSTORE = 268435456,  // with OPT_SPEC_B: consumer 1 stores P_B after issuing PV(A,R)
    OPT_PSTATIC = 512,            // persist_cta: a static walk of the row blocks (flash_mla_v21)
    OPT_PTAIL = 256,              // persist_cta with OPT_PSTATIC: the last round cut by pages (flash_mla_v24)
    OPT_ST16 = 1073741824,        // bf16 rows stored from registers in 16-byte pieces (flash_mla_v21)
    // From the twenty-fourth session the mask is a long long (every kernel's SASS unchanged by
    // the widening, cuobjdump md5 of v3, v22, v24, v35, v40 and v41); the bits from 2^31 up:
    OPT_WALK = 2147483648LL,      // the one-split TMA-store kernel walks row blocks (flash_mla_v42)
    // From the thirtieth session:
    OPT_L2_EVICT = 137438953472LL,  // pages and Q by TMA with an L2 policy hint (v58: the pair; v61: all, l2_page_policy)
    OPT_L2_PLAIN1 = 549755813888LL,  // with OPT_L2_EVICT: no hint at all where a page feeds one row block (flash_mla_v62)
    // From the thirty-first session:
    OPT_MB_SLEEP = 1099511627776LL,  // mbarrier waits with a suspend-time hint (wait_par; flash_mla_v63)
    OPT_FM_QPRE = 2199023255552LL,   // fmpair_cta's walk / parts: the next item's Q requested before the finish (v64)
    // From the forty-third session (the bit was OPT_FM_BPRE's until the thirty-second, see below):
    OPT_EARLY_Q = 4398046511104LL    // static grid: Q and the first block-table entries requested beside the length (flash_mla_v97, v99)
    // (8796093022208, OPT_FM_PBOX's until the thirty-second session (below), was OPT_Q_MCAST's in the
    // forty-third: flash_mla_v98, v97 whose split-merge cluster shared its Q tile by TMA multicast,
    // each CTA issuing half the boxes into both after a cluster barrier at the start. At b=32,s=1 on
    // an H100 the latest first S came no sooner than v97's (6.56-6.69 against 6.69-6.78 us after the
    // start) and the call was 0.4-0.6 us slower by graph replays, level by flush. Measured and
    // removed; code in docs/bench/h100-2026-12-06-s43/v98_q_mcast.patch.)
    // (140737488355328 was OPT_EXP_SPLIT's, own_exp's NOMAX bound tested on the exponents so that
    // the 32 MUFU.EX2 issue back to back (flash_mla_v76); 281474976710656 OPT_EXP_POLY8's and
    // 562949953421312 OPT_EXP_POLY16's, 8 or 16 of the 32 exponentials by a polynomial on the FMA
    // pipe (v77, v78): 0.8-16 % slower, softmax B longer on every probed shape; measured and
    // removed in the thirty-fifth session, code in docs/bench/h200-2026-12-03-s35/v76_exp_split.patch
    // and v77_v78_exp_poly.patch.)
    // (1125899906842624 was OPT_FM_SPLITB's, fmpair_cta's softmax B fast path split between the two
    // warps of each scheduler, warpgroup 0 taking tokens 32-63 through page B's RoPE box
    // (flash_mla_v79): 7-9 % slower at s = 2..16, 13.5 % at b=128,s=2, softmax B ~380 cycles
    // longer (the handoff's barriers, loads and fence cost more than the halved exponentials
    // saved); measured and removed in the thirty-sixth session, code in
    // docs/bench/h200-2026-12-03-s36/v79_splitb.patch.)
    // (2251799813685248 was OPT_FM_PBLATE's and 4503599627370496 OPT_FM_PBLAST's: fmpair_cta's
    // warpgroup 1 storing P_B after PV(B,R)'s issue, before (v80) or after (v81) PV(A,R)'s: the
    // stores then wait for the RS wgmma to read their registers and hold the warp; level to 9 %
    // slower at s = 2..8 and b=128,s=2 (v81 ~1 % faster at s = 16). Measured and removed in the
    // thirty-sixth session, code in
    // docs/bench/h200-2026-12-03-s36/v80_v81_pb_late.patch.)
    // (9007199254740992 was OPT_FM_PBFENCE's: fmpair_cta's P_B proxy fence after PV(B,R)'s issue
    // (flash_mla_v82): level with v68 within 1.2 % (s = 2 and b=128,s=2 slower, s = 8 faster);
    // measured and removed in the thirty-sixth session, code in
    // docs/bench/h200-2026-12-03-s36/v82_pb_fence.patch.)
    // (18014398509481984 was OPT_FM_S8EARLY's, fmpair_cta's next S_A' taking page A's RoPE box
    // before its late boxes 4-7 (flash_mla_v84): level with v68 at s = 2..8; 36028797018963968
    // OPT_FM_BREL's, page B's late group reloaded as PV(B,L) completes with one S_A' box ahead of
    // the wait instead of four (v83 both; v85 v83's pair also at s = 1): the reload left ~600
    // cycles earlier, the pair 2-3 % slower at s = 2..8 (the next S_B completes when the tensor
    // pipe's queue reaches it, not when its boxes land) and, at s = 1 with DRAM-fed pages, the pair's
    // period 5.7-8.4 % shorter but the call only 0-1 % faster than v68's seesaw kernels. Measured and
    // removed in the thirty-seventh session, code in
    // docs/bench/h200-2026-12-03-s37/v83_v84_v85_brel_s8early.patch.)
    // (72057594037927936 was OPT_FM_LOADER's, fmpair_cta's warp 0 of the idle warpgroup kept as a
    // loader that issues page B's late group once warpgroup 0 posts it after PV(B,L), one S_A' box
    // ahead of the wait (flash_mla_v86): 2.5-2.9 % slower at s = 2 (the one-box head, not thread 0's
    // TMA issue, cost v83 its time), 0.6-1.3 % faster than v68's seesaw at s = 1; 144115188075855872
    // OPT_FM_LDA's, page A's early group by the loader too (v87): 0.5-2.0 % slower than v86;
    // 288230376151711744 OPT_FM_APRE's, the walk's next item's first page into stage A during the
    // finish, O staged in stage B (v88, the mirror of v67's OPT_FM_BPRE below; v89 also at s = 1): the
    // wait moved to page B, 0.9 % slower at s = 4 and 8; 576460752303423488 OPT_FM_APRE2's, both
    // next pages during the finish, O stored from registers (v90): level at s = 2, 2.2-2.9 % slower
    // at s = 4, 8 and b=128,s=2 (thirty-ninth session). Measured and removed in the thirty-eighth
    // and thirty-ninth sessions.)
    // (1152921504606846976 was OPT_FM_AMRG's, v90 with one reload site a page (v91); 2305843009213693952
    // OPT_FM_QEARLY's, the next item's Q requested at the last pair's "B's max" sync (v92, on v91);
    // 4611686018427387904 OPT_FM_QL2's, the next item's Q tile prefetched into L2 about four pairs
    // before the item's end (cp.async.bulk.prefetch.tensor; v93 on v92, v94 on v68): v91 and v92
    // 1.4-2.2 % slower at s = 4 and 8 (H200), v93 3-4 % and v94 1-2 % slower (H100); the pair that
    // ends an item kept 7,900-12,700 extra cycles with every next load requested early. Measured and
    // removed in the thirty-ninth and fortieth sessions; v86-v94's code in
    // docs/bench/h100-2026-12-06-s40/v86_v94_apre_qearly_ql2.patch.)
    // (72057594037927936 and 144115188075855872 were then OPT_LSE_LATE's, the staged TMA-store
    // finish storing lse after its proxy fence, and OPT_FM_META's, the walk's next seqlen read an
    // item ahead and an item's first block-table entries without waiting for it (flash_mla_v95
    // both, v96 the first): level with v68 within 0.8 % at s = 2, 4 and 8 (H100). Measured and
    // removed in the forty-first session; code in
    // docs/bench/h100-2026-12-06-s41/v95_v96_lse_late_meta.patch.)
    // (4398046511104 was OPT_FM_BPRE's, fmpair_cta's walk requesting the next item's page B in the
    // finish: flash_mla_v67, 0.5-1.3 % slower; 8796093022208 was OPT_FM_PBOX's, P_A in page A's
    // RoPE box and P_B in the own box: flash_mla_v70, 4 % slower. Both measured and removed in the
    // thirty-second session; code in docs/bench/h200-2026-12-02-s31/v67_bpre_not_run.patch and
    // docs/bench/h200-2026-12-02-s32/v70_pbox.patch.)
    // (17592186044416 was OPT_LD_SPREAD's, a reload's boxes issued by lane 0 of all four warps
    // (flash_mla_v71: the pair's, v72: every kernel's), 35184372088832 OPT_PG_AHEAD's, block-table
    // entries read a pair ahead (v73; v74 both), and 70368744177664 OPT_FM_PAEARLY's, fmpair_cta's
    // P_A published with A's max and PV(A,R) issued before softmax B (v75): 0.2-4.5 % slower at
    // s = 2 and 4, measured and removed in the thirty-fourth session; code in
    // docs/bench/h200-2026-12-03-s34/v71-v74.patch and v75_paearly.patch.)
    // (274877906944 was OPT_FM_Q8's, fmpair_cta's Q RoPE box in registers with P_B in its place,
    // measured and removed in the thirtieth session: flash_mla_v59, 0.4-2.7 % slower; code in
    // docs/bench/h200-2026-12-02-s30/v59_q8_regs.patch.)
    // (4294967296 was OPT_WALK_PRE's, measured and removed in the same session: probe mask
    // 6530548991 = 2235581695 (v41's one-split mask + OPT_WALK) + it.)
    // (8589934592 was OPT_STAG's and 17179869184 OPT_NEXTQ's, measured and removed in the
    // twenty-fifth session: probe masks 8678032639 and 17267967231 are 88098047 + each.)
    // (34359738368 was OPT_QK_R8's and 68719476736 OPT_PA_OWN's, measured and removed in the
    // twenty-eighth session, flash_mla_v52 and v53; see the note below.)
};

// An mbarrier wait of a kernel built with OPT: with OPT_MB_SLEEP the warp sleeps between tries
// (fmh::wait_parity_sleep), without it the plain try_wait loop (the SASS of every version before v63).
template <long long OPT>
__device__ __forceinline__ void wait_par(uint64_t *bar, uint32_t parity)
{
    if constexpr ((OPT & OPT_MB_SLEEP) != 0)
        wait_parity_sleep(bar, parity);
    else
        wait_parity(bar, parity);
}
// The masks of the versions that use them (v3 and v4: none).
constexpr long long OPT_V5 = OPT_EARLY_B | OPT_SKIP_RESCALE | OPT_FAST_SOFTMAX | OPT_DESC | OPT_EARLY_FILL | OPT_SPEC_B;
constexpr long long OPT_V6 = OPT_V5 | OPT_Q_BATCH | OPT_STAGED_STORE;  // flash_mla_v7's main kernel too

//   OPT_LAZY_MAX: a row's running max only moves when a page's max exceeds it by more than
//     LAZY_TH (log2 units), so P may reach 2^LAZY_TH = 256 (exact in bf16's exponent range, and O
//     and the row sum carry the same max, so the result is the same softmax). A moved max costs
//     O's rescale in both consumers and, with OPT_SPEC_B, consumer 1's second softmax B; the
//     source-level profile of v7 at s=16 had that redo in 48 % of the (warp, pair) cases and
//     the rescale in 49 %, on consumer 1's critical path.
constexpr float LAZY_TH = 8.f;
//   OPT_NOMAX (needs OPT_FAST_SOFTMAX's full-page test; pays with OPT_LAZY_MAX, under which the
//     running max rarely moves): a full page whose rows all have a finite running max is
//     exponentiated against that max straight away, without the page's row max (32 FMNMX a
//     thread, two quad-shuffle rounds and the lazy test, the serial part in front of the
//     exponentials). The lazy max only needs P bounded, not the max itself: if every
//     thread's partial row sums (16 p each) stay at most NOMAX_SUM, every p <= 2^16 and the page
//     is kept with the running max unchanged (rescale factors exactly 1); otherwise the warp
//     redoes the page by the full path, so a page whose max runs far past the running max moves
//     it as before. p <= 2^16 keeps O (<= 2^16 * 4096 tokens * |v|) and the row sums far inside
//     fp32, and bf16's relative precision does not depend on the magnitude.
constexpr float NOMAX_SUM = 65536.f;
// Measured and removed (twenty-first session, flash_mla_v36): consumer 0's two block-table loads
// moved from the top of the pair to after its P_A publication, on the guess that own_commit's
// fence (MEMBAR.ALL.CTA + FENCE.VIEW.ASYNC.S in the SASS) waited for them. The probe's pair went
// from 5415-5417 to 5666-5671 cycles at b=32,s=16 (b=32,s=2 the same), P_A out ~80 cycles later,
// bench-all 0.7-3 % slower on the compute-bound rows: the loads, now issued between PV(A,L)'s
// wgmmas, hold up page A's reload; whatever the fence waits for at the top costs less than that.
// Measured and removed (twenty-second session, timeline probe at b=32,s=16 and s=2, four masks
// alternated in one call):
//   flash_mla_v38, OPT_PB_AFTER_PVA: consumer 1 arrived on BAR_PB only after its PV(A,R) was done
//     and page A's late reload issued, so that PV(B,L) would not share the tensor pipe with
//     PV(A,R). The pair went from 5392-5400 to 6500-6527 cycles (+20 %), 840.8-841.4 -> 992.8-
//     993.2 us a launch (s=2: 112.2-112.5 -> 126.2-126.6). PV(A,R) was done ~200 cycles sooner
//     (~2470 against ~2675), but PV(B,L) ran beside PV(B,R) instead, done at ~3600 against ~2880,
//     and S_A' and S_B' were both done only at ~6410-6460 against 5211 and 5747: both pages'
//     reloads came later, not page A's sooner. (The probe's slots are clock reads that ptxas may
//     move past neighbouring instructions, so single slots are approximate.)
//   flash_mla_v39, OPT_EARLY_PST: on OPT_NOMAX's kept path P was stored before the partial-sum
//     vote. P_A went out 140 cycles sooner (723-727 against 863-871) and PV(B,L) was done ~150
//     sooner, but S_A' was not (page A's late boxes land when they land): the pair 5583-5599
//     against 5392-5400, 847.0-848.3 against 840.8-841.4 us a launch (s=2: 113.7-113.8 against
//     112.2-112.5). Shortening softmax A alone no longer shortens the pair.
//   OPT_MCAST (static split grid, h = 128): the two row blocks of one query token (heads 0-63 and
//     64-127, the same pages and causal limits) run as a cluster of two CTAs, and each page is
//     read from L2 once for both: each CTA loads one of the two reload groups of a stage
//     (A_BY0 / B_BY0 by rank 0, A_BY1 / B_BY1 by rank 1) with a multicast TMA into both CTAs. A
//     group is reloaded once its last reader in both CTAs is done: that consumer arrives on the
//     group's "empty" mbarrier in both CTAs (count 2), and a producer thread (warp 0 of the
//     former producer warpgroup) waits on it, arms its own CTA's box barriers for the group and,
//     if the group is its rank's, issues the multicast. Measured reason (TMA page probe): a
//     72 KB page takes ~1130 SM cycles from L2 for one CTA alone but ~2000 when all 132 SMs
//     load at once, and the consumers wait for the reloads at the end of every pair.
//     Two probe-only variants take it apart: OPT_MC_NOMULTI keeps the cross-CTA release but has
//     each CTA load all its groups itself (no multicast); OPT_MC_LOCAL keeps only the producer
//     thread (each CTA releases and loads its own pages, as v9 but through the producer).
//   OPT_Q_TMA (static split grid, no OPT_MCAST): the Q tile comes by TMA (load_q_tma, the tensor
//     map of fmh::q_tmap), issued by one thread at the CTA's start ahead of the first two pages,
//     instead of by the consumers' loads. The timeline probe of v9 measured 7300 (s=1) to 10200
//     (s=16) SM cycles from the consumers' start to Q loaded with load_q_batched, 4-7 % of a CTA
//     that runs 16-32 pairs, while one 72 KB TMA from L2 takes ~1100-2000.
//   OPT_CMERGE (static split grid with OPT_Q_TMA, nsplits >= 2): the splits of a row block run as
//     one cluster (1 x nsplits x 1) and merge their results through distributed shared memory at
//     the end instead of through fp32 partials in global memory and a combine kernel. Each CTA
//     leaves its normalised O halves and row lse in its own shared memory (the staged store's
//     layout), and after a cluster barrier merges rows q, q + nsplits, ... (q = its split) from
//     every CTA's copy and writes them in bf16; a second cluster barrier keeps each CTA alive
//     until its peers have read it. At
//     b=32,s=1 (two splits) v9/v11 spent 6.0 us in the combine launch after a 72.9 us main kernel,
//     and each CTA wrote 128 KB of fp32 partials; here a CTA writes 32 KB of bf16.
//   OPT_CM_LEAN (with OPT_CMERGE): the merge loop with fewer instructions a piece. Each row's
//     output pointer is computed once (one thread a row, next to its weights, into shared memory)
//     instead of per 16-byte piece (a division by h each), the peers' base addresses are mapped
//     once, and the copies loop to CMERGE_MAXS (the host's cluster size), not CM_MAXS. Nsight
//     Compute's source view of v12's merge kernel at b=32,s=1 (2026-11-30): the merge loop,
//     ~200 SASS instructions per iteration, 9 % of the kernel's samples, stalled on "wait"
//     (fixed-latency dependencies) 34-42 % and issuing 14-22 %, with 8 warps a SM; the probe had
//     ~9900 of the finish's ~15100 cycles there, the same with the peers' rows copied into local
//     shared memory first.
//   OPT_LATE_B (with OPT_Q_TMA; probe variant, not in a version yet, NOT YET RUN): the first page
//     B is requested once Q has landed instead of with Q and page A. At b=32,s=1 all 128 CTAs
//     ask DRAM for Q and two pages at once (216 KB each, ~14 MB unique) and the first S is done
//     ~8600 SM cycles in (probe, 2026-11-30); Q and A alone are two thirds of those bytes.
//     Consumer 1's first S_B starts later; whether the pair chain loses that back is the question.
//     Measured (probe, 2026-11-30, b=32,s=1): first S unchanged (8500-9300 cycles), the pairs
//     slower (5900-6100 cycles vs 5670-5750), the kernel 1.0-1.5 us slower. Not used.
//   OPT_CM_F16 (with OPT_CM_LEAN): the rows a peer merges cross the cluster in fp16, half the
//     bytes of fp32, scaled per row (and consumer half) by a power of two that puts the row's
//     largest magnitude just under 2^15, so every value keeps 11 significant bits relative to its
//     row's maximum (an error under 2^-12 of it, a quarter of the final bf16 rounding's); the
//     scale folds into the merge weights. The CTA's own rows stay fp32. v16 at b=32,s=1 (probe,
//     2026-11-30) spent ~9600 cycles in the merge loop with 131 SASS instructions per two pieces,
//     no fewer than v12 with 173 per piece: the loop is bound by the 64 KB each CTA reads from its
//     peer, not by its instructions. Here a thread takes 8 columns a row: two 16-byte loads of its
//     own fp32 copy, one 16-byte load of the peer's fp16. Measured (probe, b=32,s=1): the loop
//     ~4000 cycles, the fp32/fp16 writes before it ~3100 (fp32 alone ~1600).
//   OPT_ONE_FINISH: finish_pair called once after both consumers' branches instead of at the end
//     of each, so the kernel holds one copy of it. The SASS of the split-merge kernel with
//     OPT_CM_F16 went from 161 KB to 124 KB, and with it the ~4000 cycles the larger kernel lost
//     before its first S (probe, b=32,s=1: v16's code with the fp16 path compiled in but never
//     run, 170 KB, was as late and 2.5 us slower). Not applied to v16's code (109 KB with it):
//     72.1-72.3 us against 71.0-71.1 without, within what one probe run can tell apart.
//   OPT_CM_PUSH (with OPT_CMERGE and OPT_ONE_FINISH, 2 splits): the merge pushes instead of
//     pulling. Row r of a row block is merged by split (r >> 3) & 1, so each consumer thread
//     merges one of its two accumulator rows and sends the other, in v17's scaled fp16, to the
//     peer's shared memory by 16-byte stores, with the row's lse and 1 / scale. The own row never
//     leaves the registers: no fp32 copy in shared memory, no DSMEM loads (v17's loop waited on
//     them: ~4200 cycles), no weights phase reading the peer's lse (~1250), and no second barrier
//     to keep a CTA alive for its peer's reads (~1000). A first cluster barrier, arrived on at the
//     loop's exit and waited on only before the stores, says that the peer's stages are free.
//     v17's finish at b=32,s=1 took ~10900 cycles (probe, 2026-11-30); this one ~8700 (probe,
//     2026-12-01: scale ~650, push ~3000 at DSMEM's ~11 bytes a cycle, second barrier ~1250,
//     merge ~1900, stores ~900).
//   OPT_CM_L2 (with OPT_CM_PUSH): the sent rows go through a global workspace (L2) instead of
//     the peer's shared memory: each CTA writes its 32 KB of scaled fp16 rows and their lse and
//     1 / scale to its own slice (CM_WS_CTA bytes; coalesced 16-byte stores, 512 contiguous bytes
//     a warp instruction), arrives on the cluster barrier with release semantics, and after the
//     acquire reads its peer's slice from L2 with all eight 16-byte loads of a thread in flight.
//     The first cluster barrier goes (nothing is written into the peer's stages). Reason (probe,
//     2026-12-01): the DSMEM push moved ~11 bytes a cycle (~3000 cycles for 32 KB) while a CTA
//     pulls pages from L2 at 36-65 bytes a cycle (TMA probe). Measured (probe, b=32,s=1, calls 2
//     and 4 of 2026-12-01, alternated with v18's merge kernel): the finish ~8700 -> ~6600-7000
//     SM cycles, the kernel 0.5-0.9 us faster. Two other cuts were measured and dropped: consumer
//     1's rows through L2 and consumer 0's through DSMEM at once (both barriers kept): 73.6 us
//     against 68.6; and the peer's pieces brought by cp.async into the PU_RECV slot (so that the
//     merge read shared memory as with DSMEM): the finish back at ~8800-9150 cycles.
//   OPT_CM_SENTMAX (with OPT_CM_PUSH): the scale step takes the maximum of the sent row only (64
//     FMNMX a thread instead of both rows' 128). Measured alone: no change (the scale step ~650
//     cycles either way; ptxas had already dropped the unused row's chain in each of the two
//     copies it makes of the push, one per split).
//   OPT_P_STSM: P goes to its box by four stmatrix.x4 a warp (one 16-byte row address a lane)
//     instead of 16 STS.32 with a swizzled address each. Nsight Compute, v19 at b=32,s=16
//     (2026-12-01): a softmax is 288 warp instructions a page, ~60 of them integer and index
//     work, mostly those addresses; the softmax windows are issue- and latency-bound ("wait" 37-
//     43 %, selected 24-28 %), and they are on the page chain. Measured (2026-12-01, flash_mla_v20's
//     merge kernel): 66.0-66.6 us a launch against 66.9-67.1 in the timeline probe (b=32,s=1), but
//     68.0 against 68.2 in eleven bench-all passes and equal in the CLI's A/B: within the noise.
//   OPT_LATE_PSTORE (with OPT_SPEC_B): consumer 1 keeps its speculative P_B in registers through
//     the P_A barrier, issues PV(A,R), and only then stores P_B, so that page A's reload is asked
//     for sooner. The timeline probe (trace points compiled in) gave 1.5 % at b=32,s=16 in a burst
//     and 0.9 % sustained; the uninstrumented kernel (flash_mla_v20's one-split kernel) was 0.8-1.4 %
//     slower than v19's through the library (CLI A/B, s=16 and s=64) and slower in 14 of 15 bench
//     rows. With OPT_P_STSM as well, neither gain held even in the probe.
//   OPT_WALK (with OPT_Q_TMA, OPT_TMA_STORE and OPT_ONE_FINISH; one split; flash_mla_v42): the CTA
//     walks whole row blocks, items x, x + G, ... of the b * row-block list in the static grid's
//     launch order (G = gridDim.x = min(items, SMs); the int argument is b), instead of one CTA a
//     row block. Between two items the consumers sync once (named barrier 1: both halves' bulk
//     stores have read stage 0) and the next item starts as a new CTA would, without the CTA's
//     exit, launch, barrier set-up and register hand-over. By the timeline probe (twenty-third
//     session) a one-split CTA spends ~11000 SM cycles from its start to its first S and ~4500
//     in its finish, of ~190000; the fifteenth session's persistent kernel (persist_cta, v22)
//     cut that to ~4200 a row block but its pairs ran 2.5 % slower in their own loop. Here the
//     pairs are seesaw_cta's.
//   Measured and removed (twenty-fourth session, flash_mla_v43 and the first build of v42):
//     OPT_WALK_PRE, the next item's loads started before this one ended. Consumer 1 issued the
//     next Q at its loop's exit (both last S done) and the next page B into stage 1 (the bf16
//     finish stages in stage 0 only) either at consumer 0's row-sum wait or at the end of its own
//     finish. The next item's first S came ~4000 cycles after its top instead of ~5200-8900, but
//     the pairs of both builds ran slower than the plain walk's: timeline probe, b=32,s=16,
//     direct launches, 833.8 / 872.6-873.4 us against 822.9 / 835.9-836.3 (pairs 5439 / 5740
//     against 5331-5357 cycles); sustained (5 s, 690 W) 956.0-957.9 against 924.4-925.6 us, s=4
//     248.5-248.6 against 240.4-240.7. The pair loops' code was the same length (1466 / 2110
//     against 1459 / 2105 instructions); why their pairs were slower is not measured.
//   Measured and removed (twenty-fifth session, flash_mla_v45): OPT_STAG, page B half a pair
//     behind page A, so that the pipe would run QK(A_k) | PV(B_k-1) | PV(A_k) | QK(B_k) |
//     QK(A_k+1) and each softmax would have the other page's GEMMs under it (no speculative
//     softmax B: the max runs A_k -> B_k -> A_k+1). Correct (test_kernels full grid 78 passed),
//     no serialised wgmma once every path waited before O's rescale (C7515 otherwise: an S_B left
//     open into the loop, a wait skipped on the i == 0 path), but the pair ran 6200 cycles against
//     5440 (probe, b=32,s=16 and s=2) and the library 3.7-5.3 % slower (CLI A/B, s=2..64 and
//     b=128,t=8192,s=2): a stage's reload now had one GEMM (1024-1152 cycles) to land in, against
//     ~2000-2250 in seesaw's order, and it takes ~1800-2200 under load. With two stages the pair is
//     set by the reload rings as much as by the softmax windows.
//   Measured and removed (twenty-fifth session, flash_mla_v46): OPT_NEXTQ, the idle producer
//     warpgroup's thread 0 sleeping (__nanosleep, polling the finish's row-sum barrier) until ~6
//     pairs before its CTA's end, then asking L2 for the Q tile of the CTA one %nsmid later (and
//     its first two pages for a request's row block 0; cp.async.bulk.prefetch.tensor), so that a
//     later wave's start would not read Q from DRAM. Consumer 0's loop unchanged (1.000 by
//     sass_loops --compare), consumer 1's 0.929 alike (integer instructions). No gain: CLI A/B
//     (6 rounds) s=16 922.6 against 920.8 us, s=4 230.7 / 231.2, b=128,t=8192,s=2 953.5 / 952.2,
//     s=64 3635.9 / 3629.2; probe 842-844 against 838-841 us at s=16. The fifth prefetch of this
//     kernel without a gain (v7, v13, v23, v31 above).
//   Measured and removed (twenty-eighth session, flash_mla_v52 / v53): OPT_QK_R8, the next S_B
//     taking page B's boxes 0-3, 8, 4-7 (the RoPE box, reloaded early with 0-3, before the late
//     group); and OPT_PA_OWN on top, P_A in an 8 KB box of its own after the barriers (the whole
//     227 KB opt-in), so that page A's RoPE box came back with boxes 0-3 after PV(A,L), page A's
//     late reload was boxes 4-7 (32 KB, not 40) and the next S_A took box 8 before them: the
//     seventeenth session's first item, whose first build (v26, on v19) hung with two or more
//     pages a CTA. This build did not hang: CLI checks at splits=1 (walk, varlen, h=16, one page,
//     no mask, b=32,s=16), test_kernels full grid 156 passed and small grid at splits=1 22,
//     memcheck and synccheck 0 errors. v52's pair loops were v47's opcode for opcode (only box
//     addresses and barrier indices differ); v53's 0.74-0.90 alike. No gain: FlashMLA beside both
//     (flashmla_same_call.py, flush, first-10 medians, two interleaved repetitions of 3 passes)
//     b=32,s=16 850.0 / 850.1 against v47's 851.3 / 852.0 us, s=4 226.0 / 226.9 against 226.7 /
//     226.8, b=128,t=8192,s=2 863.5 / 875.9 against 882.1 / 860.7. Page A's late reload is not
//     what closes the pair. Code: docs/bench/h200-2026-12-02-s28/v52_v53_pa_own.patch.
//   The mask-free softmax's row max and row sums as trees (depth 4, four partial sums) were
//     measured and removed (probe, 2026-12-01): under 0.5 % alone, and they cancelled the late
//     store's gain; the chains are ~40 cycles of a ~1000-1250-cycle softmax.
//   The pages' TMA loads with an L2 evict-first policy (createpolicy.fractional.L2::evict_first,
//     .L2::cache_hint) were measured and removed (2026-12-01, probe, same call): at b=32,s=1 the
//     query stayed in L2 between calls and CTA (0,0,0) reached its first S ~1500-2000 cycles
//     sooner, but the kernel was no faster (68.3 / 68.3 us a launch against 68.4 / 68.2; the mean
//     CTA 63.7-64.7 us against 63.0-63.3), and at b=32,s=16 it was 1 % slower (868-874 against
//     861 us, the mean CTA 107.6 against 106.2-106.5 us): pages marked first to go are evicted
//     before the other row blocks of their request have read them.
//   The next wave's Q tile prefetched into L2 was measured and removed (fifteenth session,
//     2026-12-01, flash_mla_v23, not landed): once its own Q had landed, one thread of v19's
//     one-split CTA issued nine cp.async.bulk.prefetch.tensor.4d.L2 boxes for the CTA one %nsmid
//     further in launch order, since a wave's 132 CTAs start together and read Q from DRAM
//     (~8900-10300 SM cycles to Q at b=32,s=16). Eight bench-all passes, same call, against v19:
//     slower on 13 of the 16 rows, by 2-4 % (s=16 978.1 against 952.7 us, s=128 7614.4 against 7382.3,
//     b=128,t=8192,s=2 1030.7 against 986.5). Not measured: why; the prefetches land while the
//     current wave still loads its first pages. A third prefetch that cost more than it saved.
template <long long OPT>
__device__ __forceinline__ float next_max(float m_run, float page_max)
{
    if (OPT & OPT_LAZY_MAX) return page_max > m_run + LAZY_TH ? page_max : m_run;  // -inf + 8 = -inf
    return fmaxf(m_run, page_max);
}

template <long long OPT>
__device__ __forceinline__ float fexp2(float x)
{
    if (OPT & OPT_FAST_SOFTMAX) {
        float y;
        asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));  // 2^-inf = +0, as exp2f
        return y;
    }
    return exp2f(x);
}

// O times the rescale factors, skipped (OPT_SKIP_RESCALE) when every factor of the warp is 1:
// exp2(m - m) is exactly 1, so skipping changes nothing. Warp-uniform; no wgmma on o in flight.
template <long long OPT>
__device__ __forceinline__ void rescale_o(float (&o)[128], float f0, float f1)
{
    if (!(OPT & OPT_SKIP_RESCALE) || __any_sync(0xffffffffu, f0 != 1.f || f1 != 1.f)) scale_o(o, f0, f1);
}

// Timeline probe (scripts/probe/v3_trace.cu builds this file with MLA_V3_TRACE): SM clock at
// fixed points of each pair, for CTA (0, 0, 0), one thread per consumer. Not in the library.
#ifdef MLA_V3_TRACE
__device__ long long g_v3_trace[2][64][8];
// per CTA: SM id, globaltimer at start / end, SM clock at start / end (their ratio: the clock)
__device__ unsigned long long g_v3_cta[1 << 16][5];
// CTA (0, 0, 0), consumer 0's thread 0: SM clock at start, after the Q load, at the loop's exit
// and after the final store (the pairs' own points are in g_v3_trace).
__device__ long long g_v3_mark[4];
__device__ __forceinline__ unsigned long long v3_gtime()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
// The marks' clock reads are probe_clock64 (ptx.cuh): a mark right after a bar.sync reads the
// barrier's release. Marks before the forty-second session read the arrival.
__device__ __forceinline__ unsigned v3_cta_id() { return blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z); }
__device__ __forceinline__ void v3_cta_mark(int slot)
{
    const unsigned id = v3_cta_id();
    if (id < (1u << 16)) {
        unsigned sm;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
        g_v3_cta[id][0] = sm;
        g_v3_cta[id][slot] = v3_gtime();
        g_v3_cta[id][slot + 2] = clock64();
    }
}
#define V3_CTA(slot) \
    do {             \
        if (threadIdx.x == 128) v3_cta_mark(slot); \
    } while (0)
// Per CTA: globaltimer at consumer 0's loop exit (forty-second session). With the split-merge
// kernel the CTA's end (g_v3_cta) comes after the cluster's merge, which waits for both CTAs of
// the cluster; the loop exits show how far apart the two splits of a row block finish their pages,
// and so what balancing pages inside the cluster could buy at most.
__device__ unsigned long long g_v3_lx[1 << 16];
#define V3_LX()                                                                                        \
    do {                                                                                               \
        if (threadIdx.x == 128 && v3_cta_id() < (1u << 16)) g_v3_lx[v3_cta_id()] = v3_gtime();          \
    } while (0)
// Per CTA: globaltimer once consumer 0's first S is done (forty-third session): is a late loop
// exit a late start (the first loads' burst) or a slow walk?
__device__ unsigned long long g_v3_fs[1 << 16];
#define V3_FS()                                                                                        \
    do {                                                                                               \
        if (threadIdx.x == 128 && v3_cta_id() < (1u << 16)) g_v3_fs[v3_cta_id()] = v3_gtime();          \
    } while (0)
#define V3_MK(k)                                                                                \
    do {                                                                                        \
        if (tid == 128 && blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0) g_v3_mark[k] = probe_clock64(); \
    } while (0)
// OPT_CMERGE's finish, thread 0 of consumer w of CTA (0, y, 0), y = 0, 1 (the two splits of row
// block 0): SM clock at its points (0 entry, 1 halves written, 2 after the first cluster barrier,
// 3 weights done, 4 merged rows stored, 5 after the second barrier; 6 finish_pair's entry, before
// the row-sum exchange). The one-split kernels' staged store (store_rows_staged) uses 0-3 of CTA
// (0, 0, 0): 0 its entry (row sums exchanged), 1 its half written to shared memory, 2 after its
// 128 threads' barrier, 3 its rows' global stores issued.
__device__ long long g_v3_fin[2][2][8];
#define V3_FIN(k)                                                                                     \
    do {                                                                                              \
        if (own == 0 && blockIdx.x == 0 && blockIdx.z == 0 && blockIdx.y < 2) g_v3_fin[blockIdx.y][c.w][k] = probe_clock64(); \
    } while (0)
// Box landings (probe only, g_v3_boxpoll set by the host): warp 0 of the idle producer
// warpgroup of CTA (0, 0, 0) watches the 18 full barriers, one lane each (lanes 0-8 page A's
// boxes, 9-17 page B's), and records the SM clock at which each phase of each completes, that is
// when the box's TMA load of pair k has landed. A non-blocking test with a short sleep, so that
// the warp takes few issue slots from the consumers' warps on its scheduler. The static split
// grid's one-split kernels only (one segment a CTA). First run in the twenty-third session
// (docs/kernels/flash_mla.md): the watched CTA's pair is ~4.5 % longer (5455 -> 5700 cycles at
// b=32,s=16; the launch 0.2 %), and the times are upper bounds (the lanes of the warp record
// together). At s=16 page A's late boxes (4-8) had landed ~1800 cycles before QK(A') was issued
// and page B's ~1500 before QK(B'): the reloads are not what sets the pair there. At s=2 (DRAM-fed)
// some pairs' B' boxes landed just as QK(B') was issued.
__device__ int g_v3_boxpoll;
__device__ long long g_v3_box[64][18];
__device__ __forceinline__ bool v3_test_parity(const uint64_t *bar, uint32_t parity)
{
    uint32_t done;
    asm volatile("{\n.reg .pred p;\nmbarrier.test_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                 "selp.u32 %0, 1, 0, p;\n}\n"
                 : "=r"(done)
                 : "r"(smem_addr(bar)), "r"(parity)
                 : "memory");
    return done != 0;
}
__device__ __noinline__ void v3_box_poll(const uint64_t *full, int np)
{
    const int l = threadIdx.x & 31;
    if (l >= 18) return;
    const int nph = l < 9 ? (np + 1) / 2 : np / 2;
    const uint64_t *bar = full + l;  // fullA[0..8], then fullB[0..8]
    for (int k = 0; k < nph && k < 64; ++k) {
        while (!v3_test_parity(bar, (uint32_t)(k & 1))) __nanosleep(32);
        g_v3_box[k][l] = clock64();
    }
}
#define V3_TR(w, pair, slot)                                                                  \
    do {                                                                                       \
        if (own == 0 && blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0 && (pair) < 64) \
            g_v3_trace[w][pair][slot] = probe_clock64();                                          \
    } while (0)
// OPT_WALK: CTA 0's items (the first 16), thread 128: SM clock at 0 the item's top (past the barrier
// between items), 1 its Q landed, 2 its first S_A done, 3 consumer 0's loop exit, 4 its finish done.
// (The same points of a later wave's static CTA, recorded by its linear id, made the probe's
// static kernel's pairs ~4 % longer, 5671 against 5445 cycles: the id's registers, hoisted. Its
// one run, twenty-fourth session, b=32,s=16 CTA 200: Q landed 5331 cycles after its top, first
// S_A 8823; s=4: 4017 and 7564.)
__device__ long long g_v3_wk[16][5];
#define V3_WK(item, slot)                                                                        \
    do {                                                                                         \
        if (WK && tid == 128 && blockIdx.x == 0 && (item) < 16) g_v3_wk[item][slot] = probe_clock64(); \
    } while (0)
#else
#define V3_WK(item, slot) \
    do {                  \
    } while (0)
#define V3_FIN(k) \
    do {          \
    } while (0)
#define V3_MK(k) \
    do {         \
    } while (0)
#define V3_TR(w, pair, slot) \
    do {                     \
    } while (0)
#define V3_CTA(slot) \
    do {             \
    } while (0)
#define V3_LX() \
    do {        \
    } while (0)
#define V3_FS() \
    do {        \
    } while (0)
#endif

// The Q tile of row block m0 of request r by TMA: nine 64-dim boxes of the 4-D tensor map
// [b][s][h][576] (fmh::q_tmap), each box 64 (s, h) rows deep: {64 dims, h rows, 64/h
// tokens} when h divides 64, {64 dims, 64 heads, 1 token} when 64 divides h. Rows past the
// request's s tokens are zero-filled (and masked: their limit is 0).
// OPT_L2_EVICT (flash_mla_v58's pair, v61's kernels): TMA loads with an L2 evict-first policy,
// as FlashMLA loads its pages and Q. A page is read by the row blocks of its request at about the
// same time and never again in the call. The reading it was built on (not measured): evict-first
// lines are the first replaced, so the call streams through few lines of each L2 set and leaves
// the rest (the previous kernel's lines, dirty ones included, otherwise written back during the
// call) in place. Measured: b=32,s=2 3.5 % faster, the compute-bound rows level (devlog, s30).
__device__ __forceinline__ uint64_t l2_evict_first()
{
    uint64_t pol;
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
    return pol;
}
__device__ __forceinline__ void tma_load_2d_hint(uint32_t dst, const CUtensorMap *map, int c0, int c1, uint32_t bar,
                                                 uint64_t pol)
{
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint"
        " [%0], [%1, {%2, %3}], [%4], %5;" ::"r"(dst),
        "l"(map), "r"(c0), "r"(c1), "r"(bar), "l"(pol)
        : "memory");
}
__device__ __forceinline__ void tma_load_4d_hint(uint32_t dst, const CUtensorMap *map, int c0, int c1, int c2, int c3,
                                                 uint32_t bar, uint64_t pol)
{
    asm volatile(
        "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint"
        " [%0], [%1, {%2, %3, %4, %5}], [%6], %7;" ::"r"(dst),
        "l"(map), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(bar), "l"(pol)
        : "memory");
}

// The policy of a seesaw kernel's loads under OPT_L2_EVICT (flash_mla_v61): evict-first where a
// page feeds two or more row blocks of its request (s * h > 64), the default (evict-normal)
// where it feeds one (h = 16 at s <= 4). Measured (thirtieth session, flash_mla_v60, evict-first
// everywhere, same call as v56): b=64,s=1 124.1 against 125.7 us and b=32,s=2 114.6 against
// 118.9, but h=16 4.4-4.8 % slower (t=8192: 311.0 against 297.9). Why one reader loses is not
// measured.
// OPT_L2_PLAIN1 (flash_mla_v62): 0 there instead, and the loads carry no hint (v61's evict-normal
// hint was still 1.4 % slower than no hint on both h=16 rows, same call).
template <long long OPT>
__device__ __forceinline__ uint64_t l2_page_policy(const LatentArgs &a)
{
    if ((long long)a.s * a.h > BM) return l2_evict_first();
    if constexpr ((OPT & OPT_L2_PLAIN1) != 0) return 0;
    uint64_t pol;
    asm volatile("createpolicy.fractional.L2::evict_normal.b64 %0, 1.0;" : "=l"(pol));
    return pol;
}

// Q by TMA; with OPT_L2_EVICT under the L2 policy `pol` (l2_evict_first, l2_page_policy), and
// with OPT_L2_PLAIN1 too, without a hint where pol is 0.
__device__ __forceinline__ void q_boxes_plain(const CUtensorMap *qmap, char *sQ, uint64_t *qbar, int r, int m0, int h)
{
#pragma unroll
    for (int c = 0; c < NBOX; ++c) {
        const int32_t crd[4] = {c * 64, m0 % h, m0 / h, r};
        ptx::cp_async_bulk_tensor(ptx::space_cluster, ptx::space_global, sQ + c * BOX_BYTES, qmap, crd, qbar);
    }
}
template <long long OPT = 0>
__device__ __forceinline__ void load_q_tma(const CUtensorMap *qmap, char *sQ, uint64_t *qbar, int r, int m0, int h,
                                           uint64_t pol = 0)
{
    ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, qbar,
                                   (uint32_t)TILE_BYTES);
    if constexpr ((OPT & OPT_L2_EVICT) != 0) {
        if ((OPT & OPT_L2_PLAIN1) && pol == 0) {
            q_boxes_plain(qmap, sQ, qbar, r, m0, h);
        } else {
#pragma unroll
            for (int c = 0; c < NBOX; ++c)
                tma_load_4d_hint(smem_addr(sQ + c * BOX_BYTES), qmap, c * 64, m0 % h, m0 / h, r, smem_addr(qbar),
                                 pol);
        }
    } else {
        q_boxes_plain(qmap, sQ, qbar, r, m0, h);
    }
}

// S(64 x 64) (+)= Q . K^T over boxes [C0, C1) of one page, each issued as soon as its box has
// landed; committed, not waited. C0 == 0 starts a new S.
template <int C0, int C1, long long OPT = 0>
__device__ __forceinline__ void issue_qk(float (&s)[32], uint32_t q_base, uint32_t k_base, uint64_t *full,
                                         uint32_t parity)
{
    wgmma_fence();
    const uint64_t qd = gmma_desc_sw128(q_base, 16, 1024), kd = gmma_desc_sw128(k_base, 16, 1024);
#pragma unroll
    for (int c = C0; c < C1; ++c) {
        wait_par<OPT>(&full[c], parity);
#pragma unroll
        for (int k4 = 0; k4 < 4; ++k4) {
            const uint32_t off = c * BOX_BYTES + k4 * 32;
            if (OPT & OPT_DESC)
                wgmma_m64n64k16_ss(s, gmma_desc_add(qd, off), gmma_desc_add(kd, off), c + k4 > 0);
            else
                wgmma_m64n64k16_ss(s, gmma_desc_sw128(q_base + off, 16, 1024), gmma_desc_sw128(k_base + off, 16, 1024),
                                   c + k4 > 0);
        }
    }
    wgmma_commit();
}

// TMA of the boxes in `mask` of one page into a stage (one thread). Each box completes on its
// own barrier; the caller is the last reader of those boxes, so no "empty" handshake is needed.
template <long long OPT = 0>
__device__ __forceinline__ void load_boxes(const CUtensorMap *tmap, char *stage, uint64_t *full, int page,
                                           unsigned mask, uint64_t pol = 0)
{
#pragma unroll
    for (int c = 0; c < NBOX; ++c) {
        if (!(mask >> c & 1u)) continue;
        ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &full[c],
                                       (uint32_t)BOX_BYTES);
        if constexpr ((OPT & OPT_L2_EVICT) != 0) {
            if ((OPT & OPT_L2_PLAIN1) && pol == 0) {
                const int32_t crd[2] = {c * 64, page * BN};
                ptx::cp_async_bulk_tensor(ptx::space_cluster, ptx::space_global, stage + c * BOX_BYTES, tmap, crd,
                                          &full[c]);
            } else {
                tma_load_2d_hint(smem_addr(stage + c * BOX_BYTES), tmap, c * 64, page * BN, smem_addr(&full[c]), pol);
            }
        } else {
            const int32_t crd[2] = {c * 64, page * BN};
            ptx::cp_async_bulk_tensor(ptx::space_cluster, ptx::space_global, stage + c * BOX_BYTES, tmap, crd, &full[c]);
        }
    }
}

// Mask (causal / length) and scale S into log2 units; row maxima of this thread's rows over
// the quad. Accumulator layout: s[4n + e] is (row r0, token 8n + 2c4 + e), s[4n + 2 + e] row r1.
__device__ __forceinline__ void page_rowmax(const float (&acc)[32], float (&s)[32], int tok0, int lim0, int lim1,
                                            float sl2, float &mx0, float &mx1)
{
    mx0 = mx1 = -CUDART_INF_F;
#pragma unroll
    for (int n = 0; n < 8; ++n)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
            const int tk = tok0 + n * 8 + e;
            s[4 * n + e] = tk < lim0 ? acc[4 * n + e] * sl2 : -CUDART_INF_F;
            s[4 * n + 2 + e] = tk < lim1 ? acc[4 * n + 2 + e] * sl2 : -CUDART_INF_F;
            mx0 = fmaxf(mx0, s[4 * n + e]);
            mx1 = fmaxf(mx1, s[4 * n + 2 + e]);
        }
    quad_max2(mx0, mx1);
}

// P = 2^(S - mu) as bf16 wgmma A fragments: k-step kk (tokens 16kk..16kk+15) is
// pa[4kk .. 4kk+3] = {(r0, 8 first), (r1, 8 first), (r0, 8 second), (r1, 8 second)}. Also the
// thread's partial row sums of P (in fp32, as v1 sums them).
// With sl2 != 1 (the mask-free path) s is the raw accumulator and 2^(s * sl2 - mu) one FFMA.
template <long long OPT>
__device__ __forceinline__ void page_exp(const float (&s)[32], float mu0, float mu1, uint32_t (&pa)[16],
                                         float &ps0, float &ps1, float sl2 = 1.f)
{
    ps0 = ps1 = 0.f;
#pragma unroll
    for (int n = 0; n < 8; ++n) {
        const float p0 = fexp2<OPT>(fmaf(s[4 * n], sl2, -mu0)), p1 = fexp2<OPT>(fmaf(s[4 * n + 1], sl2, -mu0));
        const float p2 = fexp2<OPT>(fmaf(s[4 * n + 2], sl2, -mu1)), p3 = fexp2<OPT>(fmaf(s[4 * n + 3], sl2, -mu1));
        ps0 += p0 + p1;
        ps1 += p2 + p3;
        pa[4 * (n >> 1) + 2 * (n & 1)] = pack_bf16x2(p0, p1);
        pa[4 * (n >> 1) + 2 * (n & 1) + 1] = pack_bf16x2(p2, p3);
    }
}

// P (64 x 64 bf16, swizzled like a TMA box) for the other consumer's PV.
__device__ __forceinline__ void store_p(char *sP, const uint32_t (&pa)[16], int r0, int c4)
{
#pragma unroll
    for (int n = 0; n < 8; ++n) {
        const int col = 8 * n + 2 * c4;
        *reinterpret_cast<uint32_t *>(sP + sw128(r0, col)) = pa[4 * (n >> 1) + 2 * (n & 1)];
        *reinterpret_cast<uint32_t *>(sP + sw128(r0 + 8, col)) = pa[4 * (n >> 1) + 2 * (n & 1) + 1];
    }
}

// store_p by stmatrix (OPT_P_STSM): k-step kk's four matrices are pa[4kk..4kk+3] (rows 0-7 and
// 8-15 of the warp's 16, columns 16kk.. and 16kk + 8..), the A fragments of issue_pv_rs. Lane l
// addresses matrix j = l / 8, row 8 (j & 1) + l % 8 of the warp's rows, 16-byte chunk
// 2kk + (j >> 1) of it, swizzled by the row's low three bits (sw128): chunk ^ (l & 7), and since
// 2kk is even, (2kk) ^ ((j >> 1) ^ (l & 7)).
__device__ __forceinline__ void store_p_stsm(char *sP, const uint32_t (&pa)[16], const Consumer &c)
{
    const int j = c.lane >> 3, row = (c.r0 - (c.lane >> 2)) + ((j & 1) << 3) + (c.lane & 7);
    const uint32_t base = smem_addr(sP) + (uint32_t)row * 128, y = (uint32_t)(((j >> 1) ^ (c.lane & 7)) << 4);
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) stmatrix_x4(base + ((32u * kk) ^ y), pa[4 * kk], pa[4 * kk + 1], pa[4 * kk + 2], pa[4 * kk + 3]);
}
template <long long OPT>
__device__ __forceinline__ void store_p_opt(char *sP, const uint32_t (&pa)[16], const Consumer &c)
{
    if (OPT & OPT_P_STSM)
        store_p_stsm(sP, pa, c);
    else
        store_p(sP, pa, c.r0, c.c4);
}

// O[:, 256w..) += P . V[:, 256w..) with P from registers / from the page's P box.
template <long long OPT = 0>
__device__ __forceinline__ void issue_pv_rs(float (&o)[128], const uint32_t (&pa)[16], uint32_t k_base, int w)
{
    reg_fence(o);
    wgmma_fence();
    const uint64_t vd = gmma_desc_sw128(k_base + 4 * w * BOX_BYTES, BOX_BYTES, 1024);
#pragma unroll
    for (int kk = 0; kk < BN / 16; ++kk) {
        const uint32_t a4[4] = {pa[4 * kk], pa[4 * kk + 1], pa[4 * kk + 2], pa[4 * kk + 3]};
        if (OPT & OPT_DESC)
            wgmma_m64n256k16_rs<1>(o, a4, gmma_desc_add(vd, kk * 16 * 128), 1);
        else
            wgmma_m64n256k16_rs<1>(o, a4, gmma_desc_sw128(k_base + 4 * w * BOX_BYTES + kk * 16 * 128, BOX_BYTES, 1024),
                                   1);
    }
    wgmma_commit();
}

// The V half a non-owner reads (boxes 4w..4w+3) must have landed: wait on their barriers too
// (already complete by then; the wait makes the TMA writes visible to this warpgroup).
template <long long OPT = 0>
__device__ __forceinline__ void wait_v_half(uint64_t *full, uint32_t parity, int w)
{
#pragma unroll
    for (int c = 0; c < 4; ++c) wait_par<OPT>(&full[4 * w + c], parity);
}

// Softmax of an owned page, first half: from S to P in registers (bf16 A fragments) and the
// thread's partial row sums; the running max moves to the page's and O's rescale factors are
// returned. `j` is the page index.
template <long long OPT>
__device__ __forceinline__ void own_exp(int j, float sl2, Consumer &c, const float (&acc)[32], uint32_t (&pa)[16],
                                        float &f0, float &f1, float &ps0, float &ps1)
{
    // The accumulator is only read: writing it while the other PV group is open would make
    // ptxas serialise every wgmma (C7515).
    float mn0, mn1, mu0, mu1;
    const bool full = (OPT & OPT_FAST_SOFTMAX) && sl2 > 0.f && __all_sync(0xffffffffu, (j + 1) * BN <= min(c.lim0, c.lim1));
    if ((OPT & OPT_NOMAX) && full &&
        __all_sync(0xffffffffu, c.m_run0 > -CUDART_INF_F && c.m_run1 > -CUDART_INF_F)) {
        // P against the running max; kept unless a partial sum could hide a p > 2^16 (or is
        // inf / NaN: the comparison is false). Both votes are warp-uniform, nothing here
        // touches O or a wgmma.
        page_exp<OPT>(acc, c.m_run0, c.m_run1, pa, ps0, ps1, sl2);
        if (__all_sync(0xffffffffu, ps0 <= NOMAX_SUM && ps1 <= NOMAX_SUM)) {
            f0 = f1 = 1.f;
            return;
        }
    }
    if (full) {  // warp-uniform: no token of the page is masked for any row of the warp
        float mx0 = acc[0], mx1 = acc[2];
#pragma unroll
        for (int n = 0; n < 8; ++n) {
            mx0 = fmaxf(mx0, fmaxf(acc[4 * n], acc[4 * n + 1]));
            mx1 = fmaxf(mx1, fmaxf(acc[4 * n + 2], acc[4 * n + 3]));
        }
        quad_max2(mx0, mx1);
        mn0 = next_max<OPT>(c.m_run0, mx0 * sl2);  // sl2 > 0: max(acc) * sl2 is max(acc * sl2)
        mn1 = next_max<OPT>(c.m_run1, mx1 * sl2);
        mu0 = mn0;  // finite: the page has visible tokens in both rows
        mu1 = mn1;
        page_exp<OPT>(acc, mu0, mu1, pa, ps0, ps1, sl2);
    } else {
        float s[32], mx0, mx1;
        page_rowmax(acc, s, j * BN + 2 * c.c4, c.lim0, c.lim1, sl2, mx0, mx1);
        mn0 = next_max<OPT>(c.m_run0, mx0);
        mn1 = next_max<OPT>(c.m_run1, mx1);
        mu0 = finite_or_zero(mn0);  // a row with nothing visible yet
        mu1 = finite_or_zero(mn1);
        page_exp<OPT>(s, mu0, mu1, pa, ps0, ps1);
    }
    f0 = fexp2<OPT>(c.m_run0 - mu0);
    f1 = fexp2<OPT>(c.m_run1 - mu1);
    c.m_run0 = mn0;
    c.m_run1 = mn1;
}

// Second half, in two steps: own_store puts P into the page's P box and zeroes the V rows past
// the request's length; own_commit gives the new running max to the other consumer (mb) and
// fences both for the async proxy; the caller's arrive publishes them. `own` is the consumer's
// 128-thread index.
__device__ __forceinline__ bool page_is_tail(const LatentPolicy<DA, DB> &pol, int j) { return pol.t_r - j * BN < BN; }
template <long long OPT = 0>
__device__ __forceinline__ void own_store(const LatentPolicy<DA, DB> &pol, int j, char *sK, const Consumer &c, int own,
                                          const uint32_t (&pa)[16])
{
    if (page_is_tail(pol, j)) zero_tail_rows(pol, j, own, sK, 128);  // CTA-uniform
    store_p_opt<OPT>(sK + P_BOX * BOX_BYTES, pa, c);
}
__device__ __forceinline__ void own_commit(const LatentPolicy<DA, DB> &pol, int j, float *mb, const Consumer &c)
{
    if (c.c4 == 0) {
        mb[c.r0] = c.m_run0;
        mb[c.r1] = c.m_run1;
    }
    ptx::fence_proxy_async(ptx::space_shared);
    if (page_is_tail(pol, j)) named_bar_sync(BAR_OWN + c.w, 128);  // own zeroed V rows before own PV
}

template <long long OPT>
__device__ __forceinline__ void own_softmax(const LatentPolicy<DA, DB> &pol, int j, char *sK, float *mb, float sl2,
                                            Consumer &c, int own, const float (&acc)[32], uint32_t (&pa)[16],
                                            float &f0, float &f1, float &ps0, float &ps1)
{
    own_exp<OPT>(j, sl2, c, acc, pa, f0, f1, ps0, ps1);
    own_store<OPT>(pol, j, sK, c, own, pa);
    own_commit(pol, j, mb, c);
}

// The other consumer's published max: O's rescale factors from our running max to it.
template <long long OPT>
__device__ __forceinline__ void adopt_max(const float *mb, Consumer &c, float &f0, float &f1)
{
    const float m0 = mb[c.r0], m1 = mb[c.r1];
    f0 = fexp2<OPT>(c.m_run0 - finite_or_zero(m0));
    f1 = fexp2<OPT>(c.m_run1 - finite_or_zero(m1));
    c.m_run0 = m0;
    c.m_run1 = m1;
}

// Row sums of both consumers added (each sums the P it computed), then the final store. The
// consumers reach this from different code, so no shared bar.sync (one id at two program
// points is "divergent" to synccheck): a chain through two mbarriers, each thread arriving
// with release semantics, 0 -> 1 with consumer 0's sums, 1 -> 0 with the totals.
// OPT_STAGED_STORE's layout of a consumer's 64 x 256 half in shared memory: rows padded by 32
// bytes (fp32) or 16 bytes (bf16), so that the eight rows one warp instruction writes fall on
// different banks; consumer w's half starts at w * STAGE_HALF from the first stage.
constexpr int STAGE_ROW_F32 = 256 * 4 + 32, STAGE_ROW_BF16 = 256 * 2 + 16;
constexpr int STAGE_HALF = BM * STAGE_ROW_F32;
static_assert(2 * STAGE_HALF <= STAGES * TILE_BYTES, "the staged O must fit in the two stages");

// store_rows through shared memory: the consumer writes its normalised half into stage (its own
// part, see above), syncs its 128 threads, and copies the rows out in 16-byte pieces, 512
// (fp32) or 256 (bf16) contiguous bytes per warp instruction. Only once both consumers' loops
// are done (every wgmma and TMA on the stages is complete).
//
// OPT_TMA_STORE (TMAST, flash_mla_v41; bf16 rows only, the fp32 partials keep the copy loop):
// the half goes into four 64 x 64 boxes with the 128-byte swizzle that the output's tensor map
// (fmh::o_tmap, Q's geometry over [b][s][h][512]) reads, and one thread of the consumer stores
// them with four bulk tensor copies, instead of 128 threads copying 16 rows each through
// registers. The box clips the rows past the request's s tokens, as the copy loop's m_last
// test does. The thread waits only until the copies have read shared memory (the CTA must not
// exit before), not for the global writes.
template <bool TMAST = false>
__device__ __forceinline__ void store_rows_staged(const LatentPolicy<DA, DB> &pol, const TileOut &to, int nsplits,
                                                  int split, const KvRange &kr, const Consumer &c, int own,
                                                  const float (&o)[128], const float (&lt)[2],
                                                  const float (&mr)[2], long long slot, char *stage,
                                                  const CUtensorMap *omap = nullptr)
{
    V3_FIN(0);
    char *half = stage + c.w * STAGE_HALF;
    const bool f32 = to.partial;
    if constexpr (TMAST) {
        if (!f32) {
            char *ob = stage + c.w * 4 * BOX_BYTES;  // boxes 4w .. 4w + 3 of the row block's O
#pragma unroll
            for (int rr = 0; rr < 2; ++rr) {
                const int row = c.r0 + 8 * rr, m = kr.m0 + row;
                const bool none = !(lt[rr] > 0.f);
                const float inv = none ? 0.f : 1.f / lt[rr];
#pragma unroll
                for (int n = 0; n < 32; ++n)
                    *reinterpret_cast<uint32_t *>(ob + (n >> 3) * BOX_BYTES + sw128(row, (8 * n + 2 * c.c4) & 63)) =
                        pack_bf16x2(o[4 * n + 2 * rr] * inv, o[4 * n + 2 * rr + 1] * inv);
                if (c.w == 0 && c.c4 == 0 && m <= kr.m_last)
                    if (float *lp = pol.lse_at(m))
                        *lp = none ? -CUDART_INF_F : (mr[rr] + log2f(lt[rr])) * 0.69314718055994531f;
            }
            ptx::fence_proxy_async(ptx::space_shared);  // the generic stores, seen by the bulk copies
            V3_FIN(1);
            named_bar_sync(BAR_OWN + c.w, 128);
            V3_FIN(2);
            if (own == 0) {
                const int h = pol.a->h;
#pragma unroll
                for (int i = 0; i < 4; ++i) {
                    const int32_t crd[4] = {c.w * 256 + 64 * i, kr.m0 % h, kr.m0 / h, pol.r};
                    ptx::cp_async_bulk_tensor(ptx::space_global, ptx::space_shared, omap, crd, ob + i * BOX_BYTES);
                }
                ptx::cp_async_bulk_commit_group();
                ptx::cp_async_bulk_wait_group_read(ptx::n32_t<0>());
            }
            V3_FIN(3);
            return;
        }
    }
#pragma unroll
    for (int rr = 0; rr < 2; ++rr) {
        const int row = c.r0 + 8 * rr, m = kr.m0 + row;
        const bool none = !(lt[rr] > 0.f);
        const float inv = none ? 0.f : 1.f / lt[rr];
        if (f32) {
#pragma unroll
            for (int n = 0; n < 32; ++n)
                *reinterpret_cast<float2 *>(half + row * STAGE_ROW_F32 + (8 * n + 2 * c.c4) * 4) =
                    make_float2(o[4 * n + 2 * rr] * inv, o[4 * n + 2 * rr + 1] * inv);
        } else {
#pragma unroll
            for (int n = 0; n < 32; ++n)
                *reinterpret_cast<uint32_t *>(half + row * STAGE_ROW_BF16 + (8 * n + 2 * c.c4) * 2) =
                    pack_bf16x2(o[4 * n + 2 * rr] * inv, o[4 * n + 2 * rr + 1] * inv);
        }
        if (c.w == 0 && c.c4 == 0 && m <= kr.m_last) {
            const float lse = none ? -CUDART_INF_F : (mr[rr] + log2f(lt[rr])) * 0.69314718055994531f;
            if (f32) {
                const long long pr = slot >= 0 ? slot * pol.rows + m : pol.row_global(m) * nsplits + split;
                to.ws_lse[pr] = lse;
            } else if (float *lp = pol.lse_at(m)) {
                *lp = lse;
            }
        }
    }
    V3_FIN(1);
    named_bar_sync(BAR_OWN + c.w, 128);
    V3_FIN(2);
    if (f32) {
        // 64 rows x 64 pieces of 16 bytes; one warp instruction moves half a row (512 bytes)
#pragma unroll 8
        for (int k = 0; k < BM * 64 / 128; ++k) {
            const int idx = own + 128 * k, row = idx >> 6, pc = idx & 63, m = kr.m0 + row;
            if (m > kr.m_last) continue;
            const long long pr = slot >= 0 ? slot * pol.rows + m : pol.row_global(m) * nsplits + split;
            *reinterpret_cast<uint4 *>(to.ws_o + pr * DA + c.w * 256 + pc * 4) =
                *reinterpret_cast<const uint4 *>(half + row * STAGE_ROW_F32 + pc * 16);
        }
    } else {
#pragma unroll 8
        for (int k = 0; k < BM * 32 / 128; ++k) {
            const int idx = own + 128 * k, row = idx >> 5, pc = idx & 31, m = kr.m0 + row;
            if (m > kr.m_last) continue;
            *reinterpret_cast<uint4 *>(pol.out_row(m) + c.w * 256 + pc * 8) =
                *reinterpret_cast<const uint4 *>(half + row * STAGE_ROW_BF16 + pc * 16);
        }
    }
    V3_FIN(3);
}

// OPT_ST16: store_rows's bf16 path (no workspace) with 16-byte stores. In a consumer's
// accumulator, the quad (lanes c4 = 0..3) of a row holds each 8-column group as four 4-byte
// words, one a lane, so store_rows writes 4 bytes a lane and a warp instruction covers 16 bytes
// of each of 8 rows. Here four groups at a time go through a 4 x 4 transpose inside the quad (two
// rounds of two xor-shuffles), after which lane c4 holds all of group n0 + c4: one 16-byte store
// a lane, 64 contiguous bytes a row a warp instruction, 16 stores a thread instead of 64. For the
// persistent kernel (flash_mla_v21), whose finish cannot stage O in shared memory (the stages
// hold the next row block's pages by then): v8's probe had its register-store finish at
// 8000-13000 SM cycles a segment.
__device__ __forceinline__ void store_rows_t16(const LatentPolicy<DA, DB> &pol, const KvRange &kr, const Consumer &c,
                                               const float (&o)[128], const float (&lt)[2], const float (&mr)[2])
{
    const bool hi = (c.c4 & 2) != 0, odd = (c.c4 & 1) != 0;
#pragma unroll
    for (int rr = 0; rr < 2; ++rr) {
        const int m = kr.m0 + c.r0 + 8 * rr;
        const bool ok = m <= kr.m_last;  // every lane shuffles; only rows that exist store
        const bool none = !(lt[rr] > 0.f);
        const float inv = none ? 0.f : 1.f / lt[rr];
        bf16 *dst = ok ? pol.out_row(m) + c.w * 256 + 8 * c.c4 : nullptr;
#pragma unroll
        for (int n0 = 0; n0 < 32; n0 += 4) {
            uint32_t w[4];
#pragma unroll
            for (int j = 0; j < 4; ++j)
                w[j] = pack_bf16x2(o[4 * (n0 + j) + 2 * rr] * inv, o[4 * (n0 + j) + 2 * rr + 1] * inv);
            // round 1 (lanes c4 ^ 2): the low lanes give words 2, 3 and take the partner's 0, 1 there
#pragma unroll
            for (int j = 0; j < 2; ++j) {
                const uint32_t y = __shfl_xor_sync(0xffffffffu, hi ? w[j] : w[j + 2], 2);
                if (hi) w[j] = y; else w[j + 2] = y;
            }
            // round 2 (lanes c4 ^ 1): the even lanes give words 1, 3 and take the partner's 0, 2 there
#pragma unroll
            for (int j = 0; j < 4; j += 2) {
                const uint32_t y = __shfl_xor_sync(0xffffffffu, odd ? w[j] : w[j + 1], 1);
                if (odd) w[j] = y; else w[j + 1] = y;
            }
            if (ok) *reinterpret_cast<uint4 *>(dst + 8 * n0) = make_uint4(w[0], w[1], w[2], w[3]);
        }
        float *lp = ok ? pol.lse_at(m) : nullptr;
        if (lp && c.w == 0 && c.c4 == 0) *lp = none ? -CUDART_INF_F : (mr[rr] + log2f(lt[rr])) * 0.69314718055994531f;
    }
}

// OPT_CMERGE's finish (nsplits >= 2, split q of a cluster of nsplits CTAs): consumer w's half of
// O, normalised, and its rows' lse go to its own part of the first stage; after a cluster barrier
// (every CTA's copies written), it merges rows q, q + nsplits, ... of its half from all nsplits
// copies and writes them in bf16; a second cluster barrier keeps every CTA alive until its peers
// have read it. Each consumer half is merged alone: both consumers hold the same row maxima and
// sums, so each computes the same lse. Cluster barriers rather than remote mbarrier arrives:
// compute-sanitizer's racecheck follows those (it reported the arrive/wait handshake's reads as
// races with the writes they wait for), and the barrier's two phases cost two waits per CTA.
// They count the cluster's non-exited threads only, so the producer warpgroup, which returned at
// the start, takes no part.
constexpr int CM_MAXS = 4;  // the scratch's splits; the host clusters CMERGE_MAXS of them
static_assert(CMERGE_MAXS <= CM_MAXS, "the merge's scratch holds CM_MAXS splits a row");
constexpr size_t CM_LSE = 2 * (size_t)STAGE_HALF;                      // float [2][BM]: row lse
constexpr size_t CM_W = CM_LSE + 2 * BM * sizeof(float);                  // float [2][BM / 2][CM_MAXS]
constexpr size_t CM_P = CM_W + 2 * (BM / 2) * CM_MAXS * sizeof(float);  // bf16 * [2][BM / 2] (OPT_CM_LEAN)
constexpr size_t CM_S = CM_P + 2 * (BM / 2) * sizeof(void *);           // float [2][BM]: 1 / scale (OPT_CM_F16)
static_assert(CM_S + 2 * BM * sizeof(float) <= (size_t)STAGES * TILE_BYTES,
              "the merge's scratch must fit in the two stages");
static_assert(CM_P % 8 == 0, "row pointers are 8-byte aligned");
// OPT_CM_F16's place of column c (of a consumer's 256) in a row's fp16 copy: a thread of the
// merge loop takes columns 4p..4p+3 and 128+4p..128+4p+3, so those eight are made contiguous.
__device__ __forceinline__ int cm_f16_pos(int c) { return ((c & 127) >> 2) * 8 + (c >> 7) * 4 + (c & 3); }
template <int CMO = 0>
__device__ __forceinline__ void store_rows_cmerge(const LatentPolicy<DA, DB> &pol, const KvRange &kr,
                                                  const Consumer &c, int own, const float (&o)[128],
                                                  const float (&lt)[2], const float (&mr)[2], char *stage, int ns,
                                                  int q)
{
    constexpr bool LEAN = (CMO & OPT_CM_LEAN) != 0, F16 = (CMO & OPT_CM_F16) != 0;
    constexpr bool XLOCAL = (CMO & OPT_CM_XLOCAL) != 0, XNOST = (CMO & OPT_CM_XNOST) != 0;
    static_assert(!(F16 || XLOCAL || XNOST) || LEAN, "these are ways of OPT_CM_LEAN's loop");
    // OPT_CM_XBLOAT (probe): the fp16 code is there but a condition the compiler cannot fold
    // keeps it from running, to see what the code's size alone does.
    const bool f16 = F16 && !((CMO & OPT_CM_XBLOAT) && ns <= CM_MAXS);
    V3_FIN(0);
    char *half = stage + c.w * STAGE_HALF;
    float *lse_w = reinterpret_cast<float *>(stage + CM_LSE) + c.w * BM;
    float *scl_w = reinterpret_cast<float *>(stage + CM_S) + c.w * BM;  // OPT_CM_F16: 1 / row scale
    // Which CTA merges a row: the fp32 ways interleave the rows (q, q + ns, ...); OPT_CM_F16 gives
    // CTA q the block [q * cs, q * cs + cs) of the rows with a query, so that with all 64 rows
    // and 2 or 4 splits each warp's 16 rows are all its CTA's or all a peer's, and the fp32 and
    // fp16 writes below do not diverge within a warp.
    const int nv = min(BM, kr.m_last - kr.m0 + 1), cs = (nv + ns - 1) / ns;
#pragma unroll
    for (int rr = 0; rr < 2; ++rr) {
        const int row = c.r0 + 8 * rr;
        const bool none = !(lt[rr] > 0.f);
        const float inv = none ? 0.f : 1.f / lt[rr];
        bool peer = false;  // OPT_CM_F16: another CTA merges this row
        float sc = 1.f;
        if (f16) {
            // The row's largest magnitude over the quad that holds it (every lane shuffles).
            float mx = 0.f;
#pragma unroll
            for (int n = 0; n < 32; ++n) mx = fmaxf(mx, fmaxf(fabsf(o[4 * n + 2 * rr]), fabsf(o[4 * n + 2 * rr + 1])));
            mx *= inv;
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
            int e;
            frexpf(mx, &e);     // mx = f * 2^e, 0.5 <= f < 1, so mx * 2^(15 - e) < 2^15 < 65504
            e = max(e, -110);   // keeps both powers of two normal floats
            sc = __int_as_float((127 + 15 - e) << 23);
            peer = row / cs != q;
            if (peer && c.c4 == 0) scl_w[row] = __int_as_float((127 - 15 + e) << 23);
        }
        if (f16 && peer) {
#pragma unroll
            for (int n = 0; n < 32; ++n)
                *reinterpret_cast<uint32_t *>(half + row * STAGE_ROW_F32 + 2 * cm_f16_pos(8 * n + 2 * c.c4)) =
                    pack_f16x2(o[4 * n + 2 * rr] * inv * sc, o[4 * n + 2 * rr + 1] * inv * sc);
        } else {
#pragma unroll
            for (int n = 0; n < 32; ++n)
                *reinterpret_cast<float2 *>(half + row * STAGE_ROW_F32 + (8 * n + 2 * c.c4) * 4) =
                    make_float2(o[4 * n + 2 * rr] * inv, o[4 * n + 2 * rr + 1] * inv);
        }
        if (c.c4 == 0) lse_w[row] = none ? -CUDART_INF_F : (mr[rr] + log2f(lt[rr])) * 0.69314718055994531f;
    }
    V3_FIN(1);
    // Every CTA's halves and lse are written (and every CTA of the cluster has started, which a
    // distributed shared memory access needs).
    cluster_sync();
    V3_FIN(2);

    // This CTA's rows: q + ns * i (OPT_CM_F16: q * cs + i) for i < nmine; their weights (one
    // thread a row).
    const int nmine = f16 ? max(0, min(cs, nv - q * cs)) : (BM - q + ns - 1) / ns;
    float *wt = reinterpret_cast<float *>(stage + CM_W) + c.w * (BM / 2) * CM_MAXS;
    if (own < nmine) {
        const int row = f16 ? q * cs + own : q + ns * own;
        const uint32_t la = smem_addr(lse_w + row), sa = smem_addr(scl_w + row);
        float l[CM_MAXS], rs[CM_MAXS], mx = -CUDART_INF_F;
#pragma unroll
        for (int j = 0; j < CM_MAXS; ++j) {
            l[j] = j < ns ? (j == q ? lse_w[row] : ld_dsmem_f32(dsmem_addr(la, (uint32_t)j))) : -CUDART_INF_F;
            rs[j] = f16 && j < ns && j != q ? ld_dsmem_f32(dsmem_addr(sa, (uint32_t)j)) : 1.f;
            mx = fmaxf(mx, l[j]);
        }
        float den = 0.f;
#pragma unroll
        for (int j = 0; j < CM_MAXS; ++j) {
            l[j] = mx == -CUDART_INF_F ? 0.f : __expf(l[j] - mx);  // nothing visible: all weights 0
            den += l[j];
        }
        const float inv = den > 0.f ? 1.f / den : 0.f;
#pragma unroll
        for (int j = 0; j < CM_MAXS; ++j) wt[own * CM_MAXS + j] = l[j] * inv * rs[j];
        const int m = kr.m0 + row;
        if (c.w == 0 && m <= kr.m_last)
            if (float *lp = pol.lse_at(m)) *lp = den > 0.f ? mx + logf(den) : -CUDART_INF_F;
        if (LEAN)  // this half's output row (none past the row block's last row)
            reinterpret_cast<bf16 **>(stage + CM_P)[c.w * (BM / 2) + own] =
                m <= kr.m_last ? pol.out_row(m) + c.w * 256 : nullptr;
    }
    named_bar_sync(BAR_OWN + c.w, 128);
    V3_FIN(3);
    if (LEAN) {
        bf16 *const *rowp = reinterpret_cast<bf16 *const *>(stage + CM_P) + c.w * (BM / 2);  // from the weights
        // This thread's 16-byte piece of a row (fp16: eight columns, fp32: four) and its address
        // in every CTA of the cluster.
        const int pc = f16 ? own & 31 : own & 63;
        uint32_t rb[CMERGE_MAXS];
#pragma unroll
        for (int j = 0; j < CMERGE_MAXS; ++j) rb[j] = j < ns ? dsmem_addr(smem_addr(half + pc * 16), (uint32_t)j) : 0u;
        if (f16) {
            // A thread keeps columns 4pc..4pc+3 and 128+4pc..128+4pc+3 and takes every fourth row of the
            // CTA's block.
#pragma unroll 2
            for (int i = own >> 5; i < nmine; i += 4) {
                bf16 *dst = rowp[i];
                if (!dst) continue;
                const uint32_t roff = (uint32_t)(q * cs + i) * STAGE_ROW_F32;
                const float wq = wt[i * CM_MAXS + q];
                const float4 a = *reinterpret_cast<const float4 *>(half + roff + pc * 16);
                const float4 b = *reinterpret_cast<const float4 *>(half + roff + 512 + pc * 16);
                float acc[8] = {wq * a.x, wq * a.y, wq * a.z, wq * a.w, wq * b.x, wq * b.y, wq * b.z, wq * b.w};
#pragma unroll
                for (int j = 0; j < CMERGE_MAXS; ++j) {
                    const float w = j < ns && j != q ? wt[i * CM_MAXS + j] : 0.f;
                    if (w != 0.f) {
                        const uint4 u = XLOCAL ? *reinterpret_cast<const uint4 *>(half + roff + pc * 16) : ld_dsmem_u4(rb[j] + roff);
                        const uint32_t uu[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
                        for (int k = 0; k < 4; ++k) {
                            const float2 f = unpack_f16x2(uu[k]);
                            acc[2 * k] += w * f.x;
                            acc[2 * k + 1] += w * f.y;
                        }
                    }
                }
                if (XNOST && acc[0] != 1234.5f) continue;
                *reinterpret_cast<uint2 *>(dst + pc * 4) = make_uint2(pack_bf16x2(acc[0], acc[1]), pack_bf16x2(acc[2], acc[3]));
                *reinterpret_cast<uint2 *>(dst + 128 + pc * 4) = make_uint2(pack_bf16x2(acc[4], acc[5]), pack_bf16x2(acc[6], acc[7]));
            }
        } else {
            // A thread keeps one 16-byte column piece (pc) and takes every other of this CTA's rows.
#pragma unroll 2
            for (int i = own >> 6; i < nmine; i += 2) {
                bf16 *dst = rowp[i];
                if (!dst) continue;
                const uint32_t roff = (uint32_t)(q + ns * i) * STAGE_ROW_F32;
                float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
                for (int j = 0; j < CMERGE_MAXS; ++j) {
                    const float w = j < ns ? wt[i * CM_MAXS + j] : 0.f;
                    if (w != 0.f) {
                        const float4 v = j == q || XLOCAL ? *reinterpret_cast<const float4 *>(half + roff + pc * 16)
                                                          : ld_dsmem_v4(rb[j] + roff);
                        acc.x += w * v.x;
                        acc.y += w * v.y;
                        acc.z += w * v.z;
                        acc.w += w * v.w;
                    }
                }
                if (XNOST && acc.x != 1234.5f) continue;
                *reinterpret_cast<uint2 *>(dst + pc * 4) = make_uint2(pack_bf16x2(acc.x, acc.y), pack_bf16x2(acc.z, acc.w));
            }
        }
        V3_FIN(4);
        cluster_sync();  // no peer reads this CTA's copies any more
        V3_FIN(5);
        return;
    }
    // 16-byte pieces: 64 per row of the half; a warp instruction reads 512 contiguous bytes of
    // one copy and writes 256 of the output row.
    const uint32_t hbase = smem_addr(half);
    for (int idx = own; idx < nmine * 64; idx += 128) {
        const int i = idx >> 6, pc = idx & 63, row = q + ns * i, m = kr.m0 + row;
        if (m > kr.m_last) continue;
        const uint32_t la = hbase + row * STAGE_ROW_F32 + pc * 16;
        float4 v[CM_MAXS];
#pragma unroll
        for (int j = 0; j < CM_MAXS; ++j)
            if (j < ns && wt[i * CM_MAXS + j] != 0.f)
                v[j] = j == q ? *reinterpret_cast<const float4 *>(half + row * STAGE_ROW_F32 + pc * 16)
                              : ld_dsmem_v4(dsmem_addr(la, (uint32_t)j));
        float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
        for (int j = 0; j < CM_MAXS; ++j) {
            const float w = j < ns ? wt[i * CM_MAXS + j] : 0.f;
            if (w != 0.f) {
                acc.x += w * v[j].x;
                acc.y += w * v[j].y;
                acc.z += w * v[j].z;
                acc.w += w * v[j].w;
            }
        }
        *reinterpret_cast<uint2 *>(pol.out_row(m) + c.w * 256 + pc * 4) =
            make_uint2(pack_bf16x2(acc.x, acc.y), pack_bf16x2(acc.z, acc.w));
    }
    V3_FIN(4);
    cluster_sync();  // no peer reads this CTA's copies any more
    V3_FIN(5);
}

// OPT_CM_PUSH's finish (2 splits; see the option). The stages are dead once both CTAs' loops are
// done: PU_RECV holds the peer's fp16 row for each of this CTA's 256 consumer threads, in the
// thread's own order (16-byte chunks swizzled by the lane, so a quarter warp's stores hit eight
// different bank groups), PU_STAT each row's lse and 1 / scale, PU_STG the merged bf16 rows on
// their way out in coalesced 16-byte pieces (the staged store's layout), PU_PTR their output rows.
constexpr size_t PU_RECV = 0;
constexpr size_t PU_STAT = PU_RECV + 2 * 128 * 128;
constexpr size_t PU_PTR = PU_STAT + 2 * (BM / 2) * sizeof(float2);  // bf16 * [2][32]: merged rows' outputs
constexpr size_t PU_STG = PU_PTR + 2 * (BM / 2) * sizeof(void *);
static_assert(PU_STG % 16 == 0 && PU_STG + 2 * BM * STAGE_ROW_BF16 <= (size_t)STAGES * TILE_BYTES,
              "the push merge's buffers must fit in the two stages");
static_assert(CMERGE_MAXS == 2, "OPT_CM_PUSH pairs each row with one peer");
// OPT_CM_L2's workspace slice of one CTA: piece k of consumer thread T (0..255) at (k * 256 + T)
// * 16, then the 64 rows' (lse, 1 / scale).
constexpr size_t CM_WS_ROWS = 8 * CONSUMERS * 16;
constexpr size_t CM_WS_CTA = CM_WS_ROWS + BM * sizeof(float2);
// The grid coordinates are read by volatile asm, which stays after the barrier before it: with
// blockIdx / gridDim ptxas hoisted both slices' addresses to the kernel's start and kept them
// live (spilled) across the pair loop, whose schedule then changed and whose pairs ran ~200
// cycles longer (probe, b=32,s=1, 2026-12-01).
__device__ __forceinline__ char *cm_ws_slice(const TileOut &to, unsigned split)
{
    unsigned x, z, nx, ny;
    asm volatile("mov.u32 %0, %%ctaid.x;\n\tmov.u32 %1, %%ctaid.z;\n\tmov.u32 %2, %%nctaid.x;\n\tmov.u32 %3, %%nctaid.y;"
                 : "=r"(x), "=r"(z), "=r"(nx), "=r"(ny));
    return reinterpret_cast<char *>(to.ws_o) + (((size_t)z * ny + split) * nx + x) * CM_WS_CTA;
}
// The largest magnitude of one accumulator row of a thread (rr: 0 = c.r0, 1 = c.r1), four
// independent chains (one chain of 64 dependent maxima cost ~650 cycles, probe 2026-12-01).
template <int RR>
__device__ __forceinline__ float row_absmax(const float (&o)[128])
{
    float m4[4] = {};
#pragma unroll
    for (int n = 0; n < 32; ++n)
        m4[n & 3] = fmaxf(m4[n & 3], fmaxf(fabsf(o[4 * n + 2 * RR]), fabsf(o[4 * n + 2 * RR + 1])));
    return fmaxf(fmaxf(m4[0], m4[1]), fmaxf(m4[2], m4[3]));
}
// `lt`: the rows' full sums (both consumers'); `q`: this CTA's split (its rank in the cluster).
// The caller arrived on the cluster barrier at its loop's exit (not with OPT_CM_L2 alone).
template <long long OPT = 0>
__device__ __forceinline__ void store_rows_push(const LatentPolicy<DA, DB> &pol, const KvRange &kr,
                                                const Consumer &c, int own, const float (&o)[128],
                                                const float (&lt)[2], const float (&mr)[2], char *stage, int q,
                                                const TileOut &to)
{
    constexpr bool L2 = (OPT & OPT_CM_L2) != 0;
    V3_FIN(0);
    // The row this thread sends is c.r0 + 8 * (q ^ 1), the one it merges c.r0 + 8 * q: selects,
    // not a runtime index into o (which would put it in local memory).
    const bool q1 = q != 0;
    const float ls = q1 ? lt[0] : lt[1], lm = q1 ? lt[1] : lt[0];
    const float invs = ls > 0.f ? 1.f / ls : 0.f;
    float mx;
    if (OPT & OPT_CM_SENTMAX) {
        mx = q1 ? row_absmax<0>(o) : row_absmax<1>(o);
    } else {
        // The largest magnitude of both rows, four independent chains each, then the sent row's.
        float m4[2][4] = {};
#pragma unroll
        for (int n = 0; n < 32; ++n)
#pragma unroll
            for (int rr = 0; rr < 2; ++rr)
                m4[rr][n & 3] = fmaxf(m4[rr][n & 3], fmaxf(fabsf(o[4 * n + 2 * rr]), fabsf(o[4 * n + 2 * rr + 1])));
        mx = q1 ? fmaxf(fmaxf(m4[0][0], m4[0][1]), fmaxf(m4[0][2], m4[0][3]))
                : fmaxf(fmaxf(m4[1][0], m4[1][1]), fmaxf(m4[1][2], m4[1][3]));
    }
    mx *= invs;
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
    int ex;
    frexpf(mx, &ex);      // mx = f * 2^ex, 0.5 <= f < 1: mx * 2^(15 - ex) < 2^15 < 65504
    ex = max(ex, -110);   // both powers of two stay normal floats
    const float sc = __int_as_float((127 + 15 - ex) << 23) * invs;
    const float lse_s = ls > 0.f ? ((q1 ? mr[0] : mr[1]) + log2f(ls)) * 0.69314718055994531f : -CUDART_INF_F;
    const uint32_t slot = (uint32_t)(c.w * 128 + own) * 128, swz = own & 7;
    const uint32_t p = (uint32_t)(q ^ 1);
    const int tix = c.w * 128 + own, srow = c.w * (BM / 2) + (own >> 2);
    V3_FIN(1);
    if (!L2) cluster_wait_acquire();  // the peer is past its loop: its stages are free
    V3_FIN(2);
    if (L2) {  // the rows go through this CTA's workspace slice
        char *mine = cm_ws_slice(to, (unsigned)q);
#pragma unroll
        for (int k = 0; k < 8; ++k) {
            uint32_t u[4];
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const int n = 4 * k + j;
                u[j] = pack_f16x2((q1 ? o[4 * n] : o[4 * n + 2]) * sc, (q1 ? o[4 * n + 1] : o[4 * n + 3]) * sc);
            }
            __stcg(reinterpret_cast<uint4 *>(mine) + k * CONSUMERS + tix, make_uint4(u[0], u[1], u[2], u[3]));
        }
        if (c.c4 == 0)
            __stcg(reinterpret_cast<float2 *>(mine + CM_WS_ROWS) + srow,
                   make_float2(lse_s, __int_as_float((127 - 15 + ex) << 23)));
    } else {
        const uint32_t rb = dsmem_addr(smem_addr(stage + PU_RECV + slot), p);
#pragma unroll
        for (int k = 0; k < 8; ++k) {
            uint32_t u[4];
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const int n = 4 * k + j;
                u[j] = pack_f16x2((q1 ? o[4 * n] : o[4 * n + 2]) * sc, (q1 ? o[4 * n + 1] : o[4 * n + 3]) * sc);
            }
            st_dsmem_u4(rb + ((k ^ swz) << 4), make_uint4(u[0], u[1], u[2], u[3]));
        }
        if (c.c4 == 0)
            st_dsmem_f32x2(dsmem_addr(smem_addr(stage + PU_STAT + srow * sizeof(float2)), p),
                           lse_s, __int_as_float((127 - 15 + ex) << 23));
    }
    V3_FIN(3);
    cluster_arrive_release();  // our rows are in the peer's shared memory (OPT_CM_L2: in our slice)
    cluster_wait_acquire();    // and the peer's in ours; no CTA reads another's memory after this
    V3_FIN(4);
    // Merge this thread's row: its own O (unnormalised, in registers) and the peer's fp16 copy.
    const int row = c.r0 + 8 * q, m = kr.m0 + row;
    const float lse_m = lm > 0.f ? ((q1 ? mr[1] : mr[0]) + log2f(lm)) * 0.69314718055994531f : -CUDART_INF_F;
    uint4 pr[8];  // OPT_CM_L2: the peer's pieces, all eight loads in flight before the merge
    float2 ps;
    if (L2) {
        // (Through cp.async into this thread's PU_RECV slot instead, so that the merge below was
        // one code for both paths, the finish took ~2000 cycles longer: probe, 2026-12-01.)
        const char *peer = cm_ws_slice(to, p);
#pragma unroll
        for (int k = 0; k < 8; ++k) pr[k] = __ldcg(reinterpret_cast<const uint4 *>(peer) + k * CONSUMERS + tix);
        ps = __ldcg(reinterpret_cast<const float2 *>(peer + CM_WS_ROWS) + srow);
    } else {
        ps = *reinterpret_cast<const float2 *>(stage + PU_STAT + srow * sizeof(float2));
    }
    const float mxl = fmaxf(lse_m, ps.x);
    float wm = 0.f, wp = 0.f, lse = -CUDART_INF_F;
    if (mxl != -CUDART_INF_F) {  // else nothing visible in either split: the row is 0
        const float em = __expf(lse_m - mxl), ep = __expf(ps.x - mxl), den = em + ep;
        wm = em / den * (lm > 0.f ? 1.f / lm : 0.f);
        wp = ep / den * ps.y;
        lse = mxl + logf(den);
    }
    if (c.c4 == 0) {  // the row's output pointer, once (the copy below would divide by h per piece)
        reinterpret_cast<bf16 **>(stage + PU_PTR)[srow] =
            m <= kr.m_last ? pol.out_row(m) + c.w * 256 : nullptr;
        if (c.w == 0 && m <= kr.m_last)
            if (float *lp = pol.lse_at(m)) *lp = lse;
    }
    char *half = stage + PU_STG + c.w * BM * STAGE_ROW_BF16;
#pragma unroll
    for (int k = 0; k < 8; ++k) {
        const uint4 u = L2 ? pr[k] : *reinterpret_cast<const uint4 *>(stage + PU_RECV + slot + ((k ^ swz) << 4));
        const uint32_t uu[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const int n = 4 * k + j;
            const float2 f = unpack_f16x2(uu[j]);
            const float a0 = q1 ? o[4 * n + 2] : o[4 * n], a1 = q1 ? o[4 * n + 3] : o[4 * n + 1];
            *reinterpret_cast<uint32_t *>(half + row * STAGE_ROW_BF16 + (8 * n + 2 * c.c4) * 2) =
                pack_bf16x2(wm * a0 + wp * f.x, wm * a1 + wp * f.y);
        }
    }
    named_bar_sync(BAR_OWN + c.w, 128);
    V3_FIN(5);
    // The 32 rows of this CTA, 32 pieces of 16 bytes each per consumer half: a warp takes one row
    // (512 contiguous bytes) at a time.
    bf16 *const *rowp = reinterpret_cast<bf16 *const *>(stage + PU_PTR) + c.w * (BM / 2);
    const int pc = own & 31;
#pragma unroll
    for (int k = 0; k < (BM / 2) * 32 / 128; ++k) {
        const int li = (own >> 5) + 4 * k, r = ((li >> 3) << 4) + 8 * q + (li & 7);
        bf16 *dst = rowp[li];
        if (dst)
            *reinterpret_cast<uint4 *>(dst + pc * 8) = *reinterpret_cast<const uint4 *>(half + r * STAGE_ROW_BF16 + pc * 16);
    }
}

// MLA_FIN_MARK(k): a hook for the pair kernel's transition probe (flash_mla_fmpair.cuh defines it
// under MLA_FMPAIR_TRACE: 1 the row sums exchanged, 2 the rows stored); empty everywhere else.
#ifndef MLA_FIN_MARK
#define MLA_FIN_MARK(k) \
    do {                \
    } while (0)
#endif

template <long long OPT = 0>
__device__ __forceinline__ void finish_pair(const LatentPolicy<DA, DB> &pol, const TileOut &to, int nsplits,
                                            int split, const KvRange &kr, const Consumer &c, float *red,
                                            uint64_t *sums, uint32_t parity, long long slot,
                                            const float (&o)[128], int own = 0, char *stage = nullptr,
                                            const CUtensorMap *omap = nullptr)
{
    V3_FIN(6);  // (trace only; the one-split finish's points are in store_rows_staged)
    if ((OPT & OPT_CM_PUSH) && !(OPT & OPT_CM_L2))
        cluster_arrive_relaxed();  // this CTA's stages are free for the peer's rows
    float l0 = c.l_run0, l1 = c.l_run1;
    quad_sum2(l0, l1);
    float lt[2];
    if (c.w == 0) {
        if (c.c4 == 0) {
            red[c.r0] = l0;
            red[c.r1] = l1;
        }
        ptx::mbarrier_arrive(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &sums[0]);
        wait_par<OPT>(&sums[1], parity);
        lt[0] = red[BM + c.r0];
        lt[1] = red[BM + c.r1];
    } else {
        wait_par<OPT>(&sums[0], parity);
        lt[0] = l0 + red[c.r0];
        lt[1] = l1 + red[c.r1];
        if (c.c4 == 0) {
            red[BM + c.r0] = lt[0];
            red[BM + c.r1] = lt[1];
        }
        ptx::mbarrier_arrive(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &sums[1]);
    }
    MLA_FIN_MARK(1);
    const float mr[2] = {c.m_run0, c.m_run1};
    if (OPT & OPT_CM_PUSH)  // (the merge kernel, launched with 2 splits only: no other store in it)
        store_rows_push<OPT & (OPT_CM_L2 | OPT_CM_SENTMAX)>(pol, kr, c, own, o, lt, mr, stage, split, to);
    else if ((OPT & OPT_CMERGE) && to.partial)
        store_rows_cmerge<OPT & (OPT_CM_LEAN | OPT_CM_F16 | OPT_CM_XLOCAL | OPT_CM_XNOST | OPT_CM_XBLOAT)>(pol, kr, c, own, o, lt, mr, stage, nsplits, split);
    else if (OPT & OPT_STAGED_STORE)
        store_rows_staged<(OPT & OPT_TMA_STORE) != 0>(pol, to, nsplits, split, kr, c, own, o, lt, mr, slot, stage,
                                                      omap);
    else if ((OPT & OPT_ST16) && !to.partial)
        store_rows_t16(pol, kr, c, o, lt, mr);
    else
        store_rows(pol, to, nsplits, split, kr, c.w, c.r0, c.c4, o, lt, mr, slot);
    MLA_FIN_MARK(2);
}

// Who reloads what: a box is reloaded (TMA, by one thread) by the consumer that reads it last.
//   page A (stage 0, owner 0): boxes 0-3 (K, V left) by consumer 0 after its PV(A);
//                              boxes 4-8 (K, V right, P_A) by consumer 1 after its PV(A).
//   page B (stage 1, owner 1): boxes 0-3 + 8 (K, V left, P_B) by consumer 0 after its PV(B);
//                              boxes 4-7 (K, V right) by consumer 1 after its PV(B).
constexpr unsigned A_BY0 = 0x00fu, A_BY1 = 0x1f0u, B_BY0 = 0x10fu, B_BY1 = 0x0f0u;

// The split plan (scheduled split grid): part p of the KV work, the split slots of each request
// (prefix), and where the partial rows of the requests with 2+ splits start (pprefix; requests
// with one split write their output directly and take no workspace).
struct Plan {
    const mla_sched_part *parts;
    const int *prefix;   // [b + 1]
    const int *pprefix;  // [b + 1]
};

// The planner (one CTA of SCHED_THREADS threads, before the main kernel): the positional plan of
// split_sched.h, every step parallel. C[b + 1] (workspace) gets the cost prefix; then each
// request's split count and the prefixes of split slots (prefix) and of partial slots (pprefix,
// requests with 2+ splits only); then each part, one thread per part.
constexpr int SCHED_THREADS = 256;

// Block-wide exclusive scan of one value per thread (all SCHED_THREADS threads call it).
template <typename T>
__device__ __forceinline__ T block_excl_scan(T v, T *ws, T &total)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    T x = v;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        const T y = __shfl_up_sync(0xffffffffu, x, o);
        if (lane >= o) x += y;
    }
    if (lane == 31) ws[warp] = x;
    __syncthreads();
    T before = 0, all = 0;
#pragma unroll
    for (int i = 0; i < SCHED_THREADS / 32; ++i) {
        if (i < warp) before += ws[i];
        all += ws[i];
    }
    __syncthreads();  // ws may be reused
    total = all;
    return before + x - v;
}

__device__ __forceinline__ void seesaw_plan(const int *seqlens, int t, int b, int num_parts, mla_sched_part *parts,
                                            int *prefix, int *pprefix, long long *C)
{
    __shared__ long long wl[SCHED_THREADS / 32];
    __shared__ int wi[SCHED_THREADS / 32];
    const int ov = MLA_SCHED_OVERHEAD;
    const int chunk = (b + SCHED_THREADS - 1) / SCHED_THREADS;
    const int lo = min(b, (int)threadIdx.x * chunk), hi = min(b, lo + chunk);
    long long cost = 0, total = 0;
    for (int r = lo; r < hi; ++r) cost += mla_sched_blocks(seqlens, t, r, BN) + ov;
    long long at = block_excl_scan(cost, wl, total);
    for (int r = lo; r < hi; ++r) {
        C[r] = at;
        at += mla_sched_blocks(seqlens, t, r, BN) + ov;
    }
    if (threadIdx.x == 0) C[b] = total;
    __syncthreads();  // C visible to the whole CTA
    const long long cap = mla_sched_cap(total, num_parts);
    int ns_sum = 0, np_sum = 0, ns_all = 0, np_all = 0;
    for (int r = lo; r < hi; ++r) {
        const int ns = mla_sched_nsplits_pos(C, r, ov, cap);
        ns_sum += ns;
        np_sum += ns >= 2 ? ns : 0;
    }
    int s_at = block_excl_scan(ns_sum, wi, ns_all);
    int p_at = block_excl_scan(np_sum, wi, np_all);
    for (int r = lo; r < hi; ++r) {
        const int ns = mla_sched_nsplits_pos(C, r, ov, cap);
        prefix[r] = s_at;
        pprefix[r] = p_at;
        s_at += ns;
        p_at += ns >= 2 ? ns : 0;
    }
    if (threadIdx.x == 0) {
        prefix[b] = ns_all;
        pprefix[b] = np_all;
    }
    for (int p = threadIdx.x; p < num_parts; p += SCHED_THREADS) mla_sched_part_pos(C, b, ov, cap, p, &parts[p]);
}

// OPT_MCAST's producer (one thread per CTA): walks the CTA's pages in the consumers' order and
// reloads each stage group once both CTAs' last readers have released it (empty[2 * stage +
// group], count 2); the first use of each stage needs no release. Every CTA arms its own box
// barriers for every group (the peer's multicast completes bytes on them, possibly before the
// arming: the transaction count may run negative); only the group's rank issues the copy.
template <long long OPT>
__device__ __forceinline__ void mcast_producer(const CUtensorMap *tmap, const LatentArgs &a, int nsplits,
                                               uint64_t *full, uint64_t *empty, char *sK)
{
    constexpr bool MULTI = !(OPT & (OPT_MC_NOMULTI | OPT_MC_LOCAL)), COUPLED = !(OPT & OPT_MC_LOCAL);
    const uint32_t rank = cluster_ctarank();
    LatentPolicy<DA, DB> pol(&a, blockIdx.z);
    const KvRange kr = kv_range(pol, blockIdx.x * BM, blockIdx.y, nsplits);
    const int *bt = a.block_table + (long long)blockIdx.z * a.bt_stride;
    for (int j = 0; j < kr.b1 - kr.b0; ++j) {
        const int st = j & 1, page = __ldg(bt + kr.b0 + j);
        for (int g = 0; g < 2; ++g) {
            if (j >= 2) {
                if (COUPLED)
                    mbar_wait_cluster(&empty[2 * st + g], ((j >> 1) - 1) & 1);
                else
                    wait_par<OPT>(&empty[2 * st + g], ((j >> 1) - 1) & 1);
            }
            const unsigned mask = st == 0 ? (g == 0 ? A_BY0 : A_BY1) : (g == 0 ? B_BY0 : B_BY1);
            if (!MULTI) {
                load_boxes(tmap, sK + st * TILE_BYTES, &full[st * NBOX], page, mask);
            } else {
#pragma unroll
                for (int c = 0; c < NBOX; ++c) {
                    if (!(mask >> c & 1u)) continue;
                    uint64_t *bar = &full[st * NBOX + c];
                    ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, bar,
                                                   (uint32_t)BOX_BYTES);
                    if (rank == (uint32_t)g)
                        tma_load_2d_multicast(sK + st * TILE_BYTES + c * BOX_BYTES, tmap, c * 64, page * BN, bar,
                                              0x3);
                }
            }
        }
    }
}

// A consumer is done with a stage group: release it in both CTAs of the cluster (OPT_MCAST).
template <long long OPT>
__device__ __forceinline__ void mcast_release(uint64_t *bar)
{
    if (OPT & OPT_MC_LOCAL) {
        ptx::mbarrier_arrive(bar);
        return;
    }
    const uint32_t rank = cluster_ctarank();
    mbar_arrive_cluster(bar, rank);
    mbar_arrive_cluster(bar, rank ^ 1u);
}

// The calling consumer thread was the last reader of a stage group (`mask` of the stage at
// sK / full): reload it with page `pg`, or, with OPT_MCAST, release it to the producers
// (`empty`: the group's release barrier).
template <long long OPT>
__device__ __forceinline__ void group_done(const CUtensorMap *tmap, char *sK, uint64_t *full, int pg, unsigned mask,
                                           uint64_t *empty, uint64_t pol = 0)
{
    if (OPT & OPT_MCAST)
        mcast_release<OPT>(empty);
    else
        load_boxes<OPT>(tmap, sK, full, pg, mask, pol);
}

// One CTA of a seesaw kernel (384 threads, SMEM_BYTES of dynamic shared memory; tmap is the
// address of the kernel's __grid_constant__ tensor map).
//   SCHED = false (static split grid): CTA (row block x, split y, request z); one segment, the
//     split's share of the request's pages; partials in the row-major layout (nsplits per row).
//   SCHED = true (scheduled split grid): CTA (row block x, part y); the part's request segments
//     from the plan, in order; each segment's pages are the part's blocks clipped to the causal
//     limit of the row block's last row; its result goes straight to out / lse when the request
//     has one split, else to partial slot pprefix[r] + split.
// A block-table entry: __ldg, or with PDL a coherent load that stays behind griddepcontrol.wait.
template <int PDLM>
__device__ __forceinline__ int bt_at(const int *p)
{
    return PDLM ? ld_global_s32(p) : __ldg(p);
}

// PDLM (flash_mla_v30): the CTA is launched with PDL (fmh::Version::pdl) and waits for the
// previous grid before it reads or writes global memory; the barrier set-up, the descriptors'
// fetch and the register hand-over run before that, under the previous kernel's tail (FlashMLA's
// main kernel does the same).
// Measured and removed (eighteenth session, flash_mla_v31): one thread also asking L2 for the
// CTA's Q tile and first two pages before the wait (27 cp.async.bulk.prefetch.tensor boxes; the
// lengths and block table read unsynchronised, a wrong page only a useless prefetch). Four
// bench-all passes against v30 in the same call: b=32,s=2 131.9 against 126.4 us, s=4 251.9
// against 248.9, s=8 494.4 against 488.1, no row faster beyond the spread. The fourth L2
// prefetch of this kernel that cost more than it saved (v7, v13, v23 above).
// Measured and removed (nineteenth session, flash_mla_v32): the first loads box by box. Q's nine
// boxes on barriers of their own, requested interleaved with page A's (Q box c, A box c), and
// the first S of each consumer waiting box by box, so that the first QK^T follows the loads.
// The timeline probe (direct launches) had the first S_A 1700-2400 cycles sooner (9200-9500
// against 10900-11600 at b=32,s=16 and s=2) and the CTA 2 % shorter; five-second sustained
// runs at s=16 971.8-975.5 against 977.8-982.1 us a launch. But in bench-all (PDL launches in
// graphs of 8 calls), 8 passes against v30 in the same call, it was 0-1 % slower on every row
// (b=32,s=1 76.4 against 75.9 us, s=64 3886 against 3857), and 4 passes in the call before
// the same. Without PDL too (v19 against v19 plus the option, 5 passes of bench-all, same call):
// 0.5-1 % slower at s >= 4, 2-6 % at s = 1 and 2. So it is not the PDL launch; what differs from
// the probe is the input (the probe: one input set, pages in order; bench-all: copies rotated
// past the L2, pages in a random permutation). Which of the two makes it lose is not measured.
// (Twentieth session: random pages left the probe's v30 and v34 times unchanged, which points
// away from the page order; v32's start itself was not rerun with them.)
// Measured and removed (twentieth session, flash_mla_v34): the pair in FlashMLA's order (its dense
// decode kernel's schedule): consumer 1's softmax B waits for page A's max instead of
// speculating, each consumer runs its own page's PV from registers first, consumer 0 stores P_A
// once B's max is known and issues PV(B,L) after consumer 1's two PVs. Against v30 in the same
// calls: 2-4.5 % slower at s >= 2 with the maxima published after the exponentials, 0.4-7 %
// (graph) and up to 3.4 % (flush) with them published before. Page A's ring got no shorter:
// P_A cannot leave before B's max, and PV(A,R) finished at the same point (3031 against 3011
// cycles). Code: docs/bench/h200-2026-12-01-s20/fm_order_v34.patch.
enum : int { PDLM_OFF = 0, PDLM_WAIT = 1 };

// OPT_EARLY_Q (flash_mla_v97, v99): the first two block-table entries of split `split` of the row
// block at m0 of request r, as kv_range would place the split if the request had a.t tokens, read
// without waiting for its length. Every length is at most a.t and max_pages >= ceil(t / page) is
// checked by the API, so the entries are in the table. Where the real range starts at the same
// page (b0), its first two entries are these (np <= n then: a shorter request only cuts pages
// off the end, and its per-split share is no larger), and the caller uses them; elsewhere it reads
// its own.
struct EarlyPages {
    int b0 = -1, p0 = 0, p1 = 0;
};
template <int PDLM>
__device__ __forceinline__ EarlyPages early_pages(const LatentArgs &a, int r, int m0, int split, int nsplits)
{
    EarlyPages e;
    const int m_last = min(m0 + BM, a.s * a.h) - 1;
    const int nblk = (min(visible_count(a.t, a.s, m_last / a.h, a.causal), max(a.t - a.n_new, 0)) + BN - 1) / BN;
    const int per = (nblk + nsplits - 1) / nsplits;
    e.b0 = min(split * per, nblk);
    const int n = min(e.b0 + per, nblk) - e.b0;
    const int *bt0 = a.block_table + (long long)r * a.bt_stride + e.b0;
    if (n > 0) e.p0 = bt_at<PDLM>(bt0);
    if (n > 1) e.p1 = bt_at<PDLM>(bt0 + 1);
    return e;
}

template <bool SCHED, long long OPT = 0, int NT = NTHREADS, int PDLM = PDLM_OFF>
__device__ __forceinline__ void seesaw_cta(const CUtensorMap *tmap, const LatentArgs &a, int nsplits, float sl2,
                                           const TileOut &to, const Plan &plan, const CUtensorMap *qmap = nullptr,
                                           const CUtensorMap *omap = nullptr)
{
    extern __shared__ char smem_raw[];
    char *smem = smem_raw + ((1024 - (smem_addr(smem_raw) & 1023)) & 1023);
    pdl_launch_dependents();

    // NT == CONSUMERS: no producer warpgroup (it only ever left at once, holding 40 registers a
    // thread that the consumers could not have); the consumers are threads 0-255, seen below
    // as 128-383 so that the code is the same, and the compiler may give them 255 registers
    // instead of setmaxnreg's 232.
    static_assert(NT == NTHREADS || NT == CONSUMERS, "a producer warpgroup and two consumers, or the consumers");
    constexpr bool NOPROD = NT == CONSUMERS;
    // The warpgroup index through a shuffle: visibly warp-uniform to ptxas, which otherwise
    // treats the role branches as divergent and serialises every wgmma (C7520).
    const int tid = threadIdx.x + (NOPROD ? 128 : 0), wg = __shfl_sync(0xffffffffu, tid >> 7, 0);
    uint64_t *full = reinterpret_cast<uint64_t *>(smem + OFF_BAR);
    uint64_t *fullA = full, *fullB = full + NBOX;
    uint64_t *sums = full + STAGES * NBOX;
    uint64_t *empty = sums + 2;  // OPT_MCAST: [stage][group]
    uint64_t *qbar = sums + 2;   // OPT_Q_TMA (MSMEM_BYTES holds it)
    char *sKA = smem + OFF_K, *sKB = smem + OFF_K + TILE_BYTES;
    constexpr bool MC = (OPT & OPT_MCAST) != 0, QT = (OPT & OPT_Q_TMA) != 0, CM = (OPT & OPT_CMERGE) != 0;
    static_assert(!CM || (QT && (OPT & OPT_STAGED_STORE)), "OPT_CMERGE extends the Q-by-TMA, staged-store kernel");
    static_assert(!(OPT & OPT_CM_LEAN) || CM, "OPT_CM_LEAN is a way of OPT_CMERGE's merge");
    constexpr bool ONE_FIN = (OPT & OPT_ONE_FINISH) != 0;
    static_assert(!(OPT & OPT_TMA_STORE) || (QT && !CM && (OPT & OPT_STAGED_STORE)),
                  "OPT_TMA_STORE is the one-split Q-by-TMA kernel's staged store");
    static_assert(!(OPT & OPT_CM_PUSH) || (CM && ONE_FIN && !(OPT & OPT_CM_LEAN)),
                  "OPT_CM_PUSH is the one-finish merge kernel's own way of merging");
    static_assert(!(OPT & OPT_LATE_B) || (QT && !MC), "OPT_LATE_B orders the first loads of the Q-by-TMA kernel");
    static_assert(!MC || !SCHED, "OPT_MCAST is for the static split grid");
    static_assert(!QT || (!SCHED && !MC), "OPT_Q_TMA is for the static split grid's one segment per CTA");
    constexpr bool WK = (OPT & OPT_WALK) != 0;
    static_assert(!WK || (QT && ONE_FIN && (OPT & OPT_TMA_STORE)), "OPT_WALK walks the one-split TMA-store kernel");
    if (threadIdx.x == 0) {
        for (int i = 0; i < STAGES * NBOX; ++i) ptx::mbarrier_init(&full[i], 1);
        ptx::mbarrier_init(&sums[0], 128);
        ptx::mbarrier_init(&sums[1], 128);
        if (MC)
            for (int i = 0; i < 2 * STAGES; ++i) ptx::mbarrier_init(&empty[i], (OPT & OPT_MC_LOCAL) ? 1 : 2);
        if (QT) ptx::mbarrier_init(qbar, 1);
        ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
    }
    __syncthreads();
    if (MC) cluster_sync_relaxed();  // both CTAs' barriers exist before any multicast or remote arrive

    static_assert(!(SCHED && (OPT & OPT_STAGED_STORE)), "OPT_STAGED_STORE is for one segment per CTA");
    static_assert(!NOPROD || !MC, "OPT_MCAST's producer thread is in the producer warpgroup");
    if (!NOPROD && wg == 0) {  // no math: its registers go to the consumers
        setmaxnreg_dec<40>();
#ifdef MLA_V3_TRACE
        // (not in OPT_CMERGE's kernels: a live watcher would hold their cluster barriers)
        if (!SCHED && !MC && !CM && !(OPT & OPT_WALK) && threadIdx.x < 32 && g_v3_boxpoll && blockIdx.x == 0 && blockIdx.y == 0 &&
            blockIdx.z == 0) {
            LatentPolicy<DA, DB> pol(&a, (int)blockIdx.z);
            const KvRange kr = kv_range(pol, blockIdx.x * BM, blockIdx.y, nsplits);
            v3_box_poll(full, kr.b1 - kr.b0);
        }
#endif
        // (OPT_CMERGE's cluster barriers wait for the non-exited threads only: PTX ISA,
        // barrier.cluster, so this warpgroup leaves now as in every other seesaw kernel)
        if (MC) {
            if (tid == 0) mcast_producer<OPT>(tmap, a, nsplits, full, empty, sKA);
            cluster_sync();  // neither CTA leaves while the other may still write into it
        }
        return;
    }
    if (!NOPROD) setmaxnreg_inc<232>();
    static_assert(!PDLM || (QT && !SCHED && !MC), "PDLM is for the Q-by-TMA static split grid");
    if (PDLM) {
        if (tid == 128) {
            prefetch_tensormap(tmap);
            prefetch_tensormap(qmap);
            if constexpr ((OPT & OPT_TMA_STORE) != 0) prefetch_tensormap(omap);
        }
        pdl_wait();
    }
    mla_sched_part part;
    if (SCHED) {
        pdl_wait();  // the plan is written by the planner launched just before
        part = plan.parts[blockIdx.y];
    } else {
        part.r0 = part.r1 = blockIdx.z;
        part.blk0 = part.blk1 = part.split0 = 0;
    }
    const int own = (tid - 128) & 127, cw = wg - 1;
    float *mb = reinterpret_cast<float *>(smem + OFF_M);
    float *red = reinterpret_cast<float *>(smem + OFF_RED);
    const uint32_t q_base = smem_addr(smem + OFF_Q);
    const uint32_t ka = smem_addr(sKA), kb = smem_addr(sKB);
    const uint64_t l2pol = (OPT & OPT_L2_EVICT) ? l2_page_policy<OPT>(a) : 0;
    V3_CTA(1);
    V3_MK(0);
    // Phase bookkeeping across segments: page A's boxes complete once per pair, B's once per
    // pair that has a B.
    int phA = 0, phB = 0;
    // OPT_WALK: items it = blockIdx.x, + gridDim.x, ... of wk_n = b * wk_nx (nsplits carries b);
    // item it is row block it % wk_nx of request it / wk_nx, one split.
    const int wk_nx = WK ? (a.s * a.h + BM - 1) / BM : 1, wk_n = WK ? wk_nx * nsplits : 0;
    const int ns1 = WK ? 1 : nsplits;
    for (int r = part.r0, seg = 0, it = blockIdx.x; WK ? it < wk_n : r <= part.r1; ++seg) {
        int rbx = blockIdx.x;
        if (WK) {
            r = it / wk_nx;
            rbx = it - r * wk_nx;
            if (seg > 0) named_bar_sync(1, CONSUMERS);  // the last item's readers of Q and the stages are done
        }
        V3_WK(seg, 0);
        // OPT_EARLY_Q (static split grid): thread 128 requests the Q tile and reads the split's
        // first two block-table entries before the request's length arrives. Without it the
        // start is three dependent global round trips (the length, then Q and the first entry,
        // then page A: SASS of v68's merge kernel), each from DRAM in a graph of rotating inputs.
        // The entries are those of the split's pages if the request had a.t tokens (seqlens <= t,
        // and max_pages >= ceil(t / page) is checked by the API, so they are in the table); they
        // are used only where the real range starts at the same page.
        constexpr bool EQ = (OPT & OPT_EARLY_Q) && QT && !SCHED && !WK && !MC;
        EarlyPages eq;
        if constexpr (EQ) {
            if (tid == 128) {
                load_q_tma<OPT>(qmap, smem + OFF_Q, qbar, r, rbx * BM, a.h, l2pol);
                eq = early_pages<PDLM>(a, r, rbx * BM, (int)blockIdx.y, nsplits);
            }
        }
        LatentPolicy<DA, DB> pol(&a, r);
        KvRange kr;
        long long slot = -1;
        TileOut tseg = to;
        if (SCHED) {
            int bb = 0, be = 0, sidx = 0;
            mla_sched_segment(&part, a.seqlens, a.t, BN, r, &bb, &be, &sidx);
            const int ns = plan.prefix[r + 1] - plan.prefix[r];
            kr.m0 = blockIdx.x * BM;
            kr.m_last = min(kr.m0 + BM, pol.rows) - 1;
            const int nblk = (pol.row_limit(kr.m_last) + BN - 1) / BN;
            kr.b0 = min(bb, nblk);
            kr.b1 = min(be, nblk);
            slot = ns >= 2 ? (long long)plan.pprefix[r] + sidx : -1;
            tseg.partial = ns >= 2;
        } else {
            kr = kv_range(pol, rbx * BM, WK ? 0 : blockIdx.y, ns1);
        }
        const int np = kr.b1 - kr.b0;
        const int *bt = a.block_table + (long long)r * a.bt_stride;

        Consumer c = make_consumer(pol, kr, tid);
        c.w = cw;
        // Q of this request; the previous segment's readers of Q and both stages are done (the
        // row-sum chain of its finish orders the two consumers), so the first pair may load.
        if (!QT && !(OPT & OPT_EARLY_FILL)) load_q(pol, kr.m0, c.ct, smem + OFF_Q);
        static_assert(!(OPT & OPT_Q_BATCH) || (OPT & OPT_EARLY_FILL), "OPT_Q_BATCH is the EARLY_FILL order's load");
        if (!MC && tid == 128) {  // (OPT_MCAST: the producer's)
            // Q even when there is no page: every consumer waits for it, so that no TMA is
            // still writing into this CTA's shared memory when it exits.
            if (QT && !EQ) load_q_tma<OPT>(qmap, smem + OFF_Q, qbar, r, kr.m0, a.h, l2pol);
            const bool eq_hit = EQ && kr.b0 == eq.b0;
            if (np > 0) load_boxes<OPT>(tmap, sKA, fullA, eq_hit ? eq.p0 : bt_at<PDLM>(bt + kr.b0), 0x1ffu, l2pol);
            if (np > 1 && !(OPT & OPT_LATE_B))
                load_boxes<OPT>(tmap, sKB, fullB, eq_hit ? eq.p1 : bt_at<PDLM>(bt + kr.b0 + 1), 0x1ffu, l2pol);
        }
        if (QT) {
            wait_par<OPT>(qbar, WK ? (uint32_t)(seg & 1) : 0u);  // one phase a segment (OPT_WALK: an item)
            if ((OPT & OPT_LATE_B) && tid == 128 && np > 1)
                load_boxes<OPT>(tmap, sKB, fullB, bt_at<PDLM>(bt + kr.b0 + 1), 0x1ffu, l2pol);
        } else {
            if ((OPT & OPT_EARLY_FILL) && (OPT & OPT_Q_BATCH))
                load_q_batched<CONSUMERS>(pol, kr.m0, c.ct, smem + OFF_Q);
            else if (OPT & OPT_EARLY_FILL)
                load_q(pol, kr.m0, c.ct, smem + OFF_Q);
            named_bar_sync(1, CONSUMERS);
        }
        V3_MK(1);
        V3_WK(seg, 1);
        const uint32_t pA0 = phA & 1, pB0 = phB & 1;

        float o[128];
#pragma unroll
        for (int i = 0; i < 128; ++i) o[i] = 0.f;
        float s[32];
        uint32_t pa[16];
        float f0, f1, g0, g1, ps0, ps1;

        if (c.w == 0) {
            // Owner of A = pages b0, b0 + 2, ...; O columns 0..255. S_A of pair k is computed
            // at the end of pair k - 1 (split around the reload of B), so that consumer 1's
            // QK^T of B runs under this softmax.
            if (np > 0) issue_qk<0, NBOX, OPT>(s, q_base, ka, fullA, pA0);
            wgmma_wait<0>();
            reg_fence(s);
            V3_FS();
            V3_WK(seg, 2);
            for (int i = 0; i < np; i += 2) {
                const uint32_t parA = pA0 ^ ((i >> 1) & 1), parB = pB0 ^ ((i >> 1) & 1);
                const bool hasB = i + 1 < np, nextA = i + 2 < np, nextB = i + 3 < np;
                const int pgA = !MC && nextA && own == 0 ? bt_at<PDLM>(bt + kr.b0 + i + 2) : 0;
                const int pgB = !MC && nextB && own == 0 ? bt_at<PDLM>(bt + kr.b0 + i + 3) : 0;
                V3_TR(0, i >> 1, 0);
                own_softmax<OPT>(pol, kr.b0 + i, sKA, mb, sl2, c, own, s, pa, f0, f1, ps0, ps1);
                named_bar_arrive(BAR_PA, CONSUMERS);
                V3_TR(0, i >> 1, 1);
                c.l_run0 = c.l_run0 * f0 + ps0;
                c.l_run1 = c.l_run1 * f1 + ps1;
                rescale_o<OPT>(o, f0, f1);
                issue_pv_rs<OPT>(o, pa, ka, 0);
                wgmma_wait<0>();
                V3_TR(0, i >> 1, 2);
                reg_fence(o);
                reg_fence(pa);
                if (nextA && own == 0) group_done<OPT>(tmap, sKA, fullA, pgA, A_BY0, &empty[0], l2pol);
                if (hasB) {
                    named_bar_sync(BAR_PB, CONSUMERS);
                    V3_TR(0, i >> 1, 3);
                    adopt_max<OPT>(mb + BM, c, g0, g1);
                    c.l_run0 *= g0;
                    c.l_run1 *= g1;
                    rescale_o<OPT>(o, g0, g1);
                    wait_v_half<OPT>(fullB, parB, 0);
                    issue_pv_ss<(OPT & OPT_DESC) != 0>(o, kb, 0);
                }
                if (OPT & OPT_EARLY_B) {
                    // B's boxes first (once PV(B) is done), then the whole next S_A, box by box
                    // as page A's reloads land.
                    wgmma_wait<0>();
                    reg_fence(o);
                    V3_TR(0, i >> 1, 4);
                    if (nextB && own == 0) group_done<OPT>(tmap, sKB, fullB, pgB, B_BY0, &empty[2], l2pol);
                    if (nextA) issue_qk<0, NBOX, OPT>(s, q_base, ka, fullA, parA ^ 1);
                    V3_TR(0, i >> 1, 5);
                    wgmma_wait<0>();
                    reg_fence(s);
                    V3_TR(0, i >> 1, 6);
                    continue;
                }
                // The next S_A: boxes 0-3 (reloaded above) behind PV(B); then, once PV(B) is
                // done and B's boxes are reloaded, boxes 4-8 (reloaded by consumer 1 after its
                // PV(A)).
                if (nextA) {
                    issue_qk<0, 4, OPT>(s, q_base, ka, fullA, parA ^ 1);
                    wgmma_wait<1>();
                    V3_TR(0, i >> 1, 4);
                } else {
                    wgmma_wait<0>();
                }
                reg_fence(o);
                if (nextB && own == 0) group_done<OPT>(tmap, sKB, fullB, pgB, B_BY0, &empty[2], l2pol);
                if (nextA) issue_qk<4, NBOX, OPT>(s, q_base, ka, fullA, parA ^ 1);
                V3_TR(0, i >> 1, 5);
                wgmma_wait<0>();
                reg_fence(s);
                reg_fence(o);
                V3_TR(0, i >> 1, 6);
            }
            V3_MK(2);
            V3_LX();
            V3_WK(seg, 3);
            if (!ONE_FIN) {
                finish_pair<OPT>(pol, tseg, nsplits, blockIdx.y, kr, c, red, sums, seg & 1, slot, o, own, sKA, omap);
                V3_MK(3);
            }
        } else {
            // Owner of B = pages b0 + 1, b0 + 3, ...; O columns 256..511.
            if (np > 1) issue_qk<0, NBOX, OPT>(s, q_base, kb, fullB, pB0);
            wgmma_wait<0>();
            reg_fence(s);
            for (int i = 0; i < np; i += 2) {
                const uint32_t parA = pA0 ^ ((i >> 1) & 1), parB = pB0 ^ ((i >> 1) & 1);
                const bool hasB = i + 1 < np, nextA = i + 2 < np, nextB = i + 3 < np;
                const int pgA = !MC && nextA && own == 0 ? bt_at<PDLM>(bt + kr.b0 + i + 2) : 0;
                const int pgB = !MC && nextB && own == 0 ? bt_at<PDLM>(bt + kr.b0 + i + 3) : 0;
                if (OPT & OPT_SPEC_B) {
                    // Softmax B against the running max before page A (mp), while consumer 0
                    // does softmax A; checked against page A's max below.
                    const float mp0 = c.m_run0, mp1 = c.m_run1;
                    if (hasB) {
                        own_exp<OPT>(kr.b0 + i + 1, sl2, c, s, pa, g0, g1, ps0, ps1);
                        if (!(OPT & OPT_LATE_PSTORE)) own_store<OPT>(pol, kr.b0 + i + 1, sKB, c, own, pa);
                    }
                    named_bar_sync(BAR_PA, CONSUMERS);
                    const float ma0 = mb[c.r0], ma1 = mb[c.r1];
                    f0 = fexp2<OPT>(mp0 - finite_or_zero(ma0));
                    f1 = fexp2<OPT>(mp1 - finite_or_zero(ma1));
                    if (!hasB || __any_sync(0xffffffffu, ma0 != mp0 || ma1 != mp1)) {
                        c.m_run0 = ma0;  // page A moved a maximum of this warp: P_B against it
                        c.m_run1 = ma1;
                        if (hasB) {
                            own_exp<OPT>(kr.b0 + i + 1, sl2, c, s, pa, g0, g1, ps0, ps1);
                            if (!(OPT & OPT_LATE_PSTORE)) store_p_opt<OPT>(sKB + P_BOX * BOX_BYTES, pa, c);
                        }
                    }
                } else {
                    named_bar_sync(BAR_PA, CONSUMERS);
                    adopt_max<OPT>(mb, c, f0, f1);
                }
                V3_TR(1, i >> 1, 0);
                c.l_run0 *= f0;
                c.l_run1 *= f1;
                rescale_o<OPT>(o, f0, f1);
                wait_v_half<OPT>(fullA, parA, 1);
                issue_pv_ss<(OPT & OPT_DESC) != 0>(o, ka, 1);
                if (hasB) {  // softmax B under both consumers' PV(A)
                    if ((OPT & OPT_SPEC_B) && (OPT & OPT_LATE_PSTORE)) own_store<OPT>(pol, kr.b0 + i + 1, sKB, c, own, pa);
                    if (OPT & OPT_SPEC_B)
                        own_commit(pol, kr.b0 + i + 1, mb + BM, c);
                    else
                        own_softmax<OPT>(pol, kr.b0 + i + 1, sKB, mb + BM, sl2, c, own, s, pa, g0, g1, ps0, ps1);
                    named_bar_arrive(BAR_PB, CONSUMERS);
                }
                V3_TR(1, i >> 1, 1);
                wgmma_wait<0>();
                reg_fence(o);
                if (nextA && own == 0) group_done<OPT>(tmap, sKA, fullA, pgA, A_BY1, &empty[1], l2pol);
                V3_TR(1, i >> 1, 2);
                if (hasB) {
                    c.l_run0 = c.l_run0 * g0 + ps0;
                    c.l_run1 = c.l_run1 * g1 + ps1;
                    rescale_o<OPT>(o, g0, g1);
                    issue_pv_rs<OPT>(o, pa, kb, 1);
                }
                wgmma_wait<0>();
                reg_fence(o);
                reg_fence(pa);
                if (nextB && own == 0) group_done<OPT>(tmap, sKB, fullB, pgB, B_BY1, &empty[3], l2pol);
                V3_TR(1, i >> 1, 3);
                // The next S_B: its boxes arrive from both consumers' reloads just issued; it
                // runs under consumer 0's next softmax.
                if (nextB) issue_qk<0, NBOX, OPT>(s, q_base, kb, fullB, parB ^ 1);
                V3_TR(1, i >> 1, 4);
                wgmma_wait<0>();
                reg_fence(s);
                V3_TR(1, i >> 1, 6);
            }
            if (!ONE_FIN) finish_pair<OPT>(pol, tseg, nsplits, blockIdx.y, kr, c, red, sums, seg & 1, slot, o, own, sKA, omap);
        }
        if (ONE_FIN) {  // one copy of the finish for both consumers' code
            if (WK)
                finish_pair<OPT>(pol, tseg, 1, 0, kr, c, red, sums, seg & 1, slot, o, own, sKA, omap);
            else
                finish_pair<OPT>(pol, tseg, nsplits, blockIdx.y, kr, c, red, sums, seg & 1, slot, o, own, sKA, omap);
            V3_MK(3);
            V3_WK(seg, 4);
        }
        phA += (np + 1) >> 1;
        phB += np >> 1;
        if (WK) {
            it += gridDim.x;
        } else {
            ++r;
        }
    }
    if (MC) cluster_sync();
    V3_CTA(2);
}

// Scheduled grid: merges the partial rows of the requests with 2+ splits (a warp per output row,
// 8 per 256-thread CTA); rows of one-split requests were written by the main kernel. MLP: with
// every split's loads in flight at once (combine_splits_mlp, flash_mla_v8).
template <bool MLP = false>
__device__ __forceinline__ void seesaw_combine(const LatentArgs &a, long long rows, const Plan &plan,
                                               const float *ws_o, const float *ws_lse)
{
    const long long row = (long long)blockIdx.x * 8 + (threadIdx.x >> 5);
    if (row >= rows) return;
    const int rpr = a.s * a.h;
    const int r = (int)(row / rpr), m = (int)(row % rpr);
    const int ns = plan.prefix[r + 1] - plan.prefix[r];
    if (ns < 2) return;
    const long long first = (long long)plan.pprefix[r] * rpr + m;
    if (MLP)
        combine_splits_mlp<DA>(ws_o + first * DA, (long long)rpr * DA, ws_lse + first, rpr, ns,
                               out_at(a.out, a.os, row, a.s, a.h), lse_at_row(a.lse, row, a.s, a.h));
    else
        combine_splits<DA>(ws_o + first * DA, (long long)rpr * DA, ws_lse + first, rpr, ns,
                           out_at(a.out, a.os, row, a.s, a.h), lse_at_row(a.lse, row, a.s, a.h));
}

}  // namespace seesaw
}  // namespace mla
