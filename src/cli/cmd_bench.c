/*
 * `mla_var3 bench-all`: MLA_SPEC.md's benchmark grid for every runnable version. Each row is
 * planned (default tiling or cached winner), timed by CUDA-graph replay (warm-up 5, median of
 * 30), and reported with TFLOP/s, GB/s, % of the roofline floor and, for flash_mla, FlashMLA's
 * figure from ANCHORS.md. Writes bench.md, bench.json and an SVG chart of b=32, t=4096.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cli.h"
#include "plan.h"
#include "autotune.h"
#include "measure.h"

/* FlashMLA on the lent H200 (flash_mla rows only), copied from /work/shared/ANCHORS.md,
 * "FlashMLA (DeepSeek's SM90 dense decode, bf16, page 64)": b, h, t, s, microseconds. */
static const struct { int b, h, t, s; double us; } flashmla_anchor[] = {
    {128, 16, 4096, 1, 164.5}, {128, 16, 8192, 1, 309.1},
    {128, 128, 4096, 1, 256.6}, {128, 128, 8192, 1, 523.8}, {128, 128, 8192, 2, 926.1},
    {32, 128, 4096, 1, 76.0}, {32, 128, 4096, 2, 115.8}, {32, 128, 4096, 4, 226.1},
    {32, 128, 4096, 8, 470.9}, {32, 128, 4096, 16, 900.0}, {32, 128, 4096, 32, 1808.5},
    {32, 128, 4096, 64, 3679.6}, {32, 128, 4096, 128, 7302.5},
    {64, 128, 4096, 1, 124.6}, {64, 128, 4096, 16, 1853.9},
};

static double anchor_us(const mla_problem *pb)
{
    if (pb->design != MLA_DESIGN_FLASH_MLA) return 0;
    for (size_t i = 0; i < sizeof flashmla_anchor / sizeof flashmla_anchor[0]; i++)
        if (flashmla_anchor[i].b == pb->b && flashmla_anchor[i].h == pb->h && flashmla_anchor[i].t == pb->t &&
            flashmla_anchor[i].s == pb->s)
            return flashmla_anchor[i].us;
    return 0;
}

/* --passes: how often the whole grid runs (each pass in its own order); a row reports the median
 * of its passes' medians and their range. */
#define BENCH_MAX_PASSES 16

typedef struct brow {
    mla_problem pb;
    const mla_kernel_version *kv;
    int ok;
    double us, tflops, gbs, floor_us, pct, anchor;
    double pass_us[BENCH_MAX_PASSES];
    /* each pass's median of its first and of its last CLI_SERIES_ENDS timed runs: on the H200 a
     * row started on an idle card is uncapped at the start and power-capped at the end */
    double pass_first_us[BENCH_MAX_PASSES], pass_last_us[BENCH_MAX_PASSES];
    int npass;
    char tiling[160], source[32], why[512];
} brow;

typedef struct grid {
    brow *r;
    int n, cap;
} grid;

static void base_problem(mla_problem *pb, mla_design d, int b, int h, int t, int s, int n)
{
    mla_problem_init(pb, d);
    pb->design = d;
    pb->b = b; pb->h = h; pb->t = t; pb->s = s; pb->n = d == MLA_DESIGN_MLA_VAR6_PLUS ? n : 0;
    pb->d = 128; pb->k = 512; pb->p = 64; pb->page_size = 64; pb->causal = 1;
    pb->scale = (float)(1.0 / sqrt(192.0));
}

/* --versions=a,b: only these versions (NULL: all). */
static const char *g_only;

static int version_selected(const char *name) { return !g_only || mla_name_in_list(g_only, name); }

static void add_problem(grid *g, const mla_problem *pb)
{
    for (int i = 0; i < mla_registry_count(); i++) {
        const mla_kernel_version *kv = mla_registry_get(i);
        if (!kv || kv->design != pb->design || !version_selected(kv->name)) continue;
        if (g->n == g->cap) {
            g->cap = g->cap ? g->cap * 2 : 64;
            g->r = realloc(g->r, (size_t)g->cap * sizeof *g->r);
        }
        brow *r = &g->r[g->n++];
        memset(r, 0, sizeof *r);
        r->pb = *pb;
        r->kv = kv;
    }
}

