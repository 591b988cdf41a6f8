/*
 * Strict parsing of the mla_var3 command line. Every error is ONE stderr line that names the
 * offending flag ("mla_var3: --t=abc: not an integer") and exit code 2; nothing runs.
 * The final shape check is the library's own (mla_problem_check) so CLI and library agree.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "args.h"
#include "cli.h"
#include "plan.h"
#include "registry.h"

static const char *const prof_names[] = {"disabled", "event", "annotation", "ncu", "nsys"};

const char *cli_prof_name(cli_prof_type p)
{
    return (unsigned)p < 5 ? prof_names[p] : "?";
}

int cli_usage_error(const char *fmt, ...)
{
    va_list ap;
    fputs("mla_var3: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return CLI_EXIT_USAGE;
}

int cli_wants_help(int argc, char **argv, int from)
{
    for (int i = from; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) return 1;
    return 0;
}

const char *cli_flag_value(const char *arg, const char *name, int *missing)
{
    size_t n = strlen(name);
    if (strncmp(arg, "--", 2) != 0 || strncmp(arg + 2, name, n) != 0) return NULL;
    if (arg[2 + n] == '=') return arg + 3 + n;
    if (arg[2 + n] == '\0' && missing) *missing = 1;
    return NULL;
}

int cli_parse_int(const char *arg, const char *val, long lo, long hi, int *out)
{
    char *end;
    errno = 0;
    if (!*val) return cli_usage_error("%s: not an integer (empty value)", arg);
    long v = strtol(val, &end, 10);
    if (*end != '\0') return cli_usage_error("%s: not an integer", arg);
    if (errno == ERANGE || v > INT_MAX || v < INT_MIN) return cli_usage_error("%s: out of range", arg);
    if (v < lo) return cli_usage_error("%s: must be >= %ld", arg, lo);
    if (v > hi) return cli_usage_error("%s: must be <= %ld", arg, hi);
    *out = (int)v;
    return 0;
}

int cli_parse_double(const char *arg, const char *val, double lo_excl, double *out)
{
    char *end;
    if (!*val) return cli_usage_error("%s: not a number (empty value)", arg);
    double v = strtod(val, &end);
    if (*end != '\0') return cli_usage_error("%s: not a number", arg);
    if (!isfinite(v)) return cli_usage_error("%s: must be finite", arg);
    if (!(v > lo_excl)) return cli_usage_error("%s: must be > %g", arg, lo_excl);
    *out = v;
    return 0;
}

int cli_parse_version(mla_design design, const char *arg, char *buf, size_t len)
{
    const char *dn = mla_design_name(design);
    const char *num = NULL;
    size_t dl = strlen(dn);
    if (arg[0] == 'v') num = arg + 1;
    else if (!strncmp(arg, dn, dl) && !strncmp(arg + dl, "_v", 2)) num = arg + dl + 2;
    if (!num || !*num || strspn(num, "0123456789") != strlen(num) || strlen(num) > 6)
        return cli_usage_error("%s: not a version of %s (expected v0 or %s_v0)", arg, dn, dn);
    snprintf(buf, len, "%s_v%d", dn, atoi(num));
    return 0;
}

/* One integer field of the problem: "--b=32" etc. */
typedef struct int_flag {
    const char *name;
    long lo;
    int *dst;
    int *given;
} int_flag;

