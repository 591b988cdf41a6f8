/*
 * Split-KV work planner for the scheduled decode kernels (flash_mla_v4). Header-only and
 * integer-only so that device code (the planner kernel, and each CTA walking its part) and the C
 * test (which checks it by brute force) run the very same code. Compiles as C11, as C++17 and
 * under nvcc.
 *
 * Work model. Request r of [0, b) has n_r = ceil(len_r / block_n) KV blocks, len_r = seqlens[r]
 * clamped to [0, t] (t when seqlens is NULL). The flattened work is the sequence of (request,
 * block) pairs ordered by request, then block. Each of the num_parts parts (CTAs of one row block)
 * gets one contiguous range of it. A part pays, besides its blocks, `overhead` blocks for every
 * request segment it touches (the setup and the partial-result write of a segment are not free;
 * FlashMLA's scheduler charges 5 for the same reason), so
 *     cost(part) = sum over its segments of (end - begin + overhead).
 * A request with n_r == 0 still gets exactly one (empty) segment, so that exactly one part writes
 * its output (zeros, lse = -inf).
 *
 * The plan is positional, so that every part can be computed on its own (one thread per part): the
 * work is laid out in cost units, request r taking [C[r], C[r + 1]) with C the exclusive prefix
 * of (n_r + overhead), first its `overhead` units, then its blocks. Part p takes the units
 * [p * cap, min((p + 1) * cap, T)), cap = ceil(T / num_parts), and owns a request with blocks
 * when its units meet the request's blocks, a request without blocks when they hold the request's
 * last unit (so that only a part's first request can have overhead units outside the part).
 * Needs overhead >= 1 (a request of zero cost would own no unit).
 *
 * Guarantees (checked by tests/cpu/test_split_sched.c): every block is in exactly one part's
 * segment and every 0-block request in exactly one; a request's parts are consecutive and its
 * segments numbered 0, 1, ... in part order; cost(part) <= cap + overhead; at most
 * b + num_parts - 1 segments; at most 2 * num_parts segments of requests cut between parts (a
 * part's first and last). A part whose units lie inside one request's overhead is empty.
 */
#ifndef MLA_SPLIT_SCHED_H
#define MLA_SPLIT_SCHED_H

#ifndef MLA_HD
#if defined(__CUDACC__)
#define MLA_HD __host__ __device__ __forceinline__
#else
#define MLA_HD static inline
#endif
#endif

/* FlashMLA's per-request charge, in blocks of 64 tokens */
#define MLA_SCHED_OVERHEAD 5

/*
 * One part's range of the flattened work, from (r0, blk0) inclusive to block blk1 (exclusive) of
 * request r1. Requests strictly between r0 and r1 are whole. A request with no blocks appears as
 * the empty segment [0, 0).
 * An empty part has r0 = b, r1 = -1 and blk0 = blk1 = split0 = 0, so that
 * `for (r = p.r0; r <= p.r1; r++)` does nothing.
 */
typedef struct {
    int r0, blk0;   /* first (request, block), inclusive */
    int r1, blk1;   /* last request and its END block, exclusive */
    int split0;     /* split index, within request r0, of the segment of r0 (later requests: 0) */
} mla_sched_part;

/* n_r; len / block_n + remainder rather than (len + block_n - 1) / block_n, which would overflow
 * near INT_MAX */
MLA_HD int mla_sched_blocks(const int *seqlens, int t, int r, int block_n)
{
    int len = seqlens ? seqlens[r] : t;
    if (len > t) len = t;
    if (len < 0) len = 0;
    return len / block_n + (len % block_n != 0);
}

/*
 * Request r's segment in part p, for walking a part without storing its segments: sets
 * [*blk_begin, *blk_end) and the split index within r, returns 1; returns 0 (outputs untouched)
 * when p has no segment of r. seqlens, t and block_n as the plan's costs were made from.
 */
MLA_HD int mla_sched_segment(const mla_sched_part *p, const int *seqlens, int t, int block_n, int r,
                             int *blk_begin, int *blk_end, int *split_idx)
{
    if (r < p->r0 || r > p->r1) return 0;
    *blk_begin = r == p->r0 ? p->blk0 : 0;
    *blk_end = r == p->r1 ? p->blk1 : mla_sched_blocks(seqlens, t, r, block_n);
    *split_idx = r == p->r0 ? p->split0 : 0;
    return 1;
}

/* cap = ceil(T / num_parts); 1 for no work */
MLA_HD long long mla_sched_cap(long long total, int num_parts)
{
    return total > 0 ? (total + num_parts - 1) / num_parts : 1;
}

/* the request holding unit x (0 <= x < C[b]): the largest r < b with C[r] <= x */
MLA_HD int mla_sched_find(const long long *C, int b, long long x)
{
    int lo = 0, hi = b - 1;
    while (lo < hi) {
        const int mid = (lo + hi + 1) >> 1;
        if (C[mid] <= x) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

/* the number of parts owning request r */
MLA_HD int mla_sched_nsplits_pos(const long long *C, int r, int overhead, long long cap)
{
    const long long n = C[r + 1] - C[r] - overhead, b0 = C[r] + overhead;
    return n > 0 ? (int)((b0 + n - 1) / cap - b0 / cap + 1) : 1;
}

/* part p of the plan (C[0..b] the cost prefix, cap from mla_sched_cap) */
MLA_HD void mla_sched_part_pos(const long long *C, int b, int overhead, long long cap, int p, mla_sched_part *q)
{
    const long long S = (long long)p * cap, T = b > 0 ? C[b] : 0;
    q->r0 = b; q->blk0 = 0; q->r1 = -1; q->blk1 = 0; q->split0 = 0;
    if (S >= T) return;
    const long long E = S + cap < T ? S + cap : T;
    int r0 = -1, r1 = -1, blk0 = 0, blk1 = 0;
    for (int k = mla_sched_find(C, b, S); k < b && C[k] < E; k++) {
        const long long bs = C[k] + overhead, lo = S > bs ? S : bs, hi = E < C[k + 1] ? E : C[k + 1];
        if (C[k + 1] > bs ? lo < hi : (C[k + 1] - 1 >= S && C[k + 1] - 1 < E)) {
            r0 = k;
            blk0 = C[k + 1] > bs ? (int)(lo - bs) : 0;
            break;
        }
    }
    if (r0 < 0) return;
    for (int k = mla_sched_find(C, b, E - 1); k >= r0; k--) {
        const long long bs = C[k] + overhead, lo = S > bs ? S : bs, hi = E < C[k + 1] ? E : C[k + 1];
        if (C[k + 1] > bs ? lo < hi : (C[k + 1] - 1 >= S && C[k + 1] - 1 < E)) {
            r1 = k;
            blk1 = C[k + 1] > bs ? (int)(hi - bs) : 0;
            break;
        }
    }
    q->r0 = r0; q->blk0 = blk0; q->r1 = r1; q->blk1 = blk1;
    q->split0 = C[r0 + 1] > C[r0] + overhead ? (int)(p - (C[r0] + overhead) / cap) : 0;
}

#endif /* MLA_SPLIT_SCHED_H */