/* The n that minimises the hybrid floor (page-sized steps), at the given peaks. */
static int best_hybrid_n(int b, int h, int t, int s, double tf, double gbs)
{
    int best = 0;
    double best_floor = 1e300;
    for (int n = 0; n <= t; n += 64) {
        mla_problem pb;
        base_problem(&pb, MLA_DESIGN_MLA_VAR6_PLUS, b, h, t, s, n);
        cli_roofline r;
        cli_roofline_compute(&pb, 1.0, tf, gbs, &r);
        if (r.floor_us < best_floor) { best_floor = r.floor_us; best = n; }
    }
    return best;
}

static void add_design_rows(grid *g, mla_design d, int b, int h, int t, int s, double tf, double gbs, int quick)
{
    mla_problem pb;
    if (d != MLA_DESIGN_MLA_VAR6_PLUS) {
        base_problem(&pb, d, b, h, t, s, 0);
        add_problem(g, &pb);
        return;
    }
    int ns[4] = {t / 2, 0, t / 4, best_hybrid_n(b, h, t, s, tf, gbs)};
    int count = quick ? 1 : 4;
    for (int i = 0; i < count; i++) {
        int dup = 0;
        for (int j = 0; j < i; j++) dup |= ns[j] == ns[i];
        if (dup) continue;
        base_problem(&pb, d, b, h, t, s, ns[i]);
        add_problem(g, &pb);
    }
}

static void build_grid(grid *g, int quick, double tf, double gbs)
{
    static const int s_all[] = {1, 2, 4, 8, 16, 32, 64, 128};
    for (int d = 0; d < 3; d++) {
        if (quick) {
            add_design_rows(g, (mla_design)d, 32, 128, 4096, 1, tf, gbs, 1);
            add_design_rows(g, (mla_design)d, 32, 128, 4096, 16, tf, gbs, 1);
            continue;
        }
        for (size_t i = 0; i < sizeof s_all / sizeof s_all[0]; i++)
            add_design_rows(g, (mla_design)d, 32, 128, 4096, s_all[i], tf, gbs, 0);
        add_design_rows(g, (mla_design)d, 64, 128, 4096, 1, tf, gbs, 0);
        add_design_rows(g, (mla_design)d, 64, 128, 4096, 16, tf, gbs, 0);
        for (int t = 4096; t <= 8192; t *= 2)
            for (int s = 1; s <= 2; s++) add_design_rows(g, (mla_design)d, 128, 128, t, s, tf, gbs, 0);
    }
    /* memory-bound decode, flash_mla only */
    add_design_rows(g, MLA_DESIGN_FLASH_MLA, 128, 16, 4096, 1, tf, gbs, 0);
    if (!quick) add_design_rows(g, MLA_DESIGN_FLASH_MLA, 128, 16, 8192, 1, tf, gbs, 0);
}

static mla_status plan_design(const mla_problem *pb, const mla_plan_options *po, mla_plan_t *plan)
{
    switch (pb->design) {
    case MLA_DESIGN_FLASH_ATTENTION: return mla_flash_attention_plan(pb, po, plan);
    case MLA_DESIGN_FLASH_MLA: return mla_flash_mla_plan(pb, po, plan);
    default: return mla_var6_plus_plan(pb, po, plan);
    }
}

static int same_problem(const mla_problem *a, const mla_problem *b)
{
    return a->design == b->design && a->b == b->b && a->h == b->h && a->t == b->t && a->s == b->s && a->n == b->n;
}

/* The order the rows run in. A problem's versions are consecutive in the grid (registry
 * order); with `alternate` every second problem runs them in reverse. On the H200 under its
 * 700 W cap the version measured second on a long row lost 8-10 % to the first in both rounds
 * of an alternated A/B (2026-11-30), so a fixed order biases a mixed bench against the newer
 * versions on every row. Alternating does not remove that from a row; it stops it from always
 * favouring the same version. `flip` (every second --passes pass) reverses every problem, so that
 * over two passes each version of a problem runs once first and once last. */
static void exec_order(const grid *g, int alternate, int flip, int *ord)
{
    int n = 0, group = 0;
    for (int i = 0; i < g->n;) {
        int j = i + 1;
        while (j < g->n && same_problem(&g->r[j].pb, &g->r[i].pb)) j++;
        for (int k = 0; k < j - i; k++) ord[n++] = alternate && ((group ^ flip) & 1) ? j - 1 - k : i + k;
        group++;
        i = j;
    }
}

