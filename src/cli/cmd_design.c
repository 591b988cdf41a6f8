/*
 * `mla_var3 <design> [vN] ...`: one run of a design on one problem.
 * No GPU: the threaded CPU reference (and, with --check, the naive formula to compare with).
 * GPU: architecture gate, plan (optionally autotuned), --check against the naive GPU reference,
 * timing by CUDA-graph replay (whole pipeline and each stage), roofline report, or a re-run
 * under ncu / nsys. Every run writes a run folder (runfolder.c) and can print one JSON object.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"
#include "plan.h"
#include "autotune.h"
#include "gpu_check.h"
#include "measure.h"
#include "error.h"

typedef struct run_ctx {
    const cli_run_opts *o;
    const mla_problem *pb;
    const mla_kernel_version *kv;   /* NULL: no registered version (CPU only) */
    const char *version_name;
    mla_tiling tiling;
    const char *tiling_source;
    const char *cache_path;         /* tune-cache file behind the tiling, or "" */
    const mla_device_info *dev;     /* NULL on the CPU */
    const char *mode;
    char dir[4096];
} run_ctx;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static int under_profiler(void)
{
    const char *e = getenv("MLA_VAR3_UNDER_PROFILER");
    return e && !strcmp(e, "1");
}

/* ---------------------------------------------------------------------------------------- */
/* Run folder                                                                                */
/* ---------------------------------------------------------------------------------------- */

static void write_params(const run_ctx *c)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "mode", c->mode);
    cJSON_AddItemToObject(o, "problem", cli_json_problem(c->pb));
    cJSON_AddItemToObject(o, "argv", cli_json_argv(c->o->argc, c->o->argv));
    cJSON_AddItemToObject(o, "device", cli_json_device(c->dev));
    cJSON_AddStringToObject(o, "version", c->version_name);
    if (c->kv) {
        cJSON_AddStringToObject(o, "tier", mla_tier_name(c->kv->tier));
        cJSON_AddStringToObject(o, "target", mla_target_name(c->kv->target));
        cJSON_AddStringToObject(o, "note", c->kv->note ? c->kv->note : "");
        cJSON_AddItemToObject(o, "tiling", cli_json_tiling(&c->tiling));
    } else {
        cJSON_AddNullToObject(o, "tiling");
    }
    cJSON_AddStringToObject(o, "tiling_source", c->tiling_source);
    if (c->cache_path && *c->cache_path) cJSON_AddStringToObject(o, "tune_cache", c->cache_path);
    cJSON_AddNumberToObject(o, "seed", (double)c->o->seed);
    cJSON_AddBoolToObject(o, "varlen", c->o->varlen != 0);
    cJSON_AddStringToObject(o, "pages", c->o->pages_sequential ? "sequential" : "random");
    cJSON_AddStringToObject(o, "prof_type", cli_prof_name(c->o->prof));
    cJSON_AddStringToObject(o, "library_version", mla_version_string());
    time_t now = time(NULL);
    char stamp[64];
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
    cJSON_AddStringToObject(o, "date", stamp);
    cli_write_json(c->dir, "params.json", o);
    cJSON_Delete(o);
}

/* The __global__ name of stage i by the naming rule: the version's name, a "_<stage>" suffix
 * except for a stage called "main" (flash_mla_v0, flash_mla_v0_combine). */
static void kernel_name(const mla_kernel_version *kv, int i, char *buf, size_t len)
{
    const char *sn = kv->stage_names[i] ? kv->stage_names[i] : "stage";
    if (!strcmp(sn, "main")) snprintf(buf, len, "%s", kv->name);
    else snprintf(buf, len, "%s_%s", kv->name, sn);
}

/* Does cuobjdump's "Function : X" name kernel `k`? extern "C" (exact) or mangled (<len><k>). */
static int sass_name_matches(const char *fn, const char *k)
{
    size_t fl = strcspn(fn, " \t\r\n");
    if (fl == strlen(k) && !strncmp(fn, k, fl)) return 1;
    char pat[240];
    snprintf(pat, sizeof pat, "%zu%s", strlen(k), k);
    for (const char *p = fn; (p = strstr(p, pat)) && p < fn + fl; p++)
        if (p == fn || !(p[-1] >= '0' && p[-1] <= '9')) return 1;
    return 0;
}

/* SASS of one kernel out of a full `cuobjdump -sass` listing; NULL if absent. */
static char *sass_extract(const char *all, const char *kname)
{
    size_t cap = 0, n = 0;
    char *out = NULL;
    const char *p = all;
    while ((p = strstr(p, "Function : "))) {
        const char *fn = p + 11;
        const char *line_start = p;
        while (line_start > all && line_start[-1] != '\n') line_start--;
        const char *next = strstr(fn, "Function : ");
        const char *end = next ? next : all + strlen(all);
        if (next) while (end > fn && end[-1] != '\n') end--;
        /* not the headers of the fat binaries that follow this function's */
        const char *hdr = strstr(fn, "\nFatbin ");
        if (hdr && hdr < end) end = hdr + 1;
        if (sass_name_matches(fn, kname)) {
            size_t len = (size_t)(end - line_start);
            if (n + len + 1 > cap) {
                cap = (n + len + 1) * 2;
                char *nb = realloc(out, cap);
                if (!nb) { free(out); return NULL; }
                out = nb;
            }
            memcpy(out + n, line_start, len);
            n += len;
            out[n] = '\0';
        }
        p = fn;
    }
    return out;
}