int cli_parse_run(int argc, char **argv, cli_run_opts *o)
{
    memset(o, 0, sizeof *o);
    o->argc = argc;
    o->argv = argv;
    if (!mla_design_from_name(argv[0], &o->design))
        return cli_usage_error("%s: unknown design", argv[0]);
    mla_problem_init(&o->pb, o->design);
    mla_problem *pb = &o->pb;
    pb->design = o->design;
    pb->b = 32; pb->s = 16; pb->t = 4096; pb->h = 128; pb->d = 128; pb->k = 512; pb->p = 64;
    pb->n = 0; pb->page_size = 64; pb->causal = 1;
    o->seed = 1234;
    o->prof = CLI_PROF_DISABLED;
    o->out = "out";
    const char *s_arg = NULL, *t_arg = NULL, *n_arg = NULL;
    int dummy = 0, causal = 1;
    int_flag ints[] = {
        {"b", 1, &pb->b, NULL}, {"s", 1, &pb->s, NULL}, {"t", 1, &pb->t, NULL},
        {"h", 1, &pb->h, NULL}, {"n", 0, &pb->n, &o->n_given}, {"d", 1, &pb->d, NULL},
        {"k", 1, &pb->k, NULL}, {"p", 1, &pb->p, NULL}, {"page", 1, &pb->page_size, NULL},
        {"causal", 0, &causal, NULL}, {"device", 0, &o->device, NULL},
    };
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        int missing = 0, handled = 0;
        if (a[0] != '-') {
            if (i == 1) {
                int rc = cli_parse_version(o->design, a, o->version, sizeof o->version);
                if (rc) return rc;
                if (!mla_registry_find(o->version))
                    return cli_usage_error("%s: no such kernel version %s (see mla_var3 list)", a, o->version);
                continue;
            }
            return cli_usage_error("%s: unexpected argument (the version goes right after the design)", a);
        }
        for (size_t f = 0; f < sizeof ints / sizeof ints[0]; f++) {
            v = cli_flag_value(a, ints[f].name, &missing);
            if (missing) return cli_usage_error("%s: needs a value (--%s=N)", a, ints[f].name);
            if (!v) continue;
            long hi = !strcmp(ints[f].name, "causal") ? 1 : INT_MAX;
            int rc = cli_parse_int(a, v, ints[f].lo, hi, ints[f].dst);
            if (rc) return rc;
            if (ints[f].given) *ints[f].given = 1;
            if (!strcmp(ints[f].name, "s")) s_arg = a;
            if (!strcmp(ints[f].name, "t")) t_arg = a;
            if (!strcmp(ints[f].name, "n")) n_arg = a;
            handled = 1;
            break;
        }
        if (handled) continue;
        if ((v = cli_flag_value(a, "scale", &missing))) {
            double sc = 0;
            int rc = cli_parse_double(a, v, 0.0, &sc);
            if (rc) return rc;
            pb->scale = (float)sc;
            o->scale_given = 1;
        } else if ((v = cli_flag_value(a, "seed", &missing))) {
            char *end;
            errno = 0;
            if (!*v || *v == '-') return cli_usage_error("%s: not a non-negative integer", a);
            unsigned long long sd = strtoull(v, &end, 10);
            if (*end || errno) return cli_usage_error("%s: not a non-negative integer", a);
            o->seed = sd;
        } else if ((v = cli_flag_value(a, "pages", &missing))) {
            if (!strcmp(v, "random")) o->pages_sequential = 0;
            else if (!strcmp(v, "sequential")) o->pages_sequential = 1;
            else return cli_usage_error("%s: the page order is random or sequential", a);
        } else if ((v = cli_flag_value(a, "prof_type", &missing))) {
            int found = -1;
            for (int p = 0; p < 5; p++)
                if (!strcmp(v, prof_names[p])) found = p;
            if (found < 0)
                return cli_usage_error("%s: unknown profiling type (disabled|event|annotation|ncu|nsys)", a);
            o->prof = (cli_prof_type)found;
        } else if ((v = cli_flag_value(a, "tiling", &missing))) {
            mla_tiling scratch;
            memset(&scratch, 0, sizeof scratch);
            if (!*v) return cli_usage_error("%s: empty tiling (key=value,...)", a);
            if (mla_tiling_parse(v, &scratch) != MLA_STATUS_OK)
                return cli_usage_error("%s: %s", a, mla_last_error());
            o->tiling = v;
        } else if ((v = cli_flag_value(a, "out", &missing))) {
            if (!*v) return cli_usage_error("%s: empty directory", a);
            o->out = v;
        } else if (!strcmp(a, "--check")) {
            o->check = 1;
        } else if (!strcmp(a, "--autotune")) {
            o->autotune = 1;
        } else if (!strcmp(a, "--json")) {
            o->json = 1;
        } else if (!strcmp(a, "--varlen")) {
            o->varlen = 1;
        } else if (!strncmp(a, "--check=", 8) || !strncmp(a, "--autotune=", 11) ||
                   !strncmp(a, "--json=", 7) || !strncmp(a, "--varlen=", 9)) {
            return cli_usage_error("%s: this flag takes no value", a);
        } else {
            (void)dummy;
            if (missing) return cli_usage_error("%s: needs a value (%s=...)", a, a);
            return cli_usage_error("%s: unknown flag (see: mla_var3 %s --help)", a, argv[0]);
        }
        if (missing) return cli_usage_error("%s: needs a value (%s=...)", a, a);
    }
    pb->causal = causal;
    /* Cross-field rules, naming the flag that broke them. */
    if (pb->s > pb->t)
        return cli_usage_error("%s: must be <= --t (%d)", s_arg ? s_arg : "--s", pb->t);
    if (o->n_given && o->design != MLA_DESIGN_MLA_VAR6_PLUS)
        return cli_usage_error("%s: only mla_var6_plus has --n", n_arg);
    if (o->design == MLA_DESIGN_MLA_VAR6_PLUS) {
        if (o->n_given && pb->n > pb->t)
            return cli_usage_error("%s: must be <= --t (%d)", n_arg, pb->t);
        if (!o->n_given) pb->n = pb->t / 2;
    }
    (void)t_arg;
    if (!o->scale_given) pb->scale = (float)(1.0 / sqrt((double)(pb->d + pb->p)));
    if (o->autotune && o->tiling)
        return cli_usage_error("--tiling=%s: cannot be combined with --autotune", o->tiling);
    /* The library's own shape rules (for_kernels = 0: the CPU reference serves any valid MLA). */
    if (mla_problem_check(pb, 0) != MLA_STATUS_OK)
        return cli_usage_error("invalid problem: %s", mla_last_error());
    return 0;
}
