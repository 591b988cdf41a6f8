/*
 * test_kernels: the correctness grid of every registered kernel version that passes the
 * architecture gate on this device, each case checked by mla_gpu_check_gen (generated inputs,
 * NaN-poisoned outputs, naive fp32 GPU reference, MLA_SPEC.md's bar).
 *
 * The grid is a deterministic covering set, not the full cross product: every value of every
 * axis (b {1,3,32}, s {1,2,5,16,64}, t {1,63,64,65,1000,4096}, h {16,128}, and h {24,64,96}
 * among the edge cases), varlen with a zero length, permuted pages, causal or not, mla_var6_plus
 * n in {0, s, t/2, t}) appears, plus the edge combinations (t < 64 with s > 1, s == t, b = 32
 * with t = 4096 and h = 128 at s in {1, 16, 64}, ...). One generated problem serves every
 * design and version of a case; cases with b*t*h > GEN_LIMIT draw random inputs on the device
 * instead (the CPU generator, not the GPU, would be the slow part of those).
 *
 * Environment: MLA_VAR3_GRID=small (~8 tiny cases per design, for compute-sanitizer) or full
 * (default); MLA_VAR3_TILING_ALL=1 also runs a few cases with every candidate tiling of every
 * version; MLA_VAR3_TILING=fields ("splits=2") overrides the tiling of every grid case (a version
 * whose rules refuse it reports those cases as skipped); MLA_VAR3_VERSIONS=name,name runs only
 * those versions. After the grid, a few cases with the out strides padded (out_pad, see
 * gpu_check.h). Output: one line per case,
 * "N passed, M failed, K skipped" last; exit 1 if anything failed, 77 without a GPU (or with
 * nothing runnable).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cuda_runtime_api.h>

#include "mla_var3.h"
#include "ref.h"
#include "gpu_check.h"
#include "device.h"
#include "registry.h"

typedef struct kcase {
    int b, s, t, h, causal, varlen, zero, permute, n;   /* n: mla_var6_plus only */
    int trend;   /* mla_gen_options.logit_trend: scores rising (+1) / falling (-1) along t */
} kcase;

#define MAX_CASES 160
static kcase cases[MAX_CASES];
static int ncases;

/* Returns 1 when the case was added (0: full, or not a valid case). */
static int add(int b, int s, int t, int h, int causal, int varlen, int zero, int permute, int n)
{
    if (ncases >= MAX_CASES || s > t || n < 0 || n > t) return 0;
    varlen = varlen && b > 1;
    zero = zero && varlen;
    cases[ncases++] = (kcase){b, s, t, h, causal, varlen, zero, permute, n, 0};
    return 1;
}

/* A case whose scores rise or fall along the sequence: every page moves each row's running max,
 * or none after the first (flash_mla_v5 redoes its speculative softmax on every page pair, or
 * never). Kept under GEN_LIMIT: the trend needs the CPU generator. */
static void add_trend(int b, int s, int t, int h, int causal, int permute, int n, int trend)
{
    if (add(b, s, t, h, causal, 0, 0, permute, n)) cases[ncases - 1].trend = trend;
}

