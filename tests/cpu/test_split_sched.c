/*
 * test_split_sched: the split-KV planner (split_sched.h, the positional plan flash_mla_v4's
 * planner kernel computes one part per thread) against a brute-force checker. Every block
 * covered exactly once (a per-block counter, not just the part boundaries), every 0-block request
 * owned by exactly one empty segment, parts contiguous and in order, split indices 0..n-1 in part
 * order and matching the split-count prefix, the balance bound, the segment bounds the kernel's
 * workspace relies on, no writes past the output arrays. Random cases (seeded) plus the edges:
 * b = 1 with 132 parts, all-zero lengths, more parts than blocks, b = 0. The checker itself is
 * checked: mutated plans must be rejected, so a checker that passes everything fails this test.
 * Release builds define NDEBUG, hence explicit checks instead of assert().
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "split_sched.h"

static char why[256];

#define FAIL(...) do { snprintf(why, sizeof why, __VA_ARGS__); goto out; } while (0)

/* the test's own n_r, not mla_sched_blocks: the planner is checked against independent code */
static int blocks_of(const int *seqlens, int t, int r, int block_n)
{
    long long len = seqlens ? seqlens[r] : t;
    if (len > t) len = t;
    if (len < 0) len = 0;
    return (int)((len + block_n - 1) / block_n);
}

static const int CANARY = 0x5a5a5a5a;