static int cmp_dbl(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* A row's result over its passes: the median of the passes' medians (the mean of the middle two
 * for an even count), with the roofline figures at that time. */
static void finish_row(brow *r, double tf, double gbs)
{
    if (r->npass == 0) return;
    double t[BENCH_MAX_PASSES];
    memcpy(t, r->pass_us, (size_t)r->npass * sizeof t[0]);
    qsort(t, (size_t)r->npass, sizeof t[0], cmp_dbl);
    r->us = r->npass % 2 ? t[r->npass / 2] : 0.5 * (t[r->npass / 2 - 1] + t[r->npass / 2]);
    cli_roofline rf;
    cli_roofline_compute(&r->pb, r->us, tf, gbs, &rf);
    r->ok = 1;
    r->tflops = rf.tflops;
    r->gbs = rf.gbs;
    r->floor_us = rf.floor_us;
    r->pct = rf.pct_of_floor;
}

static void pass_range(const brow *r, double *lo, double *hi)
{
    *lo = *hi = r->pass_us[0];
    for (int i = 1; i < r->npass; i++) {
        if (r->pass_us[i] < *lo) *lo = r->pass_us[i];
        if (r->pass_us[i] > *hi) *hi = r->pass_us[i];
    }
}

/* --cool=MS: the host sleeps MS ms (the card idle) before timing each row, so that every row starts
 * from the same state: on the H200 the first ~40-80 ms of full load run uncapped, and rows back to
 * back are otherwise capped from their first call (flash_mla devlog, twenty-sixth session). */
static void cool_down(int ms)
{
    if (ms <= 0) return;
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

static void run_rows(grid *g, const int *ord, const mla_device_info *dev, int ordinal, double tf, double gbs,
                     int autotune, mla_page_order pages, int cool_ms)
{
    mla_dev_inputs in;
    int have_in = 0;
    mla_problem in_pb;
    memset(&in_pb, 0, sizeof in_pb);
    for (int oi = 0; oi < g->n; oi++) {
        brow *r = &g->r[ord[oi]];
        r->anchor = anchor_us(&r->pb);
        char why[240];
        if (!mla_arch_allows(r->kv->target, dev->cc_major, dev->cc_minor, why, sizeof why)) {
            snprintf(r->why, sizeof r->why, "skipped: %s", why);
            continue;
        }
        if (have_in && !same_problem(&in_pb, &r->pb)) {
            /* free the last row's inputs before planning: an autotuning plan allocates its own,
               and two copies of the largest rows (86 GB each) do not fit together */
            mla_dev_inputs_destroy(&in);
            have_in = 0;
        }
        mla_plan_options po;
        mla_plan_options_init(&po);
        po.device = ordinal;
        po.version = r->kv->name;
        /* --autotune: each row runs its tuned tiling (cached winner, else tuned now and cached) */
        po.autotune = autotune ? MLA_AUTOTUNE_CACHED : MLA_AUTOTUNE_OFF;
        mla_plan_t plan = NULL;
        mla_status st = plan_design(&r->pb, &po, &plan);
        if (st != MLA_STATUS_OK) {
            snprintf(r->why, sizeof r->why, "plan: %s", mla_last_error());
            fprintf(stderr, "  %-16s b=%d h=%d t=%d s=%d n=%d: %s\n", r->kv->name, r->pb.b, r->pb.h, r->pb.t,
                    r->pb.s, r->pb.n, r->why);
            continue;
        }
        mla_tiling_format(&plan->tiling, r->tiling, sizeof r->tiling);
        snprintf(r->source, sizeof r->source, "%s", plan->tiling_source);
        if (!have_in || !same_problem(&in_pb, &r->pb)) {
            if (have_in) mla_dev_inputs_destroy(&in);
            have_in = 0;
            memset(&in, 0, sizeof in);
            if (mla_dev_inputs_create_paged(&r->pb, 0, 1234, pages, dev, &in) != MLA_STATUS_OK) {
                snprintf(r->why, sizeof r->why, "inputs: %s", mla_last_error());
                mla_plan_destroy(plan);
                continue;
            }
            have_in = 1;
            in_pb = r->pb;
        }
        void *ws = NULL;
        if (cli_gpu_alloc(&ws, plan->workspace_bytes, why, sizeof why) != 0) {
            snprintf(r->why, sizeof r->why, "workspace: %s", why);
            mla_plan_destroy(plan);
            continue;
        }
        double med = 0, mn = 0, first = 0, last = 0;
        cool_down(cool_ms);
        st = cli_time_total(r->kv, &plan->tiling, dev, &in, ws, 5, 30, cli_time_calls(), &med, &mn, NULL, 0, &first,
                            &last);
        cli_gpu_free(ws);
        mla_plan_destroy(plan);
        if (st != MLA_STATUS_OK) {
            snprintf(r->why, sizeof r->why, "run: %s", mla_last_error());
            continue;
        }
        cli_roofline rf;
        cli_roofline_compute(&r->pb, med, tf, gbs, &rf);
        if (r->npass < BENCH_MAX_PASSES) {
            r->pass_first_us[r->npass] = first;
            r->pass_last_us[r->npass] = last;
            r->pass_us[r->npass++] = med;
        }
        fprintf(stderr,
                "  %-16s b=%-3d h=%-3d t=%-4d s=%-3d n=%-4d %10.1f us %7.1f TFLOP/s %7.0f GB/s %5.1f %% of floor"
                "  (first %d runs %.1f, last %d %.1f)\n",
                r->kv->name, r->pb.b, r->pb.h, r->pb.t, r->pb.s, r->pb.n, med, rf.tflops, rf.gbs, rf.pct_of_floor,
                CLI_SERIES_ENDS, first, CLI_SERIES_ENDS, last);
    }
    if (have_in) mla_dev_inputs_destroy(&in);
}

/* How the rows were timed, for the log and the markdown header. */
static const char *timing_phrase(void)
{
    static char buf[160];
    if (cli_time_flush())
        snprintf(buf, sizeof buf, "timed as triton.testing.do_bench (eager calls, each after a 256 MB L2 flush; "
                                  "median of ~100 ms of calls)");
    else
        snprintf(buf, sizeof buf, "median of 30 CUDA-graph replays (warm-up 5) of %d calls each", cli_time_calls());
    return buf;
}

static char *markdown(const grid *g, const char *devname, const char *peak_src, double tf, double gbs, int alternate,
                      int passes, mla_page_order pages)
{
    size_t cap = 4096 + (size_t)g->n * 256, n = 0;
    char *s = malloc(cap);
    n += (size_t)snprintf(s + n, cap - n,
                          "# mla_var3 bench-all on %s\n\nRoofline floor at %s peaks: %.0f TFLOP/s, %.0f GB/s. "
                          "Times: %s, whole pipeline; "
                          "%d pass%s of the "
                          "grid, a row's us the median of its passes (range in the last column); a problem's "
                          "versions ran %s. Paged caches: %s. FlashMLA figures from ANCHORS.md.\n\n"
                          "| design | version | b | h | t | s | n | us | TFLOP/s | GB/s | floor us | %% floor | FlashMLA us | FlashMLA/ours | tiling | passes (min-max us) |\n"
                          "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
                          devname, peak_src, tf, gbs, timing_phrase(), passes, passes == 1 ? "" : "es",
                          alternate ? (passes > 1 ? "in registry order, reversed on every second problem and "
                                                    "every second pass"
                                                  : "in registry order, reversed on every second problem")
                                    : "in registry order",
                          pages == MLA_PAGES_SEQUENTIAL ? "pages in order (request-major)"
                                                        : "pages in a random permutation");
    for (int i = 0; i < g->n; i++) {
        const brow *r = &g->r[i];
        char anc[32] = "", ratio[32] = "";
        if (r->anchor > 0) snprintf(anc, sizeof anc, "%.1f", r->anchor);
        if (r->anchor > 0 && r->ok) snprintf(ratio, sizeof ratio, "%.2f", r->anchor / r->us);
        if (r->ok) {
            double lo, hi;
            pass_range(r, &lo, &hi);
            n += (size_t)snprintf(s + n, cap - n,
                                  "| %s | %s | %d | %d | %d | %d | %d | %.1f | %.1f | %.0f | %.1f | %.1f | %s | %s | %s (%s) | %d (%.1f-%.1f) |\n",
                                  mla_design_name(r->pb.design), r->kv->name, r->pb.b, r->pb.h, r->pb.t, r->pb.s,
                                  r->pb.n, r->us, r->tflops, r->gbs, r->floor_us, r->pct, anc, ratio, r->tiling,
                                  r->source, r->npass, lo, hi);
        } else
            n += (size_t)snprintf(s + n, cap - n, "| %s | %s | %d | %d | %d | %d | %d | - | - | - | - | - | %s | | %s | 0 |\n",
                                  mla_design_name(r->pb.design), r->kv->name, r->pb.b, r->pb.h, r->pb.t, r->pb.s,
                                  r->pb.n, anc, r->why);
        if (cap - n < 1024) {
            cap *= 2;
            s = realloc(s, cap);
        }
    }
    return s;
}

/* ---- the SVG chart: time vs s at b=32, t=4096, log-log, floors dashed ---- */

static double lx(double s) { return 80 + log2(s) / 7.0 * 600; }            /* s = 1..128 */

static void svg_write(const char *path, const grid *g, double tf, double gbs, const char *peak_src)
{
    static const int S[] = {1, 2, 4, 8, 16, 32, 64, 128};
    static const char *colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2"};
    double fl[2][8];
    double ymin = 1e300, ymax = 0;
    for (int i = 0; i < 8; i++) {
        for (int f = 0; f < 2; f++) {
            mla_problem pb;
            base_problem(&pb, f ? MLA_DESIGN_FLASH_ATTENTION : MLA_DESIGN_FLASH_MLA, 32, 128, 4096, S[i], 0);
            cli_roofline r;
            cli_roofline_compute(&pb, 1.0, tf, gbs, &r);
            fl[f][i] = r.floor_us;
            if (r.floor_us > 0) { ymin = fmin(ymin, r.floor_us); ymax = fmax(ymax, r.floor_us); }
        }
    }
    for (int i = 0; i < g->n; i++) {
        const brow *r = &g->r[i];
        if (r->ok && r->pb.b == 32 && r->pb.t == 4096 && r->pb.h == 128) {
            ymin = fmin(ymin, r->us);
            ymax = fmax(ymax, r->us);
        }
    }
    if (!(ymax > 0)) { ymin = 10; ymax = 10000; }
    double y0 = pow(10, floor(log10(ymin))), y1 = pow(10, ceil(log10(ymax)));
    if (y1 <= y0) y1 = y0 * 10;
#define LY(v) (440 - (log10(v) - log10(y0)) / (log10(y1) - log10(y0)) * 400)
    FILE *f = fopen(path, "w");
    if (!f) return;
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"960\" height=\"520\" font-family=\"sans-serif\" font-size=\"12\">\n"
               "<rect width=\"960\" height=\"520\" fill=\"white\"/>\n"
               "<text x=\"380\" y=\"24\" text-anchor=\"middle\" font-size=\"15\">MLA time vs query tokens s (b=32, t=4096, h=128, causal)</text>\n"
               "<line x1=\"80\" y1=\"440\" x2=\"680\" y2=\"440\" stroke=\"black\"/>\n"
               "<line x1=\"80\" y1=\"40\" x2=\"80\" y2=\"440\" stroke=\"black\"/>\n");
    for (int i = 0; i < 8; i++)
        fprintf(f, "<line x1=\"%.1f\" y1=\"440\" x2=\"%.1f\" y2=\"40\" stroke=\"#eee\"/><text x=\"%.1f\" y=\"456\" text-anchor=\"middle\">%d</text>\n",
                lx(S[i]), lx(S[i]), lx(S[i]), S[i]);
    for (double v = y0; v <= y1 * 1.001; v *= 10)
        fprintf(f, "<line x1=\"80\" y1=\"%.1f\" x2=\"680\" y2=\"%.1f\" stroke=\"#eee\"/><text x=\"74\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
                LY(v), LY(v), LY(v) + 4, v);
    fprintf(f, "<text x=\"380\" y=\"480\" text-anchor=\"middle\">query tokens per request s (log scale)</text>\n"
               "<text x=\"24\" y=\"240\" text-anchor=\"middle\" transform=\"rotate(-90 24 240)\">time per call, microseconds (log scale)</text>\n");
    /* floors, dashed */
    const char *fname[2] = {"absorbed floor (flash_mla)", "decompressed floor (flash_attention)"};
    const char *fcol[2] = {"#555", "#aaa"};
    int legend = 0;
    for (int fi = 0; fi < 2; fi++) {
        fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" stroke-dasharray=\"6,4\" points=\"", fcol[fi]);
        for (int i = 0; i < 8; i++) fprintf(f, "%.1f,%.1f ", lx(S[i]), LY(fl[fi][i]));
        fprintf(f, "\"/>\n<line x1=\"700\" y1=\"%d\" x2=\"730\" y2=\"%d\" stroke=\"%s\" stroke-dasharray=\"6,4\"/>"
                   "<text x=\"736\" y=\"%d\">%s</text>\n", 60 + legend * 18, 60 + legend * 18, fcol[fi],
                64 + legend * 18, fname[fi]);
        legend++;
    }
    /* one series per version (mla_var6_plus: the best n at each s) */
    int series = 0;
    for (int v = 0; v < mla_registry_count(); v++) {
        const mla_kernel_version *kv = mla_registry_get(v);
        if (!kv) continue;
        double pts[8];
        int np = 0;
        for (int i = 0; i < 8; i++) {
            pts[i] = 0;
            for (int j = 0; j < g->n; j++) {
                const brow *r = &g->r[j];
                if (r->ok && r->kv == kv && r->pb.b == 32 && r->pb.t == 4096 && r->pb.h == 128 && r->pb.s == S[i] &&
                    (pts[i] == 0 || r->us < pts[i]))
                    pts[i] = r->us;
            }
            np += pts[i] > 0;
        }
        if (!np) continue;
        const char *col = colors[series % 7];
        fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", col);
        for (int i = 0; i < 8; i++)
            if (pts[i] > 0) fprintf(f, "%.1f,%.1f ", lx(S[i]), LY(pts[i]));
        fprintf(f, "\"/>\n");
        for (int i = 0; i < 8; i++)
            if (pts[i] > 0) fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n", lx(S[i]), LY(pts[i]), col);
        fprintf(f, "<line x1=\"700\" y1=\"%d\" x2=\"730\" y2=\"%d\" stroke=\"%s\" stroke-width=\"2\"/><text x=\"736\" y=\"%d\">%s%s</text>\n",
                60 + legend * 18, 60 + legend * 18, col, 64 + legend * 18, kv->name,
                kv->design == MLA_DESIGN_MLA_VAR6_PLUS ? " (best n)" : "");
        legend++;
        series++;
    }
    fprintf(f, "<text x=\"700\" y=\"%d\" fill=\"#555\">floors at %s peaks:</text><text x=\"700\" y=\"%d\" fill=\"#555\">%.0f TFLOP/s, %.0f GB/s</text>\n",
            80 + legend * 18, peak_src, 96 + legend * 18, tf, gbs);
    fprintf(f, "</svg>\n");
    fclose(f);
#undef LY
}