static void build_full(void)
{
    static const int T[] = {1, 63, 64, 65, 1000, 4096}, S[] = {1, 2, 5, 16, 64}, H[] = {16, 128};
    int idx = 0;
    for (int ti = 0; ti < 6; ti++)
        for (int si = 0; si < 5; si++)
            for (int hi = 0; hi < 2; hi++) {
                int t = T[ti], s = S[si], h = H[hi];
                if (s > t) continue;
                /* small batches here; b = 32 comes with the edge cases below */
                int b = t == 4096 ? (h == 128 ? 1 : 3) : (idx % 3 == 0 ? 1 : 3);
                int nsel[4] = {0, s, t / 2, t};
                /* the flags cycle with different periods so that they do not track h (period 2) */
                int varlen = (idx / 2) % 2 == 0, zero = (idx / 4) % 2 == 0;
                add(b, s, t, h, idx % 5 != 3, varlen, zero, idx % 3 != 2, nsel[(idx + idx / 4) % 4]);
                idx++;
            }
    /* the headline shape at three s, each var6 n extreme */
    add(32, 1, 4096, 128, 1, 0, 0, 1, 0);
    add(32, 16, 4096, 128, 1, 0, 0, 1, 2048);
    add(32, 64, 4096, 128, 1, 0, 0, 1, 4096);
    /* b = 32 varlen with a zero-length request */
    add(32, 16, 4096, 128, 1, 1, 1, 1, 1024);
    add(32, 2, 1000, 16, 1, 1, 1, 1, 500);
    add(32, 5, 65, 128, 1, 1, 1, 0, 65);
    /* s == t */
    add(3, 2, 2, 16, 1, 0, 0, 1, 2);
    add(3, 5, 5, 128, 1, 1, 1, 0, 0);
    /* 512 row blocks of one or two pages: flash_mla_v21's persistent CTAs walk 3-4 each, with a
       zero-length request (rows written without pages) in the walk */
    add(2, 128, 128, 128, 1, 1, 1, 1, 64);
    /* 136 row blocks of up to 10 pages on 132 SMs: flash_mla_v24 cuts the last 4 by pages over
       the CTAs (4-page ranges, each row block in 2-3 pieces merged after), uniform and varlen */
    add(17, 4, 640, 128, 1, 0, 0, 1, 0);
    add(17, 4, 640, 128, 1, 1, 1, 1, 0);
    add(1, 16, 16, 16, 0, 0, 0, 1, 8);
    add(1, 64, 64, 128, 1, 0, 0, 0, 64);
    /* h outside the library's set {16, 32, 64, 128}: reported as skipped (unsupported), never
       run; and h = 64, one token per row block */
    add(3, 5, 1000, 96, 1, 1, 1, 1, 500);
    add(2, 4, 130, 24, 1, 1, 0, 1, 65);
    add(2, 3, 200, 64, 1, 0, 0, 1, 0);
    /* t < 64 with s > 1, varlen */
    add(3, 16, 63, 128, 1, 1, 1, 1, 63);
    add(3, 5, 63, 16, 1, 1, 0, 0, 0);
    /* n = 0 and n = t on the same varlen shape; a page boundary (t = 129, s = 64) */
    add(3, 2, 65, 16, 1, 1, 1, 1, 0);
    add(3, 2, 65, 16, 1, 1, 1, 1, 65);
    add(3, 64, 129, 16, 1, 1, 1, 1, 64);
    /* not causal, s > 1, long */
    add(3, 64, 1000, 128, 0, 0, 0, 1, 1000);
    add(3, 16, 1000, 16, 0, 1, 1, 1, 16);
    /* scores with a trend along t */
    add_trend(2, 1, 4096, 16, 1, 1, 1, 1);
    add_trend(1, 4, 2000, 128, 1, 0, 1000, 1);
    add_trend(2, 16, 1000, 16, 1, 1, 16, -1);
    add_trend(1, 2, 3000, 128, 0, 1, 3000, -1);
}

static void build_small(void)
{
    add(1, 1, 1, 16, 1, 0, 0, 0, 1);
    add(3, 2, 65, 16, 1, 1, 1, 1, 0);
    add(1, 5, 63, 128, 1, 0, 0, 0, 5);
    add(3, 16, 64, 16, 0, 0, 0, 1, 64);
    add(2, 1, 130, 128, 1, 1, 0, 1, 65);
    add(3, 4, 200, 16, 1, 1, 1, 1, 100);
    add(2, 3, 100, 64, 1, 1, 0, 1, 50);
    add_trend(1, 2, 300, 16, 1, 1, 2, 1);
    /* more row blocks than SMs, and a cut last round (see build_full) */
    add(2, 128, 128, 128, 1, 1, 1, 1, 64);
    add(17, 4, 640, 128, 1, 1, 1, 1, 0);
}

/* ------------------------------------------------------------------------------------------ */

static int passed, failed, skipped, fatal;

typedef struct vstat {
    int pass, fail, skip;
} vstat;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static void case_text(const kcase *c, mla_design d, char *buf, size_t len)
{
    snprintf(buf, len, "b=%d s=%d t=%d h=%d n=%d varlen=%d%s causal=%d permute=%d%s", c->b, c->s, c->t, c->h,
             d == MLA_DESIGN_MLA_VAR6_PLUS ? c->n : 0, c->varlen, c->zero ? "+zero" : "", c->causal, c->permute,
             c->trend > 0 ? " trend=rising" : c->trend < 0 ? " trend=falling" : "");
}

/* Above this b*t*h the CPU generator's derivation (O(b*t*h*d*k) in double) would dominate the
 * run: such cases draw their inputs on the device instead (mla_gpu_inputs_random). */
#define GEN_LIMIT 400000L

static uint64_t case_seed(const kcase *c)
{
    return 0x5eed0000ull + (uint64_t)c->b * 1000003u + (uint64_t)c->s * 10007u + (uint64_t)c->t * 101u +
           (uint64_t)c->h + (uint64_t)c->n * 7u;
}

