/*
 * test_ref_edge: the edges of the references, each ref checked against the naive formula:
 * permuted pages with t in {1, 63, 64, 65} (page boundaries), s > 1 with t < 64, varlen with a
 * zero-length request (out == 0 exactly, lse == -inf), a batch that is all empty, s == t (causal:
 * query 0 sees exactly one token), padded strides and block_table_stride (same bits as packed),
 * thread counts (same bits), bf16 rounding, and argument errors (INVALID_ARGUMENT + a message).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ref.h"
#include "error.h"

static int n_pass, n_fail;

static void check(int cond, const char *fmt, const char *name)
{
    printf("%s %s: %s\n", cond ? "PASS" : "FAIL", name, fmt);
    cond ? n_pass++ : n_fail++;
}

static mla_problem problem(int b, int s, int t, int h, int n, int causal)
{
    mla_problem pb = {.b = b, .s = s, .t = t, .h = h, .d = 128, .k = 512, .p = 64, .n = n, .page_size = 64,
                      .causal = causal, .scale = (float)(1.0 / sqrt(192.0))};
    return pb;
}

/* ref vs naive: each element within 1e-9*max|ref| + one fp32 rounding (see test_ref_naive) */
static int agree(const float *a, const float *b, size_t n)
{
    double maxref = 0.0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(b[i]) && fabs(b[i]) > maxref) maxref = fabs(b[i]);
    for (size_t i = 0; i < n; i++) {
        if (isnan(a[i]) || isnan(b[i])) return 0;
        if (isinf(a[i]) || isinf(b[i])) {
            if (a[i] != b[i]) return 0;
            continue;
        }
        if (fabs((double)a[i] - b[i]) > 1e-9 * maxref + ldexp(fabs(b[i]), -23)) return 0;
    }
    return 1;
}

/* Every row whose visible set is empty has out == 0 exactly and lse == -inf; the others a finite
 * lse and no NaN. Returns the number of empty rows, or -1 on a violation. */
static long check_empty_rows(const mla_problem *pb, const int32_t *seqlens, int dv, const float *out,
                             const float *lse)
{
    long empty = 0;
    for (int r = 0; r < pb->b; r++)
        for (int i = 0; i < pb->s; i++)
            for (int hh = 0; hh < pb->h; hh++) {
                int vis = mla_ref_visible(seqlens ? seqlens[r] : pb->t, pb->s, i, pb->causal);
                const float *o = out + (((size_t)r * pb->s + i) * pb->h + hh) * dv;
                float l = lse[((size_t)r * pb->h + hh) * pb->s + i];
                if (vis == 0) {
                    empty++;
                    if (l != -INFINITY) return -1;
                    for (int e = 0; e < dv; e++)
                        if (o[e] != 0.0f) return -1;
                } else {
                    if (!isfinite(l)) return -1;
                    for (int e = 0; e < dv; e++)
                        if (!isfinite(o[e])) return -1;
                }
            }
    return empty;
}

typedef struct outs {
    float *o1, *o2, *l1, *l2;
} outs;

static outs outs_alloc(const mla_problem *pb)
{
    size_t rows = (size_t)pb->b * pb->s * pb->h;
    outs o = {malloc(sizeof(float) * rows * 512), malloc(sizeof(float) * rows * 512), malloc(sizeof(float) * rows),
              malloc(sizeof(float) * rows)};
    return o;
}
static void outs_free(outs *o) { free(o->o1), free(o->o2), free(o->l1), free(o->l2); }

/* all three refs vs naive on one generated problem; with `empties` >= 0 also the empty-row rule,
 * and that exactly `empties` rows are empty */
