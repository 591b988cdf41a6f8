/*
 * test_check_compare: the comparator implements MLA_SPEC.md's bar. It must accept a copy of the
 * reference with tiny noise, and reject: one element off by 5% of max|ref|, a NaN, an Inf, an
 * unwritten -inf (lse finite where the reference is empty, and the reverse), an empty row with a
 * non-zero out, an lse off by 2e-3, a broad 1% error (rel L2). All-empty references are handled.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ref.h"

static int n_pass, n_fail;

static void expect(const char *name, const mla_check_report *rep, int want_pass)
{
    int ok = rep->pass == want_pass;
    printf("%s %s (want %s): %s\n", ok ? "PASS" : "FAIL", name, want_pass ? "accept" : "reject", rep->message);
    ok ? n_pass++ : n_fail++;
}

static void check(const char *name, int cond)
{
    printf("%s %s\n", cond ? "PASS" : "FAIL", name);
    cond ? n_pass++ : n_fail++;
}

/* deterministic pseudo-random in [-1, 1) */
static uint64_t st = 12345;
static double urand(void)
{
    st = st * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(st >> 11) / 4503599627370496.0 - 1.0;
}

int main(void)
{
    mla_problem pb = {.b = 2, .s = 3, .t = 8, .h = 4, .d = 16, .k = 32, .p = 8, .page_size = 64, .causal = 1,
                      .scale = 0.25f};
    const int dv = 16;
    const size_t no = (size_t)pb.b * pb.s * pb.h * dv, nl = (size_t)pb.b * pb.h * pb.s;
    float *ref = malloc(sizeof(float) * no), *out = malloc(sizeof(float) * no);
    float *rl = malloc(sizeof(float) * nl), *l = malloc(sizeof(float) * nl);
    for (size_t i = 0; i < no; i++) ref[i] = (float)(0.1 * urand());
    for (size_t i = 0; i < nl; i++) rl[i] = (float)(3.0 + urand());
    /* request 1, head 2, query 0 is an empty row: out 0, lse -inf */
    const int eb = 1, es = 0, eh = 2;
    float *erow = ref + (((size_t)eb * pb.s + es) * pb.h + eh) * dv;
    memset(erow, 0, sizeof(float) * dv);
    const size_t eli = ((size_t)eb * pb.h + eh) * pb.s + es;
    rl[eli] = -INFINITY;
    double maxref = 0;
    for (size_t i = 0; i < no; i++) maxref = fmax(maxref, fabs(ref[i]));

#define RESET() (memcpy(out, ref, sizeof(float) * no), memcpy(l, rl, sizeof(float) * nl))
    mla_check_report rep;

    RESET();
    mla_check_compare(&pb, dv, out, l, ref, rl, &rep);
    expect("identical copy", &rep, 1);
    check("identical copy: rel_l2 == 0 and max_abs_ref filled", rep.rel_l2 == 0.0 && rep.max_abs_ref == maxref);

    RESET();
    for (size_t i = 0; i < no; i++)
        if (ref[i] != 0.0f) out[i] = ref[i] * (float)(1.0 + 1e-3 * urand());
    for (size_t i = 0; i < nl; i++)
        if (isfinite(rl[i])) l[i] = rl[i] + (float)(2e-4 * urand());
    mla_check_compare(&pb, dv, out, l, ref, rl, &rep);
    expect("tiny noise (1e-3 relative, lse 2e-4)", &rep, 1);

    /* one element off by 5% of max|ref|: at b=0 s=2 h=1 i=7 */
    RESET();
    size_t wi = (((size_t)0 * pb.s + 2) * pb.h + 1) * dv + 7;
    out[wi] += (float)(0.05 * maxref);
    mla_check_compare(&pb, dv, out, l, ref, rl, &rep);
    expect("one element off by 5% of max|ref|", &rep, 0);
    check("worst element located at b=0 s=2 h=1 i=7",
          rep.worst_b == 0 && rep.worst_s == 2 && rep.worst_h == 1 && rep.worst_i == 7);
    check("message names the worst element", strstr(rep.message, "b=0 s=2 h=1 i=7") != NULL);

    RESET();
    out[5] = NAN;
    mla_check_compare(&pb, dv, out, l, ref, rl, &rep);
    expect("a NaN in out", &rep, 0);
    check("nan_count == 1", rep.nan_count == 1);

    RESET();
    out[9] = INFINITY;
    mla_check_compare(&pb, dv, out, l, ref, rl, &rep);
    expect("an Inf in out", &rep, 0);

    RESET();
    l[3] = NAN;
    mla_check_compare(&pb, dv, out, l, ref, rl, &rep);
    expect("a NaN in lse", &rep, 0);

    RESET();
    l[eli] = 0.0f;   /* the kernel left the empty row's lse unwritten / finite */
    mla_check_compare(&pb, dv, out, l, ref, rl, &rep);
    expect("lse finite where the reference is -inf", &rep, 0);
    check("lse_inf_mismatch == 1", rep.lse_inf_mismatch == 1);

    RESET();
    l[0] = -INFINITY;
    mla_check_compare(&pb, dv, out, l, ref, rl, &rep);
    expect("lse -inf where the reference is finite", &rep, 0);

    RESET();
    erow[0] = 0.0f;
    out[(((size_t)eb * pb.s + es) * pb.h + eh) * dv + 3] = 1e-6f;   /* tiny, but an empty row must be 0 */
    mla_check_compare(&pb, dv, out, l, ref, rl, &rep);
    expect("empty row with out != 0", &rep, 0);

    RESET();
    l[4] += 2e-3f;
    mla_check_compare(&pb, dv, out, l, ref, rl, &rep);
    expect("one lse off by 2e-3", &rep, 0);
    check("max_lse_err ~ 2e-3", fabs(rep.max_lse_err - 2e-3) < 1e-4);

    RESET();
    for (size_t i = 0; i < no; i++) out[i] = ref[i] * 1.01f;   /* within 2e-2*max each, rel L2 1e-2 */
    mla_check_compare(&pb, dv, out, l, ref, rl, &rep);
    expect("every element 1% off (rel L2)", &rep, 0);

    /* all rows empty: max|ref| = 0; exact zeros pass, anything else fails */
    {
        float *z = calloc(no, sizeof(float)), *zo = calloc(no, sizeof(float));
        float *zl = malloc(sizeof(float) * nl), *zol = malloc(sizeof(float) * nl);
        for (size_t i = 0; i < nl; i++) zl[i] = zol[i] = -INFINITY;
        mla_check_compare(&pb, dv, zo, zol, z, zl, &rep);
        expect("all-empty reference, zero output", &rep, 1);
        zo[17] = 1e-20f;
        mla_check_compare(&pb, dv, zo, zol, z, zl, &rep);
        expect("all-empty reference, one non-zero output", &rep, 0);
        free(z), free(zo), free(zl), free(zol);
    }

    /* lse may be omitted (NULL): only out is compared */
    RESET();
    mla_check_compare(&pb, dv, out, NULL, ref, NULL, &rep);
    expect("no lse given", &rep, 1);

    free(ref), free(out), free(rl), free(l);
    printf("%d passed, %d failed\n", n_pass, n_fail);
    return n_fail ? 1 : 0;
}