/* `cuobjdump -sass` of this executable into a file under the run folder, read back; `fun`: only
 * that (mangled) kernel. NULL if it did not run. */
static char *sass_listing(const char *tool, const char *exe, const char *dir, const char *fun)
{
    char sub[4200], tmp[sizeof sub + 32];
    snprintf(sub, sizeof sub, "%s/compiled", dir);
    cli_mkdir_p(sub);
    snprintf(tmp, sizeof tmp, "%s/.cuobjdump.tmp", sub);
    char *all_argv[] = {(char *)tool, "-sass", (char *)exe, NULL};
    char *fun_argv[] = {(char *)tool, "-sass", "-fun", (char *)fun, (char *)exe, NULL};  /* (posix_spawn's types) */
    /* -fun: its "not found" warning for every other fat binary goes to /dev/null */
    char *text = NULL;
    if (cli_spawn(fun ? fun_argv : all_argv, tmp, fun ? 2 : 1, NULL) == 0) text = cli_read_file(tmp, NULL);
    unlink(tmp);
    return text;
}

static void write_stages(const run_ctx *c)
{
    int ns = c->kv ? c->kv->num_stages : 0;
    char rel[512];
    if (!c->kv) {
        /* No kernel version is registered for this design: the CPU reference has no tiling. */
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "stage", "reference");
        cJSON_AddStringToObject(o, "note", "CPU reference: no kernel version registered, no tiling");
        cli_write_json(c->dir, "tiling/reference.json", o);
        cJSON_Delete(o);
        o = cJSON_CreateObject();
        cJSON_AddBoolToObject(o, "autotuned", 0);
        cli_write_json(c->dir, "tiling/reference/autotuning.json", o);
        cJSON_Delete(o);
        o = cJSON_CreateObject();
        cJSON_AddBoolToObject(o, "compiled", 0);
        cJSON_AddStringToObject(o, "reason", "CPU reference run: no GPU kernel");
        cli_write_json(c->dir, "compiled/reference/resources.json", o);
        cJSON_Delete(o);
        return;
    }
    /* Each stage's SASS by its exact symbol (`cuobjdump -fun`, about a second); the whole
     * executable's listing (135 MB and 20-40 s with every version linked, which was most of a
     * device A/B round's time) only for a stage that runs but whose symbol the runtime cannot
     * tell, once. A stage that does not run for the problem (the combine of a one-split plan)
     * gets none: the twenty-third session found that such a stage still made every one-split
     * CLI run take the whole listing (34 s a run on the device, 27 s of it cuobjdump). */
    char *sass_all = NULL;
    int sass_all_tried = 0;
    char tool[1024], exe[2048];
    static const char *const cuda_dirs[] = {"/usr/local/cuda/bin", NULL};
    const int have_sass = c->dev && cli_find_tool("cuobjdump", cuda_dirs, tool, sizeof tool) &&
                          cli_self_exe(exe, sizeof exe) == 0;
    for (int i = 0; i < ns; i++) {
        const char *sn = c->kv->stage_names[i] ? c->kv->stage_names[i] : "stage";
        char kname[200];
        kernel_name(c->kv, i, kname, sizeof kname);
        mla_stage_config cfg;
        memset(&cfg, 0, sizeof cfg);
        int runs = -1;
        if (c->dev && c->kv->stage_config) runs = c->kv->stage_config(&c->tiling, c->pb, c->dev, i, &cfg);
        /* the exact (mangled, instantiated) symbol when the runtime can tell it */
        char symbol[512] = "";
        if (runs > 0 && cfg.func) cli_gpu_func_name(cfg.func, symbol, sizeof symbol);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "stage", sn);
        cJSON_AddNumberToObject(o, "index", i);
        cJSON_AddStringToObject(o, "kernel", kname);
        cJSON_AddItemToObject(o, "tiling", cli_json_tiling(&c->tiling));
        cJSON_AddStringToObject(o, "tiling_source", c->tiling_source);
        if (runs < 0) {
            cJSON_AddNullToObject(o, "launch");
            cJSON_AddStringToObject(o, "note", "no CUDA GPU: launch configuration not computed");
        } else {
            cJSON *l = cJSON_AddObjectToObject(o, "launch");
            cJSON_AddBoolToObject(l, "runs", runs != 0);
            if (runs) {
                int g[3] = {(int)cfg.grid[0], (int)cfg.grid[1], (int)cfg.grid[2]};
                int b[3] = {(int)cfg.block[0], (int)cfg.block[1], (int)cfg.block[2]};
                cJSON_AddItemToObject(l, "grid", cJSON_CreateIntArray(g, 3));
                cJSON_AddItemToObject(l, "block", cJSON_CreateIntArray(b, 3));
                cJSON_AddNumberToObject(l, "smem_dynamic", (double)cfg.smem_dynamic);
            }
        }
        snprintf(rel, sizeof rel, "tiling/%s.json", sn);
        cli_write_json(c->dir, rel, o);
        cJSON_Delete(o);

        /* autotuning.json: the tune-cache entry the tiling came from, else "not autotuned". */
        snprintf(rel, sizeof rel, "tiling/%s/autotuning.json", sn);
        int copied = 0;
        if ((!strcmp(c->tiling_source, "cache") || !strcmp(c->tiling_source, "autotune")) &&
            c->cache_path && *c->cache_path)
            copied = cli_copy_file(c->cache_path, c->dir, rel) == 0;
        if (!copied) {
            o = cJSON_CreateObject();
            cJSON_AddBoolToObject(o, "autotuned", 0);
            cJSON_AddStringToObject(o, "tiling_source", c->tiling_source);
            cli_write_json(c->dir, rel, o);
            cJSON_Delete(o);
        }

        /* compiled/<stage>/resources.json (+ sass.txt) */
        o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "kernel", kname);
        if (symbol[0]) cJSON_AddStringToObject(o, "symbol", symbol);
        mla_func_attrs fa;
        if (runs > 0 && cfg.func && mla_func_attributes(cfg.func, &fa) == MLA_STATUS_OK) {
            cJSON_AddBoolToObject(o, "compiled", 1);
            cJSON_AddNumberToObject(o, "registers", fa.num_regs);
            cJSON_AddNumberToObject(o, "smem_static", (double)fa.smem_static);
            cJSON_AddNumberToObject(o, "smem_dynamic", (double)cfg.smem_dynamic);
            cJSON_AddNumberToObject(o, "local_bytes", (double)fa.local_bytes);
            cJSON_AddBoolToObject(o, "spills", fa.local_bytes > 0);
            cJSON_AddNumberToObject(o, "max_threads_per_block", fa.max_threads_per_block);
            cJSON_AddNumberToObject(o, "binary_version", fa.binary_version);
            cJSON_AddNumberToObject(o, "ptx_version", fa.ptx_version);
        } else {
            cJSON_AddBoolToObject(o, "compiled", 0);
            cJSON_AddStringToObject(o, "reason", runs < 0 ? "no CUDA GPU" :
                                    runs == 0 ? "stage does not run for this problem" :
                                    mla_last_error());
        }
        snprintf(rel, sizeof rel, "compiled/%s/resources.json", sn);
        cli_write_json(c->dir, rel, o);
        cJSON_Delete(o);
        if (have_sass && runs == 0) {
            /* no launch, so no symbol: not worth the whole listing (27 s on the device) */
            snprintf(rel, sizeof rel, "compiled/%s/sass.txt", sn);
            cli_write_text(c->dir, rel, "(this stage does not run for this problem: no SASS written)\n");
        } else if (have_sass) {
            char *s = NULL;
            if (symbol[0]) {
                char *one = sass_listing(tool, exe, c->dir, symbol);
                if (one) s = sass_extract(one, symbol);
                free(one);
            }
            if (!s && !sass_all_tried) {
                sass_all = sass_listing(tool, exe, c->dir, NULL);
                sass_all_tried = 1;
            }
            if (!s && sass_all) s = sass_extract(sass_all, kname);   /* every instantiation of the name */
            snprintf(rel, sizeof rel, "compiled/%s/sass.txt", sn);
            cli_write_text(c->dir, rel, s ? s : "(cuobjdump found no SASS for this kernel name)\n");
            free(s);
        }
    }
    free(sass_all);
}