/* 0 when (parts, prefix, ret) is a valid plan of the problem; otherwise 1 with `why` set */
static int validate(const int *seqlens, int t, int b, int block_n, int P, int overhead,
                    const mla_sched_part *parts, const int *prefix, int ret)
{
    int bad = 1;
    int *n = calloc((size_t)b + 1, sizeof *n), *base = calloc((size_t)b + 1, sizeof *base);
    int *zcov = calloc((size_t)b + 1, sizeof *zcov), *next_split = calloc((size_t)b + 1, sizeof *next_split);
    unsigned char *cover = NULL;
    long long *cost = NULL;
    why[0] = 0;
    if (!n || !base || !zcov || !next_split) FAIL("out of memory");

    long long total_blocks = 0, T = 0;
    for (int r = 0; r < b; r++) {
        n[r] = blocks_of(seqlens, t, r, block_n);
        if (mla_sched_blocks(seqlens, t, r, block_n) != n[r])
            FAIL("mla_sched_blocks(r=%d) = %d, expected %d", r, mla_sched_blocks(seqlens, t, r, block_n), n[r]);
        base[r] = (int)total_blocks;
        total_blocks += n[r];
        T += n[r] + overhead;
    }
    cover = calloc((size_t)total_blocks + 1, 1);
    if (!cover) FAIL("out of memory");

    if (ret < 0) FAIL("plan returned %d", ret);
    if (prefix[0] != 0) FAIL("splits_prefix[0] = %d", prefix[0]);
    for (int r = 0; r < b; r++)
        if (prefix[r + 1] - prefix[r] < 1) FAIL("request %d has %d splits", r, prefix[r + 1] - prefix[r]);
    if (ret != prefix[b]) FAIL("returned %d, splits_prefix[b] = %d", ret, prefix[b]);
    if (b > 0 && ret > b + P - 1) FAIL("%d segments > b + parts - 1 = %d", ret, b + P - 1);
    long long cut = 0;  /* flash_mla_v4 sizes its partial rows for 2 per part */
    for (int r = 0; r < b; r++)
        if (prefix[r + 1] - prefix[r] >= 2) cut += prefix[r + 1] - prefix[r];
    if (cut > 2LL * P) FAIL("%lld segments of cut requests > 2 x %d parts", cut, P);

    const long long cap = (T + P - 1) / P + overhead;
    int cr = 0, cblk = 0;
    cost = calloc((size_t)P, sizeof *cost);
    if (!cost) FAIL("out of memory");
    for (int p = 0; p < P; p++) {
        const mla_sched_part *q = &parts[p];
        int bb = -7, ee = -7, ss = -7;
        if (mla_sched_segment(q, seqlens, t, block_n, -1, &bb, &ee, &ss) ||
            mla_sched_segment(q, seqlens, t, block_n, b, &bb, &ee, &ss))
            FAIL("part %d: segment outside [0, b)", p);
        if (q->r0 == b) {  /* empty: allowed anywhere (units inside one request's overhead) */
            if (q->r1 != -1 || q->blk0 || q->blk1 || q->split0)
                FAIL("part %d: empty but {%d,%d,%d,%d,%d}", p, q->r0, q->blk0, q->r1, q->blk1, q->split0);
        } else {
            if (q->r0 < 0 || q->r0 > q->r1 || q->r1 >= b)
                FAIL("part %d: requests [%d, %d] with b = %d", p, q->r0, q->r1, b);
            if (q->r0 != cr || q->blk0 != cblk)
                FAIL("part %d starts at (%d,%d), previous part ended at (%d,%d)", p, q->r0, q->blk0, cr, cblk);
            if (q->blk1 == n[q->r1]) { cr = q->r1 + 1; cblk = 0; }
            else { cr = q->r1; cblk = q->blk1; }
        }
        /* walk every request through the helper, as the kernel would */
        for (int r = 0; r < b; r++) {
            bb = ee = ss = -7;
            int has = mla_sched_segment(q, seqlens, t, block_n, r, &bb, &ee, &ss);
            int in = q->r0 <= r && r <= q->r1;
            if (has != in) FAIL("part %d: segment(r=%d) = %d, expected %d", p, r, has, in);
            if (!has) continue;
            int eb = r == q->r0 ? q->blk0 : 0, ee2 = r == q->r1 ? q->blk1 : n[r];
            if (bb != eb || ee != ee2)
                FAIL("part %d r %d: segment [%d,%d), expected [%d,%d)", p, r, bb, ee, eb, ee2);
            if (bb < 0 || bb > ee || ee > n[r] || (n[r] > 0 && bb == ee))
                FAIL("part %d r %d: bad segment [%d,%d) of %d blocks", p, r, bb, ee, n[r]);
            if (ss != next_split[r] || (r != q->r0 && ss != 0))
                FAIL("part %d r %d: split %d, expected %d", p, r, ss, next_split[r]);
            next_split[r]++;
            if (n[r] == 0) zcov[r]++;
            for (int k = bb; k < ee; k++) cover[base[r] + k]++;
            cost[p] += ee - bb + overhead;
        }
        if (cost[p] > cap) FAIL("part %d costs %lld > bound %lld (T = %lld, P = %d)", p, cost[p], cap, T, P);
    }
    if (cr != b) FAIL("work ends at (%d,%d), b = %d", cr, cblk, b);
    for (long long i = 0; i < total_blocks; i++)
        if (cover[i] != 1) FAIL("flat block %lld covered %d times", i, cover[i]);
    for (int r = 0; r < b; r++) {
        if (n[r] == 0 && zcov[r] != 1) FAIL("0-block request %d owned %d times", r, zcov[r]);
        if (next_split[r] != prefix[r + 1] - prefix[r])
            FAIL("request %d: %d segments, splits_prefix says %d", r, next_split[r], prefix[r + 1] - prefix[r]);
    }
    bad = 0;
out:
    free(n); free(base); free(zcov); free(next_split); free(cover); free(cost);
    return bad;
}

static int n_cases, n_fail;

/* Plans (as the planner kernel does, one part at a time) with canaries past both outputs,
 * validates, reports. Returns 0 on a pass. */
static int run_case(const char *label, const int *seqlens, int t, int b, int block_n, int P, int overhead)
{
    mla_sched_part *parts = malloc(((size_t)P + 1) * sizeof *parts);
    int *prefix = malloc(((size_t)b + 2) * sizeof *prefix);
    long long *C = malloc(((size_t)b + 1) * sizeof *C);
    int bad;
    if (!parts || !prefix || !C) { fprintf(stderr, "out of memory\n"); exit(2); }
    memset(parts, 0x5a, ((size_t)P + 1) * sizeof *parts);
    for (int i = 0; i < b + 2; i++) prefix[i] = CANARY;
    C[0] = 0;
    for (int r = 0; r < b; r++) C[r + 1] = C[r] + mla_sched_blocks(seqlens, t, r, block_n) + overhead;
    const long long cap = mla_sched_cap(C[b], P);
    for (int q = 0; q < P; q++) mla_sched_part_pos(C, b, overhead, cap, q, &parts[q]);
    prefix[0] = 0;
    for (int r = 0; r < b; r++) prefix[r + 1] = prefix[r] + mla_sched_nsplits_pos(C, r, overhead, cap);
    if (parts[P].r0 != CANARY || parts[P].split0 != CANARY || prefix[b + 1] != CANARY) {
        snprintf(why, sizeof why, "wrote past parts[%d] or the prefix[%d]", P, b + 1);
        bad = 1;
    } else {
        bad = validate(seqlens, t, b, block_n, P, overhead, parts, prefix, prefix[b]);
    }
    n_cases++;
    if (bad) {
        n_fail++;
        printf("FAIL %s: b=%d t=%d block_n=%d parts=%d overhead=%d seqlens=%s: %s\n", label, b, t, block_n, P,
               overhead, seqlens ? "varlen" : "NULL", why);
    }
    free(parts);
    free(prefix);
    free(C);
    return bad;
}