static void refs_vs_naive(const char *name, const mla_problem *pb, const mla_gen_options *opt, long empties)
{
    mla_gen g;
    if (mla_gen_create(pb, opt, &g) != MLA_STATUS_OK) {
        check(0, mla_last_error(), name);
        return;
    }
    outs o = outs_alloc(pb);
    size_t rows = (size_t)pb->b * pb->s * pb->h;
    char what[256];
    mla_flash_attention_tensors fa;
    mla_flash_mla_tensors ml;
    mla_var6_plus_tensors v6;
    mla_gen_flash_attention_tensors(&g, &fa);
    mla_gen_flash_mla_tensors(&g, &ml);
    mla_gen_var6_plus_tensors(&g, &v6);
    for (int des = 0; des < 3; des++) {
        mla_status s1, s2;
        int dv = des == 1 ? pb->k : pb->d;
        const char *dn = des == 0 ? "flash_attention" : des == 1 ? "flash_mla" : "mla_var6_plus";
        if (des == 0) {
            s1 = mla_ref_flash_attention(pb, &fa, o.o1, o.l1, 0);
            s2 = mla_naive_flash_attention(pb, &fa, o.o2, o.l2);
        } else if (des == 1) {
            s1 = mla_ref_flash_mla(pb, &ml, o.o1, o.l1, 0);
            s2 = mla_naive_flash_mla(pb, &ml, o.o2, o.l2);
        } else {
            s1 = mla_ref_var6_plus(pb, &v6, o.o1, o.l1, 0);
            s2 = mla_naive_var6_plus(pb, &v6, o.o2, o.l2);
        }
        int ok = s1 == MLA_STATUS_OK && s2 == MLA_STATUS_OK && agree(o.o1, o.o2, rows * dv) && agree(o.l1, o.l2, rows);
        long e1 = ok ? check_empty_rows(pb, g.seqlens, dv, o.o1, o.l1) : -1;
        long e2 = ok ? check_empty_rows(pb, g.seqlens, dv, o.o2, o.l2) : -1;
        if (empties >= 0) ok = ok && e1 == empties && e2 == empties;
        else ok = ok && e1 >= 0 && e2 >= 0;
        snprintf(what, sizeof what, "%s ref == naive, empty rows %ld/%ld (want %ld)%s%s", dn, e1, e2, empties,
                 s1 || s2 ? ": " : "", s1 || s2 ? mla_last_error() : "");
        check(ok, what, name);
    }
    outs_free(&o);
    mla_gen_destroy(&g);
}

/* ------------------------------------------------------------------------------------------ */

static void test_pages(void)
{
    const int ts[4] = {1, 63, 64, 65};
    for (int i = 0; i < 4; i++) {
        mla_problem pb = problem(2, 1, ts[i], 16, ts[i] / 2, 1);
        mla_gen_options opt = {.seed = 200 + i, .permute_pages = 1};
        char name[96];
        snprintf(name, sizeof name, "permuted pages t=%d n=%d", ts[i], pb.n);
        refs_vs_naive(name, &pb, &opt, 0);
    }
    /* several pages, a page boundary inside the new part */
    mla_problem pb = problem(2, 3, 200, 16, 70, 1);
    mla_gen_options opt = {.seed = 210, .permute_pages = 1, .varlen = 1};
    refs_vs_naive("permuted pages varlen t=200 n=70", &pb, &opt, -1);
}

static void test_small_t(void)
{
    mla_problem pb = problem(2, 8, 20, 16, 5, 1);
    mla_gen_options opt = {.seed = 220};
    refs_vs_naive("s=8 t=20 causal", &pb, &opt, 0);
    pb.causal = 0;
    refs_vs_naive("s=8 t=20 not causal", &pb, &opt, 0);
}

