/*
 * `mla_var3 gate --ncu=FILE.csv --needs=LIST`: DESIGN.md's suitability gate. Reads an Nsight
 * Compute CSV (`ncu --csv --page raw`: a header row of metric names, a units row, one row per
 * kernel; quoted fields, commas inside quotes, thousands separators) and decides "move to
 * hopper" or "stay portable", printing each metric, threshold and the rule that fired.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

typedef struct csv_row {
    int n;
    char **f;
} csv_row;

typedef struct csv_table {
    int n, cap;
    csv_row *rows;
} csv_table;

static void row_push(csv_row *r, const char *s, size_t len)
{
    r->f = realloc(r->f, (size_t)(r->n + 1) * sizeof *r->f);
    r->f[r->n] = malloc(len + 1);
    memcpy(r->f[r->n], s, len);
    r->f[r->n][len] = '\0';
    r->n++;
}

static void table_push(csv_table *t, csv_row r)
{
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 16;
        t->rows = realloc(t->rows, (size_t)t->cap * sizeof *t->rows);
    }
    t->rows[t->n++] = r;
}

/* RFC-4180-ish: quotes, "" escapes, commas and newlines inside quotes, CRLF. */
static void csv_parse(const char *s, csv_table *t)
{
    size_t cap = 256, len = 0;
    char *buf = malloc(cap);
    csv_row row = {0, NULL};
    int inq = 0, any = 0;
    for (const char *p = s;; p++) {
        char ch = *p;
        if (inq) {
            if (ch == '\0') inq = 0;
            else if (ch == '"' && p[1] == '"') { ch = '"'; p++; }
            else if (ch == '"') { inq = 0; continue; }
            if (inq) {
                if (len + 1 >= cap) buf = realloc(buf, cap *= 2);
                buf[len++] = ch;
                continue;
            }
        }
        if (ch == '"' && len == 0) { inq = 1; any = 1; continue; }
        if (ch == ',') { row_push(&row, buf, len); len = 0; any = 1; continue; }
        if (ch == '\r') continue;
        if (ch == '\n' || ch == '\0') {
            if (any || len) {
                row_push(&row, buf, len);
                table_push(t, row);
            }
            row.n = 0; row.f = NULL; len = 0; any = 0;
            if (ch == '\0') break;
            continue;
        }
        if (len + 1 >= cap) buf = realloc(buf, cap *= 2);
        buf[len++] = ch;
        any = 1;
    }
    free(buf);
}

static void csv_free(csv_table *t)
{
    for (int i = 0; i < t->n; i++) {
        for (int j = 0; j < t->rows[i].n; j++) free(t->rows[i].f[j]);
        free(t->rows[i].f);
    }
    free(t->rows);
}

static int col_of(const csv_row *hdr, const char *name)
{
    for (int i = 0; i < hdr->n; i++)
        if (!strcmp(hdr->f[i], name)) return i;
    return -1;
}

/* A metric value: "1,024" and "45.2" parse; "", "n/a" do not. */
static int parse_value(const char *s, double *v)
{
    char buf[128];
    size_t n = 0;
    for (; *s && n + 1 < sizeof buf; s++)
        if (*s != ',' && !isspace((unsigned char)*s)) buf[n++] = *s;
    buf[n] = '\0';
    if (!n) return 0;
    char *end;
    double x = strtod(buf, &end);
    if (*end || !isfinite(x)) return 0;
    *v = x;
    return 1;
}

typedef struct metric {
    const char *name;
    const char *label;
    double v;
    int present;
} metric;

static const char *const hopper_controls[] = {"producer_consumer", "barrier_scheduling", "tma_pipeline",
                                              "clusters", "register_movement", "wgmma", NULL};
static const char *const portable_controls[] = {"tile_size", "split_count", "cta_remap", "occupancy", NULL};

static int in_list(const char *const *l, const char *s)
{
    for (int i = 0; l[i]; i++)
        if (!strcmp(l[i], s)) return 1;
    return 0;
}