static void finish_result(const run_ctx *c, cJSON *res)
{
    cJSON_AddStringToObject(res, "run_dir", c->dir);
    if (c->dir[0]) cli_write_json(c->dir, "result.json", res);
    if (c->o->json) cli_json_print(res);
    if (c->dir[0]) cli_info("run folder: %s\n", c->dir);
    cJSON_Delete(res);
}

static void print_check(const mla_check_report *rep)
{
    cli_info("check: %s  rel_l2 %.3e  max_err %.3e (max|ref| %.3e)  lse_err %.3e  nan %ld\n",
             rep->pass ? "PASS" : "FAIL", rep->rel_l2, rep->max_abs_err, rep->max_abs_ref,
             rep->max_lse_err, rep->nan_count);
    if (rep->message[0]) cli_info("check: %s\n", rep->message);
}

/* ---------------------------------------------------------------------------------------- */
/* No GPU: the CPU reference                                                                 */
/* ---------------------------------------------------------------------------------------- */

/* The version a GPU run would default to, the architecture gate aside: the newest one not
 * marked not_default (the newest of all if every one is). */
static const mla_kernel_version *newest_registered(mla_design d)
{
    const mla_kernel_version *best = NULL;
    for (int i = 0; i < mla_registry_count(); i++) {
        const mla_kernel_version *kv = mla_registry_get(i);
        if (kv && kv->design == d && mla_registry_prefers(kv, best)) best = kv;
    }
    return best;
}