int cli_cmd_bench(int argc, char **argv)
{
    const char *out = "out";
    int quick = 0, ordinal = 0, autotune = 0, alternate = 1, dry = 0, passes = 1, cool_ms = 0;
    mla_page_order pages = MLA_PAGES_RANDOM;
    for (int i = 1; i < argc; i++) {
        const char *v;
        int missing = 0;
        if ((v = cli_flag_value(argv[i], "out", &missing))) {
            if (!*v) return cli_usage_error("%s: empty directory", argv[i]);
            out = v;
        } else if ((v = cli_flag_value(argv[i], "device", &missing))) {
            int rc = cli_parse_int(argv[i], v, 0, 1024, &ordinal);
            if (rc) return rc;
        } else if ((v = cli_flag_value(argv[i], "versions", &missing))) {
            if (!*v) return cli_usage_error("%s: empty version list", argv[i]);
            g_only = v;
        } else if ((v = cli_flag_value(argv[i], "order", &missing))) {
            if (!strcmp(v, "alternate")) alternate = 1;
            else if (!strcmp(v, "registry")) alternate = 0;
            else return cli_usage_error("%s: the order is alternate or registry", argv[i]);
        } else if ((v = cli_flag_value(argv[i], "passes", &missing))) {
            int rc = cli_parse_int(argv[i], v, 1, BENCH_MAX_PASSES, &passes);
            if (rc) return rc;
        } else if ((v = cli_flag_value(argv[i], "cool", &missing))) {
            int rc = cli_parse_int(argv[i], v, 0, 60000, &cool_ms);
            if (rc) return rc;
        } else if ((v = cli_flag_value(argv[i], "pages", &missing))) {
            if (!strcmp(v, "random")) pages = MLA_PAGES_RANDOM;
            else if (!strcmp(v, "sequential")) pages = MLA_PAGES_SEQUENTIAL;
            else return cli_usage_error("%s: the page order is random or sequential", argv[i]);
        } else if (!strcmp(argv[i], "--dry-run")) dry = 1;
        else if (!strcmp(argv[i], "--quick")) quick = 1;
        else if (!strcmp(argv[i], "--autotune")) autotune = 1;
        else if (missing) return cli_usage_error("%s: needs a value (%s=...)", argv[i], argv[i]);
        else return cli_usage_error("%s: unknown flag (see: mla_var3 bench-all --help)", argv[i]);
    }
    mla_device_info dev;
    const int have_gpu = mla_device_count() > 0 && mla_device_query(ordinal, &dev) == MLA_STATUS_OK;
    if (!have_gpu && dry) {
        /* the grid only: the H200 table entry stands in for the peaks mla_var6_plus's n uses */
        if (mla_device_from_table("h200", &dev) != MLA_STATUS_OK) {
            fprintf(stderr, "mla_var3: bench-all: %s\n", mla_last_error());
            return CLI_EXIT_FAIL;
        }
    } else if (!have_gpu) {
        fprintf(stderr, "bench-all needs a GPU\n");
        return CLI_EXIT_DEVICE;
    }
    cli_gpu_set_device(ordinal);
    double tf = dev.peak_bf16_tflops, gbs = dev.peak_mem_gbs;
    const char *peak_src = "datasheet";
    if (have_gpu && mla_device_measure_load(&dev) == MLA_STATUS_OK && dev.measured_tflops > 0 && dev.measured_gbs > 0) {
        tf = dev.measured_tflops;
        gbs = dev.measured_gbs;
        peak_src = "measured";
    }
    if (!(tf > 0) || !(gbs > 0)) {
        /* unknown GPU: floors at H200-like placeholders would mislead; say so in the report */
        peak_src = "unknown (no datasheet entry; floors not meaningful)";
        if (!(tf > 0)) tf = 1;
        if (!(gbs > 0)) gbs = 1;
    }
    grid g = {NULL, 0, 0};
    build_grid(&g, quick, tf, gbs);
    if (g.n == 0) {
        fprintf(stderr, "mla_var3: bench-all: no kernel version%s%s is registered in this build\n", g_only ? " among " : "",
                g_only ? g_only : "");
        return CLI_EXIT_FAIL;
    }
    int *ord = malloc((size_t)g.n * sizeof *ord);
    if (dry) {
        /* what would run, in order, with no GPU work (no architecture gate either) */
        printf("bench-all dry run: %d rows, order %s", g.n, alternate ? "alternate" : "registry");
        if (passes > 1) printf(", %d passes", passes);
        if (cool_ms > 0) printf(", cool %d ms", cool_ms);
        printf("%s\n", pages == MLA_PAGES_SEQUENTIAL ? ", pages sequential" : "");
        for (int p = 0; p < passes; p++) {
            exec_order(&g, alternate, p & 1, ord);
            for (int oi = 0; oi < g.n; oi++) {
                const brow *r = &g.r[ord[oi]];
                printf("%4d  %-20s b=%d h=%d t=%d s=%d n=%d%s\n", p * g.n + oi + 1, r->kv->name, r->pb.b, r->pb.h,
                       r->pb.t, r->pb.s, r->pb.n, passes > 1 ? (oi == 0 ? "   (pass start)" : "") : "");
            }
        }
        free(ord);
        free(g.r);
        return 0;
    }
    fprintf(stderr,
            "bench-all on %s: %d rows (%s peaks %.0f TFLOP/s, %.0f GB/s), order %s, %d pass%s, pages %s, cool %d ms, %s\n",
            dev.name, g.n, peak_src, tf, gbs, alternate ? "alternate" : "registry", passes, passes == 1 ? "" : "es",
            pages == MLA_PAGES_SEQUENTIAL ? "sequential" : "random", cool_ms, timing_phrase());
    for (int p = 0; p < passes; p++) {
        exec_order(&g, alternate, p & 1, ord);
        if (passes > 1) fprintf(stderr, " pass %d of %d\n", p + 1, passes);
        run_rows(&g, ord, &dev, ordinal, tf, gbs, autotune, pages, cool_ms);
    }
    for (int i = 0; i < g.n; i++) finish_row(&g.r[i], tf, gbs);
    free(ord);

    if (cli_mkdir_p(out) != 0) {
        fprintf(stderr, "mla_var3: --out=%s: cannot create the folder\n", out);
        free(g.r);
        return CLI_EXIT_FAIL;
    }
    char *md = markdown(&g, dev.name, peak_src, tf, gbs, alternate, passes, pages);
    cli_write_text(out, "bench.md", md);

    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "device", cli_json_device(&dev));
    cJSON *pk = cJSON_AddObjectToObject(o, "peaks");
    cJSON_AddStringToObject(pk, "source", peak_src);
    cJSON_AddNumberToObject(pk, "tflops", tf);
    cJSON_AddNumberToObject(pk, "gbs", gbs);
    cJSON_AddStringToObject(o, "library_version", mla_version_string());
    cJSON_AddBoolToObject(o, "quick", quick);
    cJSON_AddStringToObject(o, "order", alternate ? "alternate" : "registry");
    cJSON_AddNumberToObject(o, "passes", passes);
    cJSON_AddStringToObject(o, "pages", pages == MLA_PAGES_SEQUENTIAL ? "sequential" : "random");
    cJSON_AddNumberToObject(o, "cool_ms", cool_ms);
    cJSON_AddStringToObject(o, "timing", cli_time_flush() ? "flush" : "graph");
    cJSON_AddStringToObject(o, "timing_method", timing_phrase());
    cJSON *rows = cJSON_AddArrayToObject(o, "rows");
    for (int i = 0; i < g.n; i++) {
        const brow *r = &g.r[i];
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "version", r->kv->name);
        cJSON_AddItemToObject(j, "problem", cli_json_problem(&r->pb));
        cJSON_AddBoolToObject(j, "ok", r->ok);
        if (r->ok) {
            cJSON_AddNumberToObject(j, "us", r->us);
            cJSON *pu = cJSON_AddArrayToObject(j, "pass_us");
            for (int k = 0; k < r->npass; k++) cJSON_AddItemToArray(pu, cJSON_CreateNumber(r->pass_us[k]));
            cJSON *pf = cJSON_AddArrayToObject(j, "pass_first10_us"), *pl = cJSON_AddArrayToObject(j, "pass_last10_us");
            for (int k = 0; k < r->npass; k++) {
                cJSON_AddItemToArray(pf, cJSON_CreateNumber(r->pass_first_us[k]));
                cJSON_AddItemToArray(pl, cJSON_CreateNumber(r->pass_last_us[k]));
            }
            cJSON_AddNumberToObject(j, "tflops", r->tflops);
            cJSON_AddNumberToObject(j, "gbs", r->gbs);
            cJSON_AddNumberToObject(j, "floor_us", r->floor_us);
            cJSON_AddNumberToObject(j, "pct_of_floor", r->pct);
            cJSON_AddStringToObject(j, "tiling", r->tiling);
            cJSON_AddStringToObject(j, "tiling_source", r->source);
        } else {
            cJSON_AddStringToObject(j, "reason", r->why);
        }
        if (r->anchor > 0) {
            cJSON_AddNumberToObject(j, "flashmla_us", r->anchor);
            if (r->ok) cJSON_AddNumberToObject(j, "flashmla_over_ours", r->anchor / r->us);
        }
        cJSON_AddItemToArray(rows, j);
    }
    cli_write_json(out, "bench.json", o);
    cJSON_Delete(o);
    char svg[4096];
    snprintf(svg, sizeof svg, "%s/bench_b32_t4096.svg", out);
    svg_write(svg, &g, tf, gbs, peak_src);
    fputs(md, stdout);
    printf("\nwrote %s/bench.md, %s/bench.json, %s\n", out, out, svg);
    free(md);
    free(g.r);
    return 0;
}