int cli_cmd_gate(int argc, char **argv)
{
    const char *file = NULL, *needs = NULL, *kernel = NULL;
    double thr = 1.0;
    int json = 0;
    for (int i = 1; i < argc; i++) {
        const char *v;
        int missing = 0;
        if ((v = cli_flag_value(argv[i], "ncu", &missing))) file = v;
        else if ((v = cli_flag_value(argv[i], "needs", &missing))) needs = v;
        else if ((v = cli_flag_value(argv[i], "kernel", &missing))) kernel = v;
        else if ((v = cli_flag_value(argv[i], "eligible", &missing))) {
            int rc = cli_parse_double(argv[i], v, 0.0, &thr);
            if (rc) return rc;
        } else if (!strcmp(argv[i], "--json")) json = 1;
        else if (missing) return cli_usage_error("%s: needs a value (%s=...)", argv[i], argv[i]);
        else return cli_usage_error("%s: unknown flag (see: mla_var3 gate --help)", argv[i]);
    }
    if (!file || !*file) return cli_usage_error("gate: --ncu=FILE.csv is required");
    if (!needs || !*needs) return cli_usage_error("gate: --needs=LIST is required (see mla_var3 gate --help)");
    cli_json_mode = json;

    /* --needs */
    char needs_copy[1024];
    snprintf(needs_copy, sizeof needs_copy, "%s", needs);
    char hopper_need[512] = "", portable_need[512] = "";
    int n_hopper = 0, n_portable = 0;
    cJSON *jn = cJSON_CreateArray();
    char *save = NULL;
    for (char *tok = strtok_r(needs_copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        while (*tok == ' ') tok++;
        if (in_list(hopper_controls, tok)) {
            if (n_hopper++) strncat(hopper_need, ", ", sizeof hopper_need - strlen(hopper_need) - 1);
            strncat(hopper_need, tok, sizeof hopper_need - strlen(hopper_need) - 1);
        } else if (in_list(portable_controls, tok)) {
            if (n_portable++) strncat(portable_need, ", ", sizeof portable_need - strlen(portable_need) - 1);
            strncat(portable_need, tok, sizeof portable_need - strlen(portable_need) - 1);
        } else {
            cJSON_Delete(jn);
            return cli_usage_error("--needs=%s: unknown control '%s' (hopper-tier: producer_consumer, "
                                   "barrier_scheduling, tma_pipeline, clusters, register_movement, wgmma; "
                                   "portable: tile_size, split_count, cta_remap, occupancy)", needs, tok);
        }
        cJSON_AddItemToArray(jn, cJSON_CreateString(tok));
    }
    if (!n_hopper && !n_portable) {
        cJSON_Delete(jn);
        return cli_usage_error("--needs=%s: no control given", needs);
    }

    /* the CSV */
    char *text = cli_read_file(file, NULL);
    if (!text) {
        cJSON_Delete(jn);
        return cli_usage_error("--ncu=%s: cannot read the file", file);
    }
    csv_table t = {0, 0, NULL};
    csv_parse(text, &t);
    free(text);
    int hdr = -1;
    for (int i = 0; i < t.n && hdr < 0; i++)   /* skip "==PROF==" and other preamble lines */
        if (col_of(&t.rows[i], "Kernel Name") >= 0 || col_of(&t.rows[i], "ID") >= 0) hdr = i;
    if (hdr < 0) {
        csv_free(&t);
        cJSON_Delete(jn);
        return cli_usage_error("--ncu=%s: no header row with \"Kernel Name\" or \"ID\" (expected ncu --csv --page raw)", file);
    }
    const csv_row *H = &t.rows[hdr];
    int c_id = col_of(H, "ID"), c_name = col_of(H, "Kernel Name"), c_time = col_of(H, "gpu__time_duration.sum");
    int first = hdr + 1;
    /* the units row: its ID (or first) field is not a number */
    if (first < t.n) {
        const csv_row *u = &t.rows[first];
        int c = c_id >= 0 ? c_id : 0;
        double dummy;
        if (c >= u->n || !parse_value(u->f[c], &dummy)) first++;
    }
    int best = -1;
    double best_time = -1;
    int nk = 0;
    for (int i = first; i < t.n; i++) {
        const csv_row *r = &t.rows[i];
        if (r->n < H->n / 2) continue;   /* a stray line */
        nk++;
        const char *kn = c_name >= 0 && c_name < r->n ? r->f[c_name] : "";
        if (kernel) {
            if (strstr(kn, kernel) && best < 0) best = i;
            continue;
        }
        double tv = 0;
        int has = c_time >= 0 && c_time < r->n && parse_value(r->f[c_time], &tv);
        if (best < 0 || (has && tv > best_time)) {
            best = i;
            best_time = has ? tv : best_time;
        }
    }
    if (nk == 0 || best < 0) {
        csv_free(&t);
        cJSON_Delete(jn);
        if (nk == 0) return cli_usage_error("--ncu=%s: no kernel rows after the header", file);
        return cli_usage_error("--kernel=%s: no kernel name in %s contains it", kernel, file);
    }
    const csv_row *R = &t.rows[best];
    const char *kname = c_name >= 0 && c_name < R->n ? R->f[c_name] : "(unnamed)";

    metric m[] = {
        {"launch__occupancy_limit_shared_mem", "CTA limit by shared memory", 0, 0},
        {"launch__occupancy_limit_registers", "CTA limit by registers", 0, 0},
        {"launch__occupancy_limit_warps", "CTA limit by warps", 0, 0},
        {"launch__occupancy_limit_blocks", "CTA limit by blocks", 0, 0},
        {"sm__warps_active.avg.pct_of_peak_sustained_active", "achieved occupancy (%)", 0, 0},
        {"launch__registers_per_thread", "registers per thread", 0, 0},
        {"launch__shared_mem_per_block_dynamic", "dynamic shared memory per CTA (bytes)", 0, 0},
        {"smsp__warps_eligible.avg.per_cycle_active", "eligible warps per scheduler", 0, 0},
        {"sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active", "tensor pipe (% of peak)", 0, 0},
        {"gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed", "DRAM throughput (% of peak)", 0, 0},
        {"sm__ctas_launched.sum", "CTAs launched", 0, 0},
        {"device__attribute_multiprocessor_count", "SMs", 0, 0},
    };
    enum { M_LSMEM, M_LREG, M_LWARP, M_LBLK, M_OCC, M_REGS, M_DSMEM, M_ELIG, M_TENSOR, M_DRAM, M_CTAS, M_SMS, M_N };
    char missing[1024] = "";
    for (int i = 0; i < M_N; i++) {
        int c = col_of(H, m[i].name);
        m[i].present = c >= 0 && c < R->n && parse_value(R->f[c], &m[i].v);
        if (!m[i].present && i != M_CTAS && i != M_SMS && i != M_LBLK && i != M_LWARP) {
            if (missing[0]) strncat(missing, ", ", sizeof missing - strlen(missing) - 1);
            strncat(missing, m[i].name, sizeof missing - strlen(missing) - 1);
        }
    }
    /* CTAs resident per SM: the tightest occupancy limit; else launched CTAs / SMs. */
    double ctas = -1;
    const char *ctas_src = "missing";
    for (int i = M_LSMEM; i <= M_LBLK; i++)
        if (m[i].present && (ctas < 0 || m[i].v < ctas)) { ctas = m[i].v; ctas_src = m[i].name; }
    if (ctas < 0 && m[M_CTAS].present && m[M_SMS].present && m[M_SMS].v > 0) {
        ctas = m[M_CTAS].v / m[M_SMS].v;
        ctas_src = "sm__ctas_launched.sum / device__attribute_multiprocessor_count";
    }
    int have_ev = ctas >= 0 && m[M_ELIG].present;
    int one_cta = ctas >= 0 && ctas <= 1.0;
    int few_elig = m[M_ELIG].present && m[M_ELIG].v < thr;
    int evidence = have_ev && one_cta && few_elig;
    int move = evidence && n_hopper > 0 && n_portable == 0;

    cli_info("gate: %s, kernel \"%s\" (row %d of %d%s)\n", file, kname, best - first + 1, nk,
             kernel ? ", chosen by --kernel" : c_time >= 0 ? ", the longest by gpu__time_duration.sum" : "");
    for (int i = 0; i < M_N; i++)
        if (m[i].present) cli_info("  %-42s %12.8g   (%s)\n", m[i].label, m[i].v, m[i].name);
    if (missing[0]) cli_info("  missing metrics: %s\n", missing);
    char reasons[6][1200];
    int nr = 0;
    if (ctas >= 0)
        snprintf(reasons[nr++], sizeof reasons[0], "CTAs per SM = %.3g (from %s); threshold: 1 CTA/SM -> %s", ctas, ctas_src,
                 one_cta ? "yes" : "no");
    else
        snprintf(reasons[nr++], sizeof reasons[0], "CTAs per SM unknown (no launch__occupancy_limit_* or sm__ctas_launched metric) -> evidence incomplete");
    if (m[M_ELIG].present)
        snprintf(reasons[nr++], sizeof reasons[0], "eligible warps per scheduler = %.3g; threshold: < %.2f -> %s", m[M_ELIG].v,
                 thr, few_elig ? "yes" : "no");
    else
        snprintf(reasons[nr++], sizeof reasons[0], "eligible warps per scheduler unknown (smsp__warps_eligible.avg.per_cycle_active missing) -> evidence incomplete");
    snprintf(reasons[nr++], sizeof reasons[0], "needed hopper-tier controls: %s", n_hopper ? hopper_need : "none");
    snprintf(reasons[nr++], sizeof reasons[0], "needed portable controls: %s", n_portable ? portable_need : "none");
    if (move)
        snprintf(reasons[nr++], sizeof reasons[0], "rule: evidence (1 CTA/SM, few eligible warps) AND a hopper-tier control AND no portable control -> move to hopper");
    else if (!evidence)
        snprintf(reasons[nr++], sizeof reasons[0], "rule: the profile does not show 1 CTA/SM with < %.2f eligible warps per scheduler -> stay portable", thr);
    else if (n_portable)
        snprintf(reasons[nr++], sizeof reasons[0], "rule: a portable control (%s) is still the next step -> stay portable", portable_need);
    else
        snprintf(reasons[nr++], sizeof reasons[0], "rule: no hopper-tier control is needed -> stay portable");
    for (int i = 0; i < nr; i++) cli_info("  - %s\n", reasons[i]);
    cli_info("decision: %s\n", move ? "move to hopper" : "stay portable");

    if (json) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "file", file);
        cJSON_AddStringToObject(o, "kernel", kname);
        cJSON *mj = cJSON_AddObjectToObject(o, "metrics");
        for (int i = 0; i < M_N; i++)
            if (m[i].present) cJSON_AddNumberToObject(mj, m[i].name, m[i].v);
        if (ctas >= 0) cJSON_AddNumberToObject(o, "ctas_per_sm", ctas);
        else cJSON_AddNullToObject(o, "ctas_per_sm");
        cJSON_AddNumberToObject(o, "eligible_threshold", thr);
        cJSON_AddItemToObject(o, "needs", jn);
        jn = NULL;
        cJSON_AddBoolToObject(o, "evidence", evidence);
        cJSON_AddStringToObject(o, "decision", move ? "move to hopper" : "stay portable");
        cJSON *rj = cJSON_AddArrayToObject(o, "reasons");
        for (int i = 0; i < nr; i++) cJSON_AddItemToArray(rj, cJSON_CreateString(reasons[i]));
        cJSON_AddStringToObject(o, "missing", missing);
        cli_json_print(o);
        cJSON_Delete(o);
    }
    cJSON_Delete(jn);
    csv_free(&t);
    return 0;
}