static void test_zero_length(void)
{
    /* request 0 has t_r = 0: its s*h rows are empty (others may be too when t_r < s, counted
     * by mla_ref_visible inside check_empty_rows) */
    mla_problem pb = problem(3, 4, 100, 16, 30, 1);
    mla_gen_options opt = {.seed = 230, .varlen = 1, .zero_length = 1, .permute_pages = 1};
    mla_gen g;
    if (mla_gen_create(&pb, &opt, &g) == MLA_STATUS_OK) {
        int full = 0;
        for (int r = 0; r < pb.b; r++) full |= g.seqlens[r] == pb.t;
        check(g.seqlens[0] == 0 && full, "gen: seqlens[0] == 0 and one request has t", "zero_length varlen");
        mla_gen_destroy(&g);
    }
    refs_vs_naive("zero_length varlen b=3", &pb, &opt, -1);
    /* b == 1 with zero_length: every row empty */
    mla_problem p1 = problem(1, 2, 50, 16, 10, 1);
    refs_vs_naive("zero_length b=1 (all empty)", &p1, &opt, (long)p1.s * p1.h);
    /* the comparator on an all-empty reference */
    if (mla_gen_create(&p1, &opt, &g) == MLA_STATUS_OK) {
        mla_flash_mla_tensors ml;
        mla_gen_flash_mla_tensors(&g, &ml);
        outs o = outs_alloc(&p1);
        mla_ref_flash_mla(&p1, &ml, o.o1, o.l1, 0);
        mla_naive_flash_mla(&p1, &ml, o.o2, o.l2);
        mla_check_report rep;
        mla_check_compare(&p1, p1.k, o.o1, o.l1, o.o2, o.l2, &rep);
        check(rep.pass && rep.max_abs_ref == 0.0, rep.message, "all-empty compare");
        outs_free(&o);
        mla_gen_destroy(&g);
    }
}

static void test_s_eq_t(void)
{
    /* s == t, causal: query 0 sees position 0 only, so out = v_0 and lse = score(0, 0) */
    mla_problem pb = problem(1, 5, 5, 16, 2, 1);
    mla_gen_options opt = {.seed = 240};
    refs_vs_naive("s == t == 5 causal", &pb, &opt, 0);
    mla_gen g;
    if (mla_gen_create(&pb, &opt, &g) != MLA_STATUS_OK) return;
    outs o = outs_alloc(&pb);
    const int d = pb.d, k = pb.k, p = pb.p, h = pb.h;
    int ok_fa = 1, ok_ml = 1, ok_v6 = 1;
    mla_flash_attention_tensors fa;
    mla_gen_flash_attention_tensors(&g, &fa);
    mla_ref_flash_attention(&pb, &fa, o.o1, o.l1, 0);
    mla_flash_mla_tensors ml;
    mla_gen_flash_mla_tensors(&g, &ml);
    mla_ref_flash_mla(&pb, &ml, o.o2, o.l2, 0);
    for (int hh = 0; hh < h; hh++) {
        /* out row (r=0, i=0, hh) is out[hh]; lse[0, hh, 0] is lse[hh * s] */
        double sc = 0;
        for (int e = 0; e < d + p; e++)
            sc += (double)mla_bf16_to_f32(g.fa_q[hh * (d + p) + e]) * mla_bf16_to_f32(g.fa_k[hh * (d + p) + e]);
        sc *= pb.scale;
        for (int e = 0; e < d; e++) ok_fa &= o.o1[hh * d + e] == mla_bf16_to_f32(g.fa_v[hh * d + e]);
        ok_fa &= fabs(o.l1[hh * pb.s] - sc) <= 1e-6 * fabs(sc) + 1e-7;
        /* flash_mla: out = c_0[:k]; c_0 is c_kv[0] */
        double sm = 0;
        for (int e = 0; e < k; e++) sm += (double)mla_bf16_to_f32(g.mla_q[hh * (k + p) + e]) * mla_bf16_to_f32(g.c_kv[e]);
        for (int e = 0; e < p; e++)
            sm += (double)mla_bf16_to_f32(g.mla_q[hh * (k + p) + k + e]) * mla_bf16_to_f32(g.k_rope[e]);
        sm *= pb.scale;
        for (int e = 0; e < k; e++) ok_ml &= o.o2[hh * k + e] == mla_bf16_to_f32(g.c_kv[e]);
        ok_ml &= fabs(o.l2[hh * pb.s] - sm) <= 1e-6 * fabs(sm) + 1e-7;
    }
    /* var6 with n = 2: o = 3, position 0 is old: out = c_0[:k] @ w_uv[h] */
    mla_var6_plus_tensors v6;
    mla_gen_var6_plus_tensors(&g, &v6);
    mla_ref_var6_plus(&pb, &v6, o.o1, o.l1, 0);
    for (int hh = 0; hh < h; hh++)
        for (int e = 0; e < d; e++) {
            double a = 0;
            for (int c = 0; c < k; c++)
                a += (double)mla_bf16_to_f32(g.c_kv[c]) * mla_bf16_to_f32(g.w_uv[((size_t)hh * k + c) * d + e]);
            ok_v6 &= fabs(o.o1[hh * d + e] - a) <= 1e-6 * fabs(a) + 1e-9;
        }
    check(ok_fa, "flash_attention query 0 = v_0, lse = its score", "s == t");
    check(ok_ml, "flash_mla query 0 = c_0[:k], lse = its score", "s == t");
    check(ok_v6, "mla_var6_plus query 0 = c_0[:k] @ w_uv", "s == t");
    outs_free(&o);
    mla_gen_destroy(&g);
}