static int run_cpu(const cli_run_opts *o)
{
    const mla_problem *pb = &o->pb;
    run_ctx c;
    memset(&c, 0, sizeof c);
    c.o = o;
    c.pb = pb;
    c.mode = "cpu";
    c.tiling_source = "none";
    cli_info("no CUDA GPU found: running the CPU reference\n");
    if (o->prof != CLI_PROF_DISABLED)
        cli_info("note: --prof_type=%s needs a GPU; ignored\n", cli_prof_name(o->prof));
    if (o->autotune) cli_info("note: --autotune needs a GPU; ignored\n");
    /* The version the run folder is filed under: the one asked for, else the newest one. */
    char vname[96];
    if (o->version[0]) {
        c.kv = mla_registry_find(o->version);
        if (!c.kv) return cli_usage_error("%s: no such kernel version (see mla_var3 list)", o->version);
    } else {
        c.kv = newest_registered(o->design);
    }
    snprintf(vname, sizeof vname, "%s", c.kv ? c.kv->name : mla_design_name(o->design));
    if (!c.kv) strncat(vname, "_ref", sizeof vname - strlen(vname) - 1);
    c.version_name = vname;
    if (c.kv) {
        c.tiling = c.kv->candidates && c.kv->num_candidates > 0 ? c.kv->candidates[0] : c.tiling;
        c.tiling_source = "default";
        if (o->tiling) {
            mla_tiling_parse(o->tiling, &c.tiling);
            c.tiling_source = "override";
        }
    }
    if (o->design == MLA_DESIGN_MLA_VAR6_PLUS && !o->n_given)
        cli_info("note: --n not given: n = t/2 = %d newest tokens decompressed\n", pb->n);

    double flops = 0, bytes = 0;
    mla_problem_cost(pb, &flops, &bytes);
    char key[160];
    mla_problem_key(pb, key, sizeof key);
    cli_info("problem %s %s: %.3g GFLOP, %.1f MB\n", mla_design_name(o->design), key,
             flops * 1e-9, bytes * 1e-6);
    if (flops > 2e10)
        cli_info("warning: %.0f GFLOP on the CPU is slow (a few GFLOP/s per core in double): "
                 "expect minutes; use a smaller --b/--t/--h/--s%s\n",
                 flops * 1e-9, o->check ? " (--check runs the single-threaded naive formula too)" : "");

    if (cli_run_dir_create(o->out, c.mode, vname, pb, c.dir, sizeof c.dir) != 0) {
        fprintf(stderr, "mla_var3: cannot create a run folder under %s/profiles\n", o->out);
        c.dir[0] = '\0';
    } else {
        write_params(&c);
        write_stages(&c);
    }

    /* derive only the representation this design reads: the decompression is the slow part */
    mla_gen_options go = {.seed = o->seed, .varlen = o->varlen, .zero_length = 0, .permute_pages = 1,
                          .designs = 1u << pb->design};
    mla_gen g;
    mla_status st = mla_gen_create(pb, &go, &g);
    if (st != MLA_STATUS_OK) {
        fprintf(stderr, "mla_var3: generating inputs: %s\n", mla_last_error());
        return CLI_EXIT_FAIL;
    }
    int dv = o->design == MLA_DESIGN_FLASH_MLA ? pb->k : pb->d;
    size_t rows = (size_t)pb->b * pb->s * pb->h;
    float *out = malloc(rows * dv * sizeof(float)), *lse = malloc(rows * sizeof(float));
    float *nout = NULL, *nlse = NULL;
    if (!out || !lse) {
        fprintf(stderr, "mla_var3: out of host memory\n");
        mla_gen_destroy(&g);
        return CLI_EXIT_FAIL;
    }
    mla_flash_attention_tensors xa;
    mla_flash_mla_tensors xm;
    mla_var6_plus_tensors x6;
    double t0 = now_ms();
    switch (o->design) {
    case MLA_DESIGN_FLASH_ATTENTION:
        mla_gen_flash_attention_tensors(&g, &xa);
        st = mla_ref_flash_attention(pb, &xa, out, lse, 0);
        break;
    case MLA_DESIGN_FLASH_MLA:
        mla_gen_flash_mla_tensors(&g, &xm);
        st = mla_ref_flash_mla(pb, &xm, out, lse, 0);
        break;
    default:
        mla_gen_var6_plus_tensors(&g, &x6);
        st = mla_ref_var6_plus(pb, &x6, out, lse, 0);
        break;
    }
    double ref_ms = now_ms() - t0, naive_ms = -1;
    int rc = CLI_EXIT_OK;
    mla_check_report rep;
    int checked = 0;
    if (st != MLA_STATUS_OK) {
        fprintf(stderr, "mla_var3: CPU reference failed: %s\n", mla_last_error());
        rc = CLI_EXIT_FAIL;
    } else {
        cli_info("CPU reference (threaded): %.2f ms, %.2f GFLOP/s\n", ref_ms,
                 ref_ms > 0 ? flops / (ref_ms * 1e-3) * 1e-9 : 0.0);
        if (o->check) {
            nout = malloc(rows * dv * sizeof(float));
            nlse = malloc(rows * sizeof(float));
            t0 = now_ms();
            if (!nout || !nlse) st = MLA_STATUS_OUT_OF_MEMORY;
            else if (o->design == MLA_DESIGN_FLASH_ATTENTION) st = mla_naive_flash_attention(pb, &xa, nout, nlse);
            else if (o->design == MLA_DESIGN_FLASH_MLA) st = mla_naive_flash_mla(pb, &xm, nout, nlse);
            else st = mla_naive_var6_plus(pb, &x6, nout, nlse);
            naive_ms = now_ms() - t0;
            if (st != MLA_STATUS_OK) {
                fprintf(stderr, "mla_var3: naive reference failed: %s\n", mla_last_error());
                rc = CLI_EXIT_FAIL;
            } else {
                mla_check_compare(pb, dv, out, lse, nout, nlse, &rep);
                checked = 1;
                cli_info("naive formula: %.2f ms\n", naive_ms);
                print_check(&rep);
                if (!rep.pass) rc = CLI_EXIT_FAIL;
            }
        }
    }
    cJSON *res = cJSON_CreateObject();
    cJSON_AddStringToObject(res, "mode", "cpu-reference");
    cJSON_AddStringToObject(res, "version", vname);
    cJSON_AddItemToObject(res, "problem", cli_json_problem(pb));
    cJSON_AddNullToObject(res, "device");
    cJSON *tm = cJSON_AddObjectToObject(res, "timings");
    cJSON_AddNumberToObject(tm, "ref_ms", ref_ms);
    if (naive_ms >= 0) cJSON_AddNumberToObject(tm, "naive_ms", naive_ms);
    cJSON_AddItemToObject(res, "check", cli_json_check(checked ? &rep : NULL));
    if (rc == CLI_EXIT_FAIL && !checked) cJSON_AddStringToObject(res, "error", mla_last_error());
    finish_result(&c, res);
    free(out); free(lse); free(nout); free(nlse);
    mla_gen_destroy(&g);
    return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* GPU                                                                                        */
/* ---------------------------------------------------------------------------------------- */

static void tune_progress(int done, int total, double best_us, void *ctx)
{
    (void)ctx;
    if (!isatty(2)) return;
    if (best_us > 0 && isfinite(best_us))
        fprintf(stderr, "\r[autotune] %d/%d candidates, best %.1f us   ", done, total, best_us);
    else
        fprintf(stderr, "\r[autotune] %d/%d candidates   ", done, total);
    if (done == total) fputc('\n', stderr);
    fflush(stderr);
}

static int skipped_exit(run_ctx *c, const char *why)
{
    cli_info("skipped: %s\n", why);
    if (cli_run_dir_create(c->o->out, c->mode, c->version_name, c->pb, c->dir, sizeof c->dir) == 0)
        write_params(c);
    else
        c->dir[0] = '\0';
    cJSON *res = cJSON_CreateObject();
    cJSON_AddStringToObject(res, "mode", "gpu");
    cJSON_AddStringToObject(res, "version", c->version_name);
    cJSON_AddBoolToObject(res, "skipped", 1);
    cJSON_AddStringToObject(res, "reason", why);
    cJSON_AddItemToObject(res, "problem", cli_json_problem(c->pb));
    cJSON_AddItemToObject(res, "device", cli_json_device(c->dev));
    finish_result(c, res);
    return CLI_EXIT_DEVICE;
}

static int run_under_profiler(const cli_run_opts *o, run_ctx *c)
{
    int ncu = o->prof == CLI_PROF_NCU;
    const char *name = ncu ? "ncu" : "nsys";
    static const char *const ncu_dirs[] = {"/usr/local/cuda/bin", "/opt/nvidia/nsight-compute/*",
                                           "/usr/local/cuda/nsight-compute*", NULL};
    static const char *const nsys_dirs[] = {"/usr/local/cuda/bin", "/opt/nvidia/nsight-systems/*/bin",
                                            "/usr/local/cuda/nsight-systems*/bin", NULL};
    char tool[1024], exe[2048];
    if (!cli_find_tool(name, ncu ? ncu_dirs : nsys_dirs, tool, sizeof tool)) {
        fprintf(stderr, "mla_var3: --prof_type=%s: %s not found on PATH, in /usr/local/cuda/bin or %s; "
                "install Nsight %s or use --prof_type=event\n", name, name,
                ncu ? "/opt/nvidia/nsight-compute/*/" : "/opt/nvidia/nsight-systems/*/bin",
                ncu ? "Compute" : "Systems");
        return CLI_EXIT_PROFILER;
    }
    if (cli_self_exe(exe, sizeof exe) != 0) {
        fprintf(stderr, "mla_var3: cannot find this executable (/proc/self/exe)\n");
        return CLI_EXIT_FAIL;
    }
    if (cli_run_dir_create(o->out, c->mode, c->version_name, c->pb, c->dir, sizeof c->dir) != 0) {
        fprintf(stderr, "mla_var3: cannot create a run folder under %s/profiles\n", o->out);
        return CLI_EXIT_FAIL;
    }
    char prof[4200], rep[4300], csv[4300], envdir[4300], logf[4300];
    snprintf(prof, sizeof prof, "%s/profile", c->dir);
    snprintf(envdir, sizeof envdir, "MLA_VAR3_RUN_DIR=%s", c->dir);
    char *env[] = {"MLA_VAR3_UNDER_PROFILER=1", envdir, NULL};
    char *argv[64];
    int n = 0;
    argv[n++] = tool;
    if (ncu) {
        /* clocks as found (ANCHORS.md measured that way); the child runs as prof_type=event */
        /* --launch-count: the child replays the pipeline many times; a few launches of each stage
           are enough and keep a full-set profile (dozens of passes per kernel) short */
        char *a[] = {"--clock-control", "none", "--set", "full", "--launch-count", "6",
                     "--export", prof, "--force-overwrite"};
        for (size_t i = 0; i < sizeof a / sizeof a[0]; i++) argv[n++] = a[i];
        if (o->json) {   /* keep ncu's own "==PROF==" lines out of the one JSON object on stdout */
            snprintf(logf, sizeof logf, "%s/ncu.log", c->dir);
            argv[n++] = "--log-file";
            argv[n++] = logf;
        }
    } else {
        char *a[] = {"profile", "--force-overwrite", "true", "--trace", "cuda,nvtx", "-o", prof};
        for (size_t i = 0; i < sizeof a / sizeof a[0]; i++) argv[n++] = a[i];
    }
    argv[n++] = exe;
    for (int i = 0; i < o->argc && n < 63; i++) argv[n++] = o->argv[i];
    argv[n] = NULL;
    cli_info("profiling under %s into %s\n", tool, c->dir);
    int rc = cli_spawn(argv, NULL, 0, env);
    if (rc < 0) {
        fprintf(stderr, "mla_var3: could not start %s\n", tool);
        return CLI_EXIT_PROFILER;
    }
    if (ncu) {
        snprintf(rep, sizeof rep, "%s.ncu-rep", prof);
        snprintf(csv, sizeof csv, "%s/ncu.csv", c->dir);
        char *iargv[] = {tool, "--import", rep, "--csv", "--page", "raw", NULL};
        int irc = cli_spawn(iargv, csv, 0, NULL);
        cli_info("report: %s\nraw metrics: %s%s\nnext: mla_var3 gate --ncu=%s --needs=...\n", rep, csv,
                 irc == 0 ? "" : " (export failed)", csv);
    } else {
        cli_info("report: %s.nsys-rep\n", prof);
    }
    return rc;
}

static mla_status plan_for(const cli_run_opts *o, const mla_plan_options *po, mla_plan_t *plan)
{
    switch (o->design) {
    case MLA_DESIGN_FLASH_ATTENTION: return mla_flash_attention_plan(&o->pb, po, plan);
    case MLA_DESIGN_FLASH_MLA: return mla_flash_mla_plan(&o->pb, po, plan);
    default: return mla_var6_plus_plan(&o->pb, po, plan);
    }
}

static int status_exit(mla_status st)
{
    switch (st) {
    case MLA_STATUS_INVALID_ARGUMENT: return CLI_EXIT_USAGE;
    case MLA_STATUS_UNSUPPORTED:
    case MLA_STATUS_ARCH_MISMATCH:
    case MLA_STATUS_NO_DEVICE: return CLI_EXIT_DEVICE;
    default: return CLI_EXIT_FAIL;
    }
}

static int run_gpu(const cli_run_opts *o)
{
    const mla_problem *pb = &o->pb;
    mla_device_info dev;
    mla_status st = mla_device_query(o->device, &dev);
    if (st != MLA_STATUS_OK) {
        fprintf(stderr, "mla_var3: --device=%d: %s\n", o->device, mla_last_error());
        return CLI_EXIT_DEVICE;
    }
    mla_device_measure_load(&dev);   /* measured peaks if `devices --measure` cached them */
    cli_gpu_set_device(o->device);
    int child = under_profiler();
    cli_prof_type prof = o->prof;
    if (child && (prof == CLI_PROF_NCU || prof == CLI_PROF_NSYS)) prof = CLI_PROF_EVENT;

    run_ctx c;
    memset(&c, 0, sizeof c);
    c.o = o;
    c.pb = pb;
    c.dev = &dev;
    c.mode = cli_prof_name(o->prof);
    c.tiling_source = "default";
    char why[512] = "";
    if (o->version[0]) {
        c.kv = mla_registry_find(o->version);
        if (!c.kv) return cli_usage_error("%s: no such kernel version (see mla_var3 list)", o->version);
        c.version_name = c.kv->name;
        if (!mla_arch_allows(c.kv->target, dev.cc_major, dev.cc_minor, why, sizeof why))
            return skipped_exit(&c, why);
    } else {
        c.kv = mla_registry_default(o->design, dev.cc_major, dev.cc_minor, why, sizeof why);
        if (!c.kv) {
            char vn[96];
            snprintf(vn, sizeof vn, "%s_none", mla_design_name(o->design));
            c.version_name = vn;
            return skipped_exit(&c, why[0] ? why : "no version of this design runs on this GPU");
        }
        c.version_name = c.kv->name;
    }
    cli_info("device %d: %s (cc %d.%d, %d SMs)\n", dev.ordinal, dev.name, dev.cc_major, dev.cc_minor,
             dev.sm_count);
    if (o->design == MLA_DESIGN_MLA_VAR6_PLUS && !o->n_given)
        cli_info("note: --n not given: n = t/2 = %d newest tokens decompressed\n", pb->n);
    st = mla_problem_check(pb, 1);
    if (st != MLA_STATUS_OK) {
        fprintf(stderr, "mla_var3: %s\n", mla_last_error());
        return status_exit(st);
    }
    if (!child && (o->prof == CLI_PROF_NCU || o->prof == CLI_PROF_NSYS)) return run_under_profiler(o, &c);

    /* Autotune here (not inside plan) so that a terminal sees the progress. */
    mla_tune_result tune;
    int tuned = 0;
    char tiling_text[256] = "";
    char cache_path[1024] = "";
    if (o->autotune) {
        st = mla_autotune(c.kv, pb, &dev, tune_progress, NULL, &tune);
        if (st != MLA_STATUS_OK || tune.winner < 0) {
            fprintf(stderr, "mla_var3: autotune of %s: %s\n", c.kv->name,
                    st != MLA_STATUS_OK ? mla_last_error() : "no candidate ran");
            return status_exit(st != MLA_STATUS_OK ? st : MLA_STATUS_UNSUPPORTED);
        }
        tuned = 1;
        for (int i = 0; i < tune.num_entries; i++) {
            char tt[160];
            mla_tiling_format(&tune.entries[i].tiling, tt, sizeof tt);
            if (tune.entries[i].ok)
                cli_info("[autotune] %-48s %10.1f us%s\n", tt, tune.entries[i].median_us,
                         i == tune.winner ? "  <- winner" : "");
            else
                cli_info("[autotune] %-48s    skipped: %s\n", tt, tune.entries[i].error);
        }
        mla_tune_cache_path(mla_tune_cache_default_dir(), &dev, c.kv->name, pb, cache_path,
                            sizeof cache_path);
        if (mla_tune_cache_store_problem(cache_path, &tune, pb) != MLA_STATUS_OK) {
            cli_info("warning: could not write the tune cache %s: %s\n", cache_path, mla_last_error());
            cache_path[0] = '\0';
        }
        mla_tiling_format(&tune.entries[tune.winner].tiling, tiling_text, sizeof tiling_text);
    }
    mla_plan_options po;
    mla_plan_options_init(&po);
    po.device = o->device;
    po.version = c.kv->name;
    po.tiling = tuned ? tiling_text : o->tiling;
    po.autotune = MLA_AUTOTUNE_OFF;   /* OFF still takes a cached winner if there is one */
    mla_plan_t plan = NULL;
    st = plan_for(o, &po, &plan);
    if (st != MLA_STATUS_OK) {
        if (st == MLA_STATUS_ARCH_MISMATCH) return skipped_exit(&c, mla_last_error());
        fprintf(stderr, "mla_var3: plan %s: %s\n", c.kv->name, mla_last_error());
        return status_exit(st);
    }
    if (!tuned && plan->cache_warning[0])
        fprintf(stderr, "warning: %s; ignored (--autotune rewrites it)\n", plan->cache_warning);
    c.tiling = plan->tiling;
    c.tiling_source = tuned ? "autotune" : plan->tiling_source;
    c.cache_path = tuned ? cache_path : plan->cache_path;
    mla_tiling_format(&c.tiling, tiling_text, sizeof tiling_text);
    cli_info("version %s (%s, %s): %s\n", c.kv->name, mla_tier_name(c.kv->tier),
             mla_target_name(c.kv->target), c.kv->note ? c.kv->note : "");
    cli_info("tiling %s (%s), workspace %zu bytes\n", tiling_text, c.tiling_source, plan->workspace_bytes);

    if (cli_run_dir_create(o->out, c.mode, c.kv->name, pb, c.dir, sizeof c.dir) != 0) {
        fprintf(stderr, "mla_var3: cannot create a run folder under %s/profiles\n", o->out);
        c.dir[0] = '\0';
    } else {
        write_params(&c);
        write_stages(&c);
    }

    cJSON *res = cJSON_CreateObject();
    cJSON_AddStringToObject(res, "mode", "gpu");
    cJSON_AddStringToObject(res, "prof_type", cli_prof_name(prof));
    cJSON_AddStringToObject(res, "version", c.kv->name);
    cJSON_AddStringToObject(res, "tier", mla_tier_name(c.kv->tier));
    cJSON_AddStringToObject(res, "target", mla_target_name(c.kv->target));
    cJSON_AddItemToObject(res, "problem", cli_json_problem(pb));
    cJSON_AddItemToObject(res, "device", cli_json_device(&dev));
    cJSON_AddItemToObject(res, "tiling", cli_json_tiling(&c.tiling));
    cJSON_AddStringToObject(res, "tiling_source", c.tiling_source);
    cJSON_AddNumberToObject(res, "workspace_bytes", (double)plan->workspace_bytes);
    int rc = CLI_EXIT_OK;

    /* --check: the same problem, version and tiling against the naive GPU reference. */
    if (o->check) {
        mla_gpu_check_options go;
        memset(&go, 0, sizeof go);
        go.seed = o->seed;
        go.varlen = o->varlen;
        go.permute_pages = 1;
        go.version = c.kv->name;
        go.tiling = tiling_text;
        go.device = o->device;
        mla_check_report rep;
        memset(&rep, 0, sizeof rep);
        st = mla_gpu_check(pb, &go, &rep);
        if (st != MLA_STATUS_OK) {
            fprintf(stderr, "mla_var3: check could not run: %s\n", mla_last_error());
            cJSON_AddNullToObject(res, "check");
            cJSON_AddStringToObject(res, "error", mla_last_error());
            finish_result(&c, res);
            mla_plan_destroy(plan);
            return status_exit(st);
        }
        print_check(&rep);
        cJSON_AddItemToObject(res, "check", cli_json_check(&rep));
        if (!rep.pass) {
            finish_result(&c, res);
            mla_plan_destroy(plan);
            return CLI_EXIT_FAIL;
        }
    } else {
        cJSON_AddNullToObject(res, "check");
    }
    if (o->varlen) cli_info("note: timing uses full-length requests (--varlen applies to --check)\n");

    /* Timing by CUDA-graph replay. Under a profiler: one input copy and few replays. */
    mla_dev_inputs in;
    memset(&in, 0, sizeof in);
    void *ws = NULL;
    st = mla_dev_inputs_create_paged(pb, child ? 1 : 0, o->seed, o->pages_sequential ? MLA_PAGES_SEQUENTIAL : MLA_PAGES_RANDOM,
                                     &dev, &in);
    if (st == MLA_STATUS_OK && cli_gpu_alloc(&ws, plan->workspace_bytes, why, sizeof why) != 0)
        st = mla_fail(MLA_STATUS_OUT_OF_MEMORY, "workspace: %s", why);
    cJSON *tm = cJSON_AddObjectToObject(res, "timings");
    if (st != MLA_STATUS_OK) {
        fprintf(stderr, "mla_var3: device inputs: %s\n", mla_last_error());
        cJSON_AddStringToObject(res, "error", mla_last_error());
        rc = CLI_EXIT_FAIL;
    } else {
        int warm = prof == CLI_PROF_DISABLED ? 0 : child ? 1 : 10;
        int reps = prof == CLI_PROF_DISABLED ? 1 : child ? 2 : 50;
        /* one call a replay when run once or under a profiler's child (each launch profiled) */
        int calls = prof == CLI_PROF_DISABLED || child ? 1 : cli_time_calls();
        double med = 0, mn = 0, first10 = 0, last10 = 0;
        char how[128] = "";
        if (prof == CLI_PROF_DISABLED || child)
            st = mla_time_pipeline(c.kv, &c.tiling, &dev, &in, ws, ~0u, warm, reps, calls, &med, &mn);
        else
            st = cli_time_total(c.kv, &c.tiling, &dev, &in, ws, warm, reps, calls, &med, &mn, how, sizeof how, &first10,
                                &last10);
        if (st != MLA_STATUS_OK) {
            fprintf(stderr, "mla_var3: run failed: %s\n", mla_last_error());
            cJSON_AddStringToObject(res, "error", mla_last_error());
            rc = CLI_EXIT_FAIL;
        } else if (prof == CLI_PROF_DISABLED) {
            cli_info("ran once: %.1f us (one replay; --prof_type=event gives a median)\n", med);
            cJSON_AddNumberToObject(tm, "once_us", med);
        } else {
            cli_info("total: %.1f us (%s, min %.1f)\n", med, how, mn);
            /* the two ends of the run: on the H200 the start is uncapped, the end under the power cap */
            cli_info("  first %d runs %.1f us, last %d %.1f\n", CLI_SERIES_ENDS, first10, CLI_SERIES_ENDS, last10);
            cJSON_AddStringToObject(tm, "method", cli_time_flush() ? "flush" : "graph");
            cJSON_AddNumberToObject(tm, "total_us", med);
            cJSON_AddNumberToObject(tm, "min_us", mn);
            cJSON_AddNumberToObject(tm, "first10_us", first10);
            cJSON_AddNumberToObject(tm, "last10_us", last10);
            cJSON *stj = cJSON_AddObjectToObject(tm, "stages");
            /* Each stage alone reads what the full runs left in the workspace: fine for timing. */
            for (int i = 0; i < c.kv->num_stages && i < 32; i++) {
                mla_stage_config cfg;
                memset(&cfg, 0, sizeof cfg);
                const char *sn = c.kv->stage_names[i] ? c.kv->stage_names[i] : "stage";
                if (c.kv->stage_config && !c.kv->stage_config(&c.tiling, pb, &dev, i, &cfg)) {
                    cli_info("  stage %-10s does not run for this problem\n", sn);
                    cJSON_AddNullToObject(stj, sn);
                    continue;
                }
                double smed = 0, smin = 0;
                if (mla_time_pipeline(c.kv, &c.tiling, &dev, &in, ws, 1u << i, warm, reps, calls, &smed,
                                      &smin) == MLA_STATUS_OK) {
                    cli_info("  stage %-10s %10.1f us  (grid %u x %u x %u, block %u, smem %zu)\n", sn,
                             smed, cfg.grid[0], cfg.grid[1], cfg.grid[2], cfg.block[0], cfg.smem_dynamic);
                    cJSON_AddNumberToObject(stj, sn, smed);
                } else {
                    cli_info("  stage %-10s failed: %s\n", sn, mla_last_error());
                    cJSON_AddNullToObject(stj, sn);
                }
            }
            if (prof == CLI_PROF_ANNOTATION) {
                cJSON *rf = cJSON_AddObjectToObject(res, "roofline");
                for (int m = 0; m < 2; m++) {
                    double pt = m ? dev.measured_tflops : dev.peak_bf16_tflops;
                    double pg = m ? dev.measured_gbs : dev.peak_mem_gbs;
                    const char *src = m ? "measured" : "datasheet";
                    if (pt <= 0 || pg <= 0) {
                        if (m) cli_info("roofline (measured peaks): not measured (run: mla_var3 devices --measure)\n");
                        else cli_info("roofline (datasheet): no datasheet peaks for this device\n");
                        cJSON_AddNullToObject(rf, src);
                        continue;
                    }
                    cli_roofline r;
                    cli_roofline_compute(pb, med, pt, pg, &r);
                    if (!m) {
                        cli_info("achieved: %.1f us, %.1f TFLOP/s, %.0f GB/s (%.3g GFLOP, %.3g MB)\n", med,
                                 r.tflops, r.gbs, r.flops * 1e-9, r.bytes * 1e-6);
                        cJSON_AddNumberToObject(rf, "us", med);
                        cJSON_AddNumberToObject(rf, "tflops", r.tflops);
                        cJSON_AddNumberToObject(rf, "gbs", r.gbs);
                        cJSON_AddNumberToObject(rf, "flops", r.flops);
                        cJSON_AddNumberToObject(rf, "bytes", r.bytes);
                    }
                    cli_info("roofline (%s peaks %.0f TFLOP/s, %.0f GB/s): floor %.1f us, %.1f %% of floor, %s\n",
                             src, pt, pg, r.floor_us, r.pct_of_floor,
                             r.memory_bound ? "memory-bound" : "compute-bound");
                    cJSON *rj = cJSON_AddObjectToObject(rf, src);
                    cJSON_AddNumberToObject(rj, "peak_tflops", pt);
                    cJSON_AddNumberToObject(rj, "peak_gbs", pg);
                    cJSON_AddNumberToObject(rj, "floor_us", r.floor_us);
                    cJSON_AddNumberToObject(rj, "pct_of_floor", r.pct_of_floor);
                    cJSON_AddStringToObject(rj, "bound", r.memory_bound ? "memory-bound" : "compute-bound");
                }
            }
        }
    }
    cli_gpu_free(ws);
    mla_dev_inputs_destroy(&in);
    finish_result(&c, res);
    mla_plan_destroy(plan);
    return rc;
}

int cli_cmd_design(int argc, char **argv)
{
    cli_run_opts o;
    int rc = cli_parse_run(argc, argv, &o);
    if (rc) return rc;
    cli_json_mode = o.json;
    if (mla_device_count() == 0) return run_cpu(&o);
    return run_gpu(&o);
}
