/*
 * The correctness bar of MLA_SPEC.md as one function: compare a result (out [b, s, h, dv],
 * lse [b, h, s]) with a reference, fill a report (errors, worst element, a one-line verdict).
 *   rel L2 <= 5e-3, every |out - ref| <= 2e-2 * max|ref|, |lse - ref_lse| <= 1e-3 where finite,
 *   -inf exactly where the reference is -inf (and out exactly 0 in those rows), no NaN/Inf in
 *   out, no NaN in lse. All-empty references (max|ref| = 0) demand out == 0 exactly.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "ref.h"

#define REL_L2_TOL 5e-3
#define ELEM_TOL 2e-2
#define LSE_TOL 1e-3

void mla_check_compare(const mla_problem *pb, int dv, const float *out, const float *lse,
                       const float *ref_out, const float *ref_lse, mla_check_report *rep)
{
    if (!rep) return;
    memset(rep, 0, sizeof *rep);
    if (!pb || dv < 1 || !out || !ref_out || pb->b < 1 || pb->s < 1 || pb->h < 1) {
        snprintf(rep->message, sizeof rep->message, "FAIL bad arguments to mla_check_compare");
        return;
    }
    const long rows = (long)pb->b * pb->s * pb->h;
    const size_t n = (size_t)rows * dv;
    double se = 0.0, sr = 0.0;
    long worst = -1, ref_bad = 0, empty_nonzero = 0;
    int worst_is_nan = 0;
    for (size_t i = 0; i < n; i++) {
        double o = out[i], r = ref_out[i];
        if (!isfinite(r)) ref_bad++;
        if (fabs(r) > rep->max_abs_ref) rep->max_abs_ref = fabs(r);
        if (!isfinite(o)) {
            rep->nan_count++;
            if (!worst_is_nan) worst = (long)i, worst_is_nan = 1;   /* a NaN/Inf is the worst element */
            continue;
        }
        double e = fabs(o - r);
        se += e * e;
        sr += r * r;
        if (!worst_is_nan && (worst < 0 || e > rep->max_abs_err)) worst = (long)i;
        if (e > rep->max_abs_err) rep->max_abs_err = e;
    }
    rep->rel_l2 = sr > 0.0 ? sqrt(se / sr) : (se > 0.0 ? INFINITY : 0.0);
    if (worst_is_nan) rep->max_abs_err = INFINITY;

    /* lse: NaN counts as NaN; -inf must match exactly; finite entries within LSE_TOL. Rows whose
     * reference is empty (-inf) must also have out exactly 0 (counted as lse_inf_mismatch). */
    long worst_lse = -1;
    if (lse && ref_lse) {
        for (int r = 0; r < pb->b; r++)
            for (int hh = 0; hh < pb->h; hh++)
                for (int i = 0; i < pb->s; i++) {
                    size_t li = ((size_t)r * pb->h + hh) * pb->s + i;
                    double l = lse[li], rl = ref_lse[li];
                    if (isnan(rl)) {
                        ref_bad++;
                        continue;
                    }
                    if (isnan(l)) {
                        rep->nan_count++;
                        if (worst_lse < 0) worst_lse = (long)li;
                        continue;
                    }
                    if (rl == -INFINITY || l == -INFINITY || !isfinite(l) || !isfinite(rl)) {
                        if (l != rl) {
                            rep->lse_inf_mismatch++;
                            if (worst_lse < 0) worst_lse = (long)li;
                        }
                        if (rl == -INFINITY) {
                            const float *o = out + (((size_t)r * pb->s + i) * pb->h + hh) * dv;
                            for (int e = 0; e < dv; e++)
                                if (o[e] != 0.0f) {
                                    empty_nonzero++;
                                    break;
                                }
                        }
                        continue;
                    }
                    double e = fabs(l - rl);
                    if (e > rep->max_lse_err) {
                        rep->max_lse_err = e;
                        if (e > LSE_TOL) worst_lse = (long)li;
                    }
                }
        rep->lse_inf_mismatch += empty_nonzero;
    }

    if (worst < 0) worst = 0;
    {
        long row = worst / dv;
        rep->worst_i = (int)(worst % dv);
        rep->worst_h = (int)(row % pb->h);
        rep->worst_s = (int)((row / pb->h) % pb->s);
        rep->worst_b = (int)(row / ((long)pb->h * pb->s));
    }

    const double tol = ELEM_TOL * rep->max_abs_ref;
    int ok_rel = rep->rel_l2 <= REL_L2_TOL, ok_elem = rep->max_abs_err <= tol;
    int ok_lse = rep->max_lse_err <= LSE_TOL;
    rep->pass = ok_rel && ok_elem && ok_lse && rep->nan_count == 0 && rep->lse_inf_mismatch == 0 && ref_bad == 0;

    char why[200] = "";
    size_t w = 0;
#define WHY(...) (w += (size_t)snprintf(why + w, w < sizeof why ? sizeof why - w : 0, __VA_ARGS__))
    if (ref_bad) WHY("reference has %ld NaN/Inf; ", ref_bad);
    if (rep->nan_count) WHY("%ld NaN/Inf; ", rep->nan_count);
    if (empty_nonzero) WHY("%ld empty rows with out != 0; ", empty_nonzero);
    if (rep->lse_inf_mismatch - empty_nonzero) WHY("%ld lse -inf mismatches; ", rep->lse_inf_mismatch - empty_nonzero);
    if (!ok_rel) WHY("rel_l2 > %.0e; ", REL_L2_TOL);
    if (!ok_elem) WHY("max_err > tol; ");
    if (!ok_lse) WHY("lse_err > %.0e; ", LSE_TOL);
#undef WHY

    size_t wi = (size_t)worst;
    int m = snprintf(rep->message, sizeof rep->message,
                     "%s %srel_l2=%.1e max_err=%.1e (tol %.1e*%.2g) lse_err=%.0e", rep->pass ? "PASS" : "FAIL",
                     why, rep->rel_l2, rep->max_abs_err, ELEM_TOL, rep->max_abs_ref, rep->max_lse_err);
    if (!rep->pass && m > 0 && (size_t)m < sizeof rep->message) {
        int used = m;
        if (rep->max_abs_err > 0.0)   /* a NaN in out sets it to inf */
            used += snprintf(rep->message + used, sizeof rep->message - used,
                             " worst at b=%d s=%d h=%d i=%d: got %.4g want %.4g", rep->worst_b, rep->worst_s,
                             rep->worst_h, rep->worst_i, (double)out[wi], (double)ref_out[wi]);
        if (worst_lse >= 0 && used > 0 && (size_t)used < sizeof rep->message) {
            long lr = worst_lse / ((long)pb->h * pb->s), lh = (worst_lse / pb->s) % pb->h, ls = worst_lse % pb->s;
            snprintf(rep->message + used, sizeof rep->message - used, "; lse at b=%ld h=%ld s=%ld: got %.6g want %.6g",
                     lr, lh, ls, (double)lse[worst_lse], (double)ref_lse[worst_lse]);
        }
    }
}