/* Copy a packed [n0, n1, n2, n3] bf16 tensor into a padded layout; strides out in st. */
static uint16_t *pad4(const uint16_t *src, int n0, int n1, int n2, int n3, int64_t st[3])
{
    st[2] = n3 + 8;
    st[1] = st[2] * n2 + 16;
    st[0] = st[1] * n1 + 24;
    uint16_t *dst = malloc(sizeof(uint16_t) * (size_t)(st[0] * (n0 ? n0 : 1) + 8));
    for (size_t i = 0; i < (size_t)(st[0] * (n0 ? n0 : 1) + 8); i++) dst[i] = 0x7fc0;   /* NaN in the gaps */
    for (int a = 0; a < n0; a++)
        for (int b = 0; b < n1; b++)
            for (int c = 0; c < n2; c++)
                memcpy(dst + a * st[0] + b * st[1] + c * st[2], src + (((size_t)a * n1 + b) * n2 + c) * n3,
                       sizeof(uint16_t) * n3);
    return dst;
}

static void test_strides_threads(void)
{
    mla_problem pb = problem(2, 3, 100, 16, 40, 1);
    mla_gen_options opt = {.seed = 250, .varlen = 1, .permute_pages = 1};
    mla_gen g;
    if (mla_gen_create(&pb, &opt, &g) != MLA_STATUS_OK) return;
    outs o = outs_alloc(&pb);
    size_t rows = (size_t)pb.b * pb.s * pb.h;
    const int b = pb.b, s = pb.s, t = pb.t, h = pb.h, d = pb.d, k = pb.k, p = pb.p, n = pb.n;

    /* flash_attention padded vs packed (strides 0 = packed as well) */
    mla_flash_attention_tensors fa, fz, fp;
    mla_gen_flash_attention_tensors(&g, &fa);
    fz = fa;
    memset(fz.q_strides, 0, sizeof fz.q_strides), memset(fz.k_strides, 0, sizeof fz.k_strides);
    memset(fz.v_strides, 0, sizeof fz.v_strides);
    fp = fa;
    uint16_t *pq = pad4(g.fa_q, b, s, h, d + p, fp.q_strides), *pk = pad4(g.fa_k, b, t, h, d + p, fp.k_strides);
    uint16_t *pv = pad4(g.fa_v, b, t, h, d, fp.v_strides);
    fp.q = pq, fp.k = pk, fp.v = pv;
    mla_ref_flash_attention(&pb, &fa, o.o1, o.l1, 1);
    int ok = 1;
    mla_ref_flash_attention(&pb, &fz, o.o2, o.l2, 2);
    ok &= !memcmp(o.o1, o.o2, sizeof(float) * rows * d) && !memcmp(o.l1, o.l2, sizeof(float) * rows);
    check(ok, "strides 0 == packed strides, threads 1 vs 2: same bits", "flash_attention strides");
    mla_ref_flash_attention(&pb, &fp, o.o2, o.l2, 7);
    ok = !memcmp(o.o1, o.o2, sizeof(float) * rows * d) && !memcmp(o.l1, o.l2, sizeof(float) * rows);
    mla_naive_flash_attention(&pb, &fp, o.o2, o.l2);
    ok &= agree(o.o2, o.o1, rows * d) && agree(o.l2, o.l1, rows);
    check(ok, "padded strides (NaN in the gaps): ref same bits, naive agrees", "flash_attention strides");

    /* flash_mla: padded q, block table with a larger row stride */
    mla_flash_mla_tensors ml, mp;
    mla_gen_flash_mla_tensors(&g, &ml);
    mp = ml;
    uint16_t *pmq = pad4(g.mla_q, b, s, h, k + p, mp.q_strides);
    mp.q = pmq;
    int bts = g.max_pages + 3;
    int32_t *bt = malloc(sizeof(int32_t) * (size_t)b * bts);
    for (int r = 0; r < b; r++)
        for (int q = 0; q < bts; q++) bt[r * bts + q] = q < g.max_pages ? g.block_table[r * g.max_pages + q] : -1;
    mp.block_table = bt;
    mp.block_table_stride = bts;
    mla_ref_flash_mla(&pb, &ml, o.o1, o.l1, 0);
    mla_ref_flash_mla(&pb, &mp, o.o2, o.l2, 5);
    ok = !memcmp(o.o1, o.o2, sizeof(float) * rows * k) && !memcmp(o.l1, o.l2, sizeof(float) * rows);
    mla_naive_flash_mla(&pb, &mp, o.o2, o.l2);
    ok &= agree(o.o2, o.o1, rows * k) && agree(o.l2, o.l1, rows);
    check(ok, "padded q, block_table_stride = max_pages + 3: same bits, naive agrees", "flash_mla strides");

    /* var6: every strided tensor padded */
    mla_var6_plus_tensors v6, vp;
    mla_gen_var6_plus_tensors(&g, &v6);
    vp = v6;
    uint16_t *a1 = pad4(g.q_lat, b, s, h, k, vp.q_lat_strides), *a2 = pad4(g.q_nope, b, s, h, d, vp.q_nope_strides);
    uint16_t *a3 = pad4(g.q_rope, b, s, h, p, vp.q_rope_strides), *a4 = pad4(g.v6_k_nope, b, n, h, d, vp.k_nope_strides);
    uint16_t *a5 = pad4(g.v6_v, b, n, h, d, vp.v_strides);
    int64_t krs[3];
    uint16_t *a6 = pad4(g.v6_k_rope, b, n, 1, p, krs);   /* [b, n, p]: a unit head dim */
    vp.k_rope_strides[0] = krs[0], vp.k_rope_strides[1] = krs[1];
    vp.q_lat = a1, vp.q_nope = a2, vp.q_rope = a3, vp.k_nope = a4, vp.v = a5, vp.k_rope = a6;
    vp.block_table = bt, vp.block_table_stride = bts;
    mla_ref_var6_plus(&pb, &v6, o.o1, o.l1, 0);
    mla_ref_var6_plus(&pb, &vp, o.o2, o.l2, 3);
    ok = !memcmp(o.o1, o.o2, sizeof(float) * rows * d) && !memcmp(o.l1, o.l2, sizeof(float) * rows);
    mla_naive_var6_plus(&pb, &vp, o.o2, o.l2);
    ok &= agree(o.o2, o.o1, rows * d) && agree(o.l2, o.l1, rows);
    check(ok, "all tensors padded: same bits, naive agrees", "mla_var6_plus strides");

    free(pq), free(pk), free(pv), free(pmq), free(bt), free(a1), free(a2), free(a3), free(a4), free(a5), free(a6);
    outs_free(&o);
    mla_gen_destroy(&g);
}