static unsigned long long rng_state = 0x9e3779b97f4a7c15ull;
static unsigned rnd(void)   /* splitmix64 */
{
    unsigned long long z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return (unsigned)((z ^ (z >> 31)) >> 32);
}
static int urange(int lo, int hi) { return lo + (int)(rnd() % (unsigned)(hi - lo + 1)); }

/* A small plan worked out by hand (overhead 5, 64-token blocks): n = {4, 0, 3}, costs 9 / 5 / 8,
 * C = {0, 9, 14, 22}, 4 parts, cap = ceil(22 / 4) = 6. Part 0 = units [0, 6): block 0 of
 * request 0 (its blocks are units 5..8); part 1 = [6, 12): blocks 1..3 (split 1); part 2 =
 * [12, 18): request 1, whose last unit is 13 (request 2's blocks start at unit 19); part 3 =
 * [18, 22): request 2. Then mutations of it that the checker must reject. */
static void test_golden_and_mutations(void)
{
    const int lens[3] = {200, 0, 130};
    const mla_sched_part want[4] = {{0, 0, 0, 1, 0}, {0, 1, 0, 4, 1}, {1, 0, 1, 0, 0}, {2, 0, 2, 3, 0}};
    const int want_prefix[4] = {0, 2, 3, 4};
    const long long C[4] = {0, 9, 14, 22};
    mla_sched_part parts[4], m[4];
    int prefix[4], mp[4];
    const long long cap = mla_sched_cap(C[3], 4);
    for (int q = 0; q < 4; q++) mla_sched_part_pos(C, 3, MLA_SCHED_OVERHEAD, cap, q, &parts[q]);
    prefix[0] = 0;
    for (int r = 0; r < 3; r++) prefix[r + 1] = prefix[r] + mla_sched_nsplits_pos(C, r, MLA_SCHED_OVERHEAD, cap);
    const int ret = prefix[3];
    n_cases++;
    if (cap != 6 || memcmp(parts, want, sizeof want) || memcmp(prefix, want_prefix, sizeof want_prefix)) {
        n_fail++;
        printf("FAIL golden: cap %lld prefix {%d,%d,%d,%d} parts", cap, prefix[0], prefix[1], prefix[2], prefix[3]);
        for (int p = 0; p < 4; p++)
            printf(" {%d,%d,%d,%d,%d}", parts[p].r0, parts[p].blk0, parts[p].r1, parts[p].blk1, parts[p].split0);
        printf("\n");
        return;
    }
    if (validate(lens, 256, 3, 64, 4, MLA_SCHED_OVERHEAD, parts, prefix, ret)) {
        n_fail++;
        printf("FAIL golden: checker rejects it: %s\n", why);
        return;
    }
    const mla_sched_part none = {3, 0, -1, 0, 0};
    for (int k = 0; k < 7; k++) {
        int mret = ret;
        memcpy(m, parts, sizeof m);
        memcpy(mp, prefix, sizeof mp);
        switch (k) {
        case 0: m[1].split0 = 0; break;                          /* two splits numbered 0 */
        case 1: m[0].blk1 = 2; break;                            /* block (0,1) covered twice */
        case 2: m[3] = none; break;                              /* request 2 never covered */
        case 3: mp[3] = 5; mret = 5; break;                      /* prefix disagrees with the parts */
        case 4: m[1].r1 = 1; m[1].blk1 = 0; break;               /* request 1 owned twice */
        case 5: m[2] = none; break;                              /* request 1 never owned */
        case 6: m[2].r1 = 2; m[2].blk1 = 3; m[3] = none; break;  /* valid cover, 13 > bound 11 */
        }
        n_cases++;
        if (!validate(lens, 256, 3, 64, 4, MLA_SCHED_OVERHEAD, m, mp, mret)) {
            n_fail++;
            printf("FAIL checker accepts mutation %d\n", k);
        }
    }
}