static int use_random(const kcase *c) { return !c->trend && (long)c->b * c->t * c->h > GEN_LIMIT; }

/* One version on one case: inputs from `g` (the CPU generator), or drawn on the device. */
static void run_one(const mla_kernel_version *kv, const kcase *c, const mla_gen *g, const char *tiling,
                    int out_pad, vstat *vs)
{
    mla_problem pb;
    mla_problem_init(&pb, kv->design);
    pb.b = c->b, pb.s = c->s, pb.t = c->t, pb.h = c->h, pb.causal = c->causal;
    pb.n = kv->design == MLA_DESIGN_MLA_VAR6_PLUS ? c->n : 0;
    mla_gpu_check_options opt = {.seed = 0, .version = kv->name, .tiling = tiling, .device = 0, .out_pad = out_pad};
    mla_check_report rep;
    char ct[192];
    case_text(c, kv->design, ct, sizeof ct);
    if (out_pad) snprintf(ct + strlen(ct), sizeof ct - strlen(ct), " out_pad=%d", out_pad);
    double t0 = now_ms();
    mla_status st;
    if (g) {
        st = mla_gpu_check_gen(&pb, g, &opt, &rep);
    } else {
        mla_gpu_inputs in;
        mla_gen_options go = {.seed = case_seed(c), .varlen = c->varlen, .zero_length = c->zero,
                              .permute_pages = c->permute};
        st = mla_gpu_inputs_random(&pb, &go, &in);
        if (st == MLA_STATUS_OK) {
            st = mla_gpu_check_inputs(&pb, &in, &opt, &rep);
            mla_gpu_inputs_free(&in);
        }
        strncat(ct, " inputs=device", sizeof ct - strlen(ct) - 1);
    }
    double ms = now_ms() - t0;
    const char *tl = tiling ? tiling : "";
    if (st == MLA_STATUS_OK) {
        printf("%s %s v%d %s%s%s: %s (%.0f ms)\n", rep.pass ? "PASS" : "FAIL", mla_design_name(kv->design),
               kv->version, ct, tiling ? " tiling=" : "", tl, rep.message, ms);
        if (rep.pass) passed++, vs->pass++;
        else failed++, vs->fail++;
    } else if (st == MLA_STATUS_UNSUPPORTED || st == MLA_STATUS_ARCH_MISMATCH) {
        printf("SKIP %s v%d %s%s%s: %s: %s\n", mla_design_name(kv->design), kv->version, ct, tiling ? " tiling=" : "",
               tl, mla_status_name(st), mla_last_error());
        skipped++, vs->skip++;
    } else {
        printf("FAIL %s v%d %s%s%s: %s: %s (%.0f ms)\n", mla_design_name(kv->design), kv->version, ct,
               tiling ? " tiling=" : "", tl, mla_status_name(st), mla_last_error(), ms);
        failed++, vs->fail++;
        /* A kernel fault poisons the context: every later case would fail the same way. */
        cudaError_t e = cudaDeviceSynchronize();
        if (e != cudaSuccess) {
            printf("FATAL: the CUDA context is broken (%s); stopping here\n", cudaGetErrorString(e));
            fatal = 1;
        }
    }
    fflush(stdout);
}

static int gen_case(const kcase *c, mla_gen *g)
{
    mla_problem pb;
    mla_problem_init(&pb, MLA_DESIGN_MLA_VAR6_PLUS);
    pb.b = c->b, pb.s = c->s, pb.t = c->t, pb.h = c->h, pb.causal = c->causal, pb.n = c->n;
    mla_gen_options go = {.seed = case_seed(c), .varlen = c->varlen, .zero_length = c->zero, .permute_pages = c->permute,
                          .logit_trend = c->trend};
    mla_status st = mla_gen_create(&pb, &go, g);
    if (st != MLA_STATUS_OK) {
        printf("FAIL generator b=%d s=%d t=%d h=%d n=%d: %s\n", c->b, c->s, c->t, c->h, c->n, mla_last_error());
        return 0;
    }
    return 1;
}