static void test_bf16(void)
{
    struct {
        float f;
        uint16_t want;
    } c[] = {
        {1.0f, 0x3f80},
        {1.0f + 1.0f / 256, 0x3f80},          /* tie -> even (down) */
        {1.0f + 3.0f / 256, 0x3f82},          /* tie -> even (up) */
        {1.0f + 1.0f / 256 + 1.0f / 65536, 0x3f81},   /* above the tie -> up */
        {-2.5f, 0xc020},
        {-0.0f, 0x8000},
        {INFINITY, 0x7f80},
        {-INFINITY, 0xff80},
        {3.4028235e38f, 0x7f80},             /* FLT_MAX rounds to inf (nearest) */
    };
    int ok = 1;
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) ok &= mla_f32_to_bf16(c[i].f) == c[i].want;
    ok &= isnan(mla_bf16_to_f32(mla_f32_to_bf16(NAN)));
    uint32_t snan_bits = 0x7f800001u;   /* a NaN whose payload would round away: must stay NaN */
    float snan;
    memcpy(&snan, &snan_bits, sizeof snan);
    ok &= isnan(mla_bf16_to_f32(mla_f32_to_bf16(snan)));
    ok &= mla_bf16_to_f32(0x3f80) == 1.0f && mla_bf16_to_f32(0xc020) == -2.5f;
    check(ok, "round to nearest even, NaN stays NaN, inf stays inf", "bf16");
}