int main(void)
{
    int *lens = malloc(300 * sizeof *lens);
    if (!lens) return 2;
    test_golden_and_mutations();

    /* b = 0: every part empty, no splits */
    run_case("b=0", NULL, 100, 0, 64, 5, 5);

    /* one request on a full H200-like grid, at the page edges */
    const int ts[] = {1, 63, 64, 65, 127, 128, 129, 1000, 4096, 8191, 20000};
    for (size_t i = 0; i < sizeof ts / sizeof *ts; i++)
        for (int o = 1; o <= 6; o += 5) {
            run_case("b=1 parts=132", NULL, ts[i], 1, 64, 132, o);
            lens[0] = ts[i];
            run_case("b=1 parts=132 len=t", lens, ts[i], 1, 64, 132, o);
            lens[0] = 0;
            run_case("b=1 parts=132 len=0", lens, ts[i], 1, 64, 132, o);
            lens[0] = ts[i] / 2;
            run_case("b=1 parts=132 len=t/2", lens, ts[i], 1, 64, 132, o);
        }

    /* all-zero lengths, with the smallest overhead and the default */
    const int bs[] = {1, 2, 7, 131, 132, 133, 300}, ps[] = {1, 2, 3, 132, 300};
    for (size_t i = 0; i < sizeof bs / sizeof *bs; i++)
        for (size_t j = 0; j < sizeof ps / sizeof *ps; j++)
            for (int o = 1; o <= 5; o += 4) {
                for (int r = 0; r < bs[i]; r++) lens[r] = (r % 3) ? 0 : -5;   /* negative clamps to 0 */
                run_case("all zero", lens, 1000, bs[i], 64, ps[j], o);
                run_case("t=0", NULL, 0, bs[i], 64, ps[j], o);
            }

    /* more parts than blocks; one part; every request full */
    for (int b = 1; b <= 5; b++) {
        run_case("parts > blocks", NULL, 100, b, 64, 300, 5);
        run_case("parts > blocks o=1", NULL, 100, b, 64, 300, 1);
        for (int r = 0; r < b; r++) lens[r] = r & 1 ? 0 : 1;
        run_case("parts > blocks varlen", lens, 100, b, 64, 300, 5);
    }
    run_case("one part", NULL, 20000, 300, 64, 1, 5);
    run_case("full", NULL, 20000, 300, 64, 300, 5);
    run_case("full 132", NULL, 20000, 300, 64, 132, 5);

    /* random */
    const int bns[] = {64, 64, 64, 64, 32, 128, 1};
    for (int c = 0; c < 10000; c++) {
        int b = urange(1, 300), P = urange(1, 300), block_n = bns[urange(0, 6)];
        int t = urange(0, 3) == 0 ? urange(1, 300) : urange(1, 20000);
        int overhead = urange(0, 4) ? MLA_SCHED_OVERHEAD : urange(1, 8);  /* the plan needs >= 1 */
        if (block_n == 1 && t > 3000) t = urange(1, 3000);
        if (urange(0, 9) < 2) { run_case("random", NULL, t, b, block_n, P, overhead); continue; }
        int mode = urange(0, 9);
        for (int r = 0; r < b; r++) {
            int u = urange(0, 99);
            if (mode == 0) lens[r] = t;                                /* uniform batch */
            else if (mode == 1) lens[r] = u < 90 ? 0 : urange(0, t);   /* mostly empty */
            else if (u < 10) lens[r] = 0;
            else if (u < 20) lens[r] = t;
            else if (u < 23) lens[r] = -urange(1, 100);
            else if (u < 26) lens[r] = t + urange(1, 100);
            else if (u < 36) lens[r] = urange(0, t < 130 ? t : 130);   /* around a page */
            else lens[r] = urange(0, t);
        }
        run_case("random", lens, t, b, block_n, P, overhead);
    }
    free(lens);

    if (n_fail) {
        printf("test_split_sched: %d of %d cases FAILED\n", n_fail, n_cases);
        return 1;
    }
    printf("test_split_sched: %d cases passed\n", n_cases);
    return 0;
}