int main(void)
{
    if (mla_device_count() == 0) {
        printf("SKIP: no CUDA device\n");
        return 77;
    }
    mla_device_info dev;
    if (mla_device_query(0, &dev) != MLA_STATUS_OK) {
        printf("FAIL: device query: %s\n", mla_last_error());
        return 1;
    }
    const char *grid = getenv("MLA_VAR3_GRID");
    int small = grid && strcmp(grid, "small") == 0;
    if (small) build_small();
    else build_full();
    const char *ta = getenv("MLA_VAR3_TILING_ALL");
    int tiling_all = ta && ta[0] && strcmp(ta, "0") != 0;

    const char *tiling = getenv("MLA_VAR3_TILING");
    if (tiling && !tiling[0]) tiling = NULL;
    const char *only = getenv("MLA_VAR3_VERSIONS");
    if (only && !only[0]) only = NULL;
    int nv = mla_registry_count();
    printf("test_kernels: %s (cc %d.%d, %d SMs), %d registered versions, %d cases per design (%s grid)%s%s%s\n",
           dev.name, dev.cc_major, dev.cc_minor, dev.sm_count, nv, ncases, small ? "small" : "full",
           tiling_all ? ", every tiling" : "", tiling ? ", tiling " : "", tiling ? tiling : "");
    const mla_kernel_version *run[64];
    vstat vs[64];
    memset(vs, 0, sizeof vs);
    int nrun = 0;
    for (int i = 0; i < nv && nrun < 64; i++) {
        const mla_kernel_version *kv = mla_registry_get(i);
        if (!kv) continue;
        char why[256] = "";
        if (only && !mla_name_in_list(only, kv->name)) continue;
        if (!mla_arch_allows(kv->target, dev.cc_major, dev.cc_minor, why, sizeof why)) {
            printf("SKIP %s: %s\n", kv->name, why);
            skipped += ncases;
            continue;
        }
        printf("version %s (%s, %s, %d candidate tilings): %s\n", kv->name, mla_tier_name(kv->tier),
               mla_target_name(kv->target), kv->num_candidates, kv->note ? kv->note : "");
        run[nrun++] = kv;
    }
    fflush(stdout);

    for (int ci = 0; ci < ncases && !fatal; ci++) {
        if (use_random(&cases[ci])) {
            for (int v = 0; v < nrun && !fatal; v++) run_one(run[v], &cases[ci], NULL, tiling, 0, &vs[v]);
            continue;
        }
        mla_gen g;
        if (!gen_case(&cases[ci], &g)) {
            failed += nrun;
            continue;
        }
        for (int v = 0; v < nrun && !fatal; v++) run_one(run[v], &cases[ci], &g, tiling, 0, &vs[v]);
        mla_gen_destroy(&g);
    }

    /* Strided outputs: out written with row and request strides padded by 64 elements into a
       poisoned buffer (flash_mla_v41 stores its rows through a tensor map built from the strides);
       the rows must pass the bar and the padding must stay poisoned. h = 16 (4 tokens a row
       block, the last clipped), 64 and 128, one and several row blocks a request. */
    if (!fatal) {
        kcase pc[3] = {{3, 1, 1000, 16, 1, 0, 0, 1, 0}, {2, 5, 130, 128, 1, 0, 0, 1, 65},
                       {2, 3, 200, 64, 1, 0, 0, 1, 0}};
        for (int ci = small ? 2 : 0; ci < 3 && !fatal; ci++) {
            mla_gen g;
            if (!gen_case(&pc[ci], &g)) {
                failed += nrun;
                continue;
            }
            for (int v = 0; v < nrun && !fatal; v++) run_one(run[v], &pc[ci], &g, tiling, 64, &vs[v]);
            mla_gen_destroy(&g);
        }
    }

    if (tiling_all && !fatal) {
        /* A few cases per candidate: tiny, varlen with a zero length, and one long multi-query. */
        kcase tc[3] = {{1, 1, 65, 16, 1, 0, 0, 1, 0}, {3, 5, 200, 128, 1, 1, 1, 1, 100},
                       {2, 16, 1000, 128, 1, 0, 0, 1, 1000}};
        for (int ci = 0; ci < 3 && !fatal; ci++) {
            mla_gen g;
            if (!gen_case(&tc[ci], &g)) {
                failed++;
                continue;
            }
            for (int v = 0; v < nrun && !fatal; v++)
                for (int k = 0; k < run[v]->num_candidates && !fatal; k++) {
                    char tl[160];
                    mla_tiling_format(&run[v]->candidates[k], tl, sizeof tl);
                    run_one(run[v], &tc[ci], &g, tl, 0, &vs[v]);
                }
            mla_gen_destroy(&g);
        }
    }

    for (int v = 0; v < nrun; v++)
        printf("version %s: %d passed, %d failed, %d skipped\n", run[v]->name, vs[v].pass, vs[v].fail, vs[v].skip);
    printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
    if (failed || fatal) return 1;
    if (passed == 0) return 77;   /* nothing could run here: say skipped, not passed */
    return 0;
}