static void expect_invalid(const char *name, mla_status st)
{
    int ok = st == MLA_STATUS_INVALID_ARGUMENT && mla_last_error()[0] != '\0';
    char msg[1200];
    snprintf(msg, sizeof msg, "status %d, message \"%s\"", (int)st, mla_last_error());
    check(ok, msg, name);
    mla_clear_error();
}

static void test_errors(void)
{
    mla_problem pb = problem(2, 2, 70, 16, 20, 1);
    mla_gen_options opt = {.seed = 260};
    mla_gen g;
    if (mla_gen_create(&pb, &opt, &g) != MLA_STATUS_OK) return;
    outs o = outs_alloc(&pb);
    mla_flash_attention_tensors fa, f2;
    mla_flash_mla_tensors ml, m2;
    mla_var6_plus_tensors v6, v2;
    mla_gen_flash_attention_tensors(&g, &fa);
    mla_gen_flash_mla_tensors(&g, &ml);
    mla_gen_var6_plus_tensors(&g, &v6);
    mla_problem bad;
    mla_clear_error();

    expect_invalid("ref_flash_attention NULL problem", mla_ref_flash_attention(NULL, &fa, o.o1, o.l1, 0));
    expect_invalid("ref_flash_attention NULL tensors", mla_ref_flash_attention(&pb, NULL, o.o1, o.l1, 0));
    expect_invalid("ref_flash_attention NULL out", mla_ref_flash_attention(&pb, &fa, NULL, o.l1, 0));
    f2 = fa, f2.q = NULL;
    expect_invalid("ref_flash_attention NULL q", mla_ref_flash_attention(&pb, &f2, o.o1, o.l1, 0));
    expect_invalid("naive_flash_attention NULL q", mla_naive_flash_attention(&pb, &f2, o.o1, o.l1));
    f2 = fa, f2.k_strides[1] = -1;
    expect_invalid("ref_flash_attention negative stride", mla_ref_flash_attention(&pb, &f2, o.o1, o.l1, 0));
    bad = pb, bad.scale = 0.0f;
    expect_invalid("ref_flash_attention scale 0", mla_ref_flash_attention(&bad, &fa, o.o1, o.l1, 0));
    bad = pb, bad.scale = NAN;
    expect_invalid("ref_flash_attention scale NaN", mla_ref_flash_attention(&bad, &fa, o.o1, o.l1, 0));
    bad = pb, bad.s = pb.t + 1;
    expect_invalid("ref_flash_attention s > t", mla_ref_flash_attention(&bad, &fa, o.o1, o.l1, 0));
    bad = pb, bad.b = 0;
    expect_invalid("ref_flash_attention b = 0", mla_ref_flash_attention(&bad, &fa, o.o1, o.l1, 0));
    int32_t sl[2] = {10, 71};
    f2 = fa, f2.seqlens = sl;
    expect_invalid("ref_flash_attention seqlen > t", mla_ref_flash_attention(&pb, &f2, o.o1, o.l1, 0));

    m2 = ml, m2.cache = NULL;
    expect_invalid("ref_flash_mla NULL cache", mla_ref_flash_mla(&pb, &m2, o.o1, o.l1, 0));
    expect_invalid("naive_flash_mla NULL cache", mla_naive_flash_mla(&pb, &m2, o.o1, o.l1));
    m2 = ml, m2.block_table = NULL;
    expect_invalid("ref_flash_mla NULL block_table", mla_ref_flash_mla(&pb, &m2, o.o1, o.l1, 0));
    int32_t *bt = malloc(sizeof(int32_t) * (size_t)pb.b * g.max_pages);
    memcpy(bt, g.block_table, sizeof(int32_t) * (size_t)pb.b * g.max_pages);
    bt[g.max_pages + 1] = g.num_pages;   /* request 1, page 1 (tokens 64..69): outside the cache */
    m2 = ml, m2.block_table = bt;
    expect_invalid("ref_flash_mla block_table entry out of range", mla_ref_flash_mla(&pb, &m2, o.o1, o.l1, 0));
    m2 = ml, m2.max_pages = 1;
    expect_invalid("ref_flash_mla max_pages too small", mla_ref_flash_mla(&pb, &m2, o.o1, o.l1, 0));
    bad = pb, bad.page_size = 0;
    expect_invalid("ref_flash_mla page_size 0", mla_ref_flash_mla(&bad, &ml, o.o1, o.l1, 0));

    v2 = v6, v2.w_uv = NULL;
    expect_invalid("ref_var6_plus NULL w_uv", mla_ref_var6_plus(&pb, &v2, o.o1, o.l1, 0));
    v2 = v6, v2.k_nope = NULL;
    expect_invalid("ref_var6_plus NULL k_nope", mla_ref_var6_plus(&pb, &v2, o.o1, o.l1, 0));
    expect_invalid("naive_var6_plus NULL k_nope", mla_naive_var6_plus(&pb, &v2, o.o1, o.l1));
    v2 = v6, v2.q_lat = NULL;
    expect_invalid("ref_var6_plus NULL q_lat", mla_ref_var6_plus(&pb, &v2, o.o1, o.l1, 0));
    bad = pb, bad.n = pb.t + 1;
    expect_invalid("ref_var6_plus n > t", mla_ref_var6_plus(&bad, &v6, o.o1, o.l1, 0));
    bt[g.max_pages + 1] = g.block_table[g.max_pages + 1];
    bt[g.max_pages] = -1;   /* var6 (o = 50) reads only page 0 of the cache: break that one */
    v2 = v6, v2.block_table = bt;
    expect_invalid("ref_var6_plus block_table entry out of range", mla_ref_var6_plus(&pb, &v2, o.o1, o.l1, 0));

    /* allowed: lse NULL (not written); n = 0 with no new-part buffers */
    int ok = mla_ref_flash_mla(&pb, &ml, o.o1, NULL, 0) == MLA_STATUS_OK;
    bad = pb, bad.n = 0;
    v2 = v6, v2.k_nope = NULL, v2.v = NULL, v2.k_rope = NULL;
    ok &= mla_ref_var6_plus(&bad, &v2, o.o1, o.l1, 0) == MLA_STATUS_OK;
    ok &= mla_naive_var6_plus(&bad, &v2, o.o1, o.l1) == MLA_STATUS_OK;
    check(ok, "lse NULL accepted; n = 0 needs no new-part buffers", "allowed cases");

    bad = pb, bad.n = -1;
    mla_gen g2;
    expect_invalid("gen_create n < 0", mla_gen_create(&bad, &opt, &g2));

    free(bt);
    outs_free(&o);
    mla_gen_destroy(&g);
}

int main(void)
{
    test_bf16();
    test_pages();
    test_small_t();
    test_zero_length();
    test_s_eq_t();
    test_strides_threads();
    test_errors();
    printf("%d passed, %d failed\n", n_pass, n_fail);
    return n_fail ? 1 : 0;
}
