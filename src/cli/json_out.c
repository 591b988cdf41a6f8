/*
 * JSON builders of the CLI (cJSON): the problem, the device, a tiling, a check report, argv;
 * and the output routing of human text (stdout, or stderr when --json owns stdout).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include "cli.h"
#include "plan.h"

int cli_json_mode = 0;

void cli_info(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(cli_json_mode ? stderr : stdout, fmt, ap);
    va_end(ap);
    fflush(cli_json_mode ? stderr : stdout);
}

cJSON *cli_json_problem(const mla_problem *pb)
{
    char key[160];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "design", mla_design_name(pb->design));
    cJSON_AddNumberToObject(o, "b", pb->b);
    cJSON_AddNumberToObject(o, "s", pb->s);
    cJSON_AddNumberToObject(o, "t", pb->t);
    cJSON_AddNumberToObject(o, "h", pb->h);
    cJSON_AddNumberToObject(o, "d", pb->d);
    cJSON_AddNumberToObject(o, "k", pb->k);
    cJSON_AddNumberToObject(o, "p", pb->p);
    cJSON_AddNumberToObject(o, "n", pb->n);
    cJSON_AddNumberToObject(o, "page_size", pb->page_size);
    cJSON_AddBoolToObject(o, "causal", pb->causal != 0);
    cJSON_AddNumberToObject(o, "scale", pb->scale);
    mla_problem_key(pb, key, sizeof key);
    cJSON_AddStringToObject(o, "key", key);
    double flops = 0, bytes = 0;
    if (mla_problem_cost(pb, &flops, &bytes) == MLA_STATUS_OK) {
        cJSON_AddNumberToObject(o, "flops", flops);
        cJSON_AddNumberToObject(o, "bytes", bytes);
    }
    return o;
}

cJSON *cli_json_device(const mla_device_info *dev)
{
    if (!dev) return cJSON_CreateNull();
    cJSON *o = cJSON_CreateObject();
    char cc[16];
    snprintf(cc, sizeof cc, "%d.%d", dev->cc_major, dev->cc_minor);
    cJSON_AddStringToObject(o, "name", dev->name);
    cJSON_AddStringToObject(o, "key", dev->key);
    cJSON_AddNumberToObject(o, "ordinal", dev->ordinal);
    cJSON_AddStringToObject(o, "cc", cc);
    cJSON_AddNumberToObject(o, "sm_count", dev->sm_count);
    cJSON_AddNumberToObject(o, "smem_per_block_optin", (double)dev->smem_per_block_optin);
    cJSON_AddNumberToObject(o, "l2_bytes", (double)dev->l2_bytes);
    cJSON_AddNumberToObject(o, "sm_clock_mhz", dev->sm_clock_mhz);
    cJSON_AddNumberToObject(o, "mem_clock_mhz", dev->mem_clock_mhz);
    cJSON_AddNumberToObject(o, "peak_bf16_tflops", dev->peak_bf16_tflops);
    cJSON_AddNumberToObject(o, "peak_mem_gbs", dev->peak_mem_gbs);
    if (dev->measured_gbs > 0 || dev->measured_tflops > 0) {
        cJSON_AddNumberToObject(o, "measured_tflops", dev->measured_tflops);
        cJSON_AddNumberToObject(o, "measured_gbs", dev->measured_gbs);
    }
    cJSON_AddStringToObject(o, "note", dev->note);
    return o;
}

cJSON *cli_json_tiling(const mla_tiling *t)
{
    cJSON *o = cJSON_CreateObject();
    mla_tiling copy = *t;
    for (int i = 0; i < MLA_TILING_NUM_FIELDS; i++)
        cJSON_AddNumberToObject(o, mla_tiling_field_names[i], *mla_tiling_field(&copy, i));
    return o;
}

cJSON *cli_json_check(const mla_check_report *rep)
{
    if (!rep) return cJSON_CreateNull();
    cJSON *o = cJSON_CreateObject();
    cJSON_AddBoolToObject(o, "pass", rep->pass != 0);
    cJSON_AddNumberToObject(o, "rel_l2", rep->rel_l2);
    cJSON_AddNumberToObject(o, "max_err", rep->max_abs_err);
    cJSON_AddNumberToObject(o, "max_ref", rep->max_abs_ref);
    cJSON_AddNumberToObject(o, "lse_err", rep->max_lse_err);
    cJSON_AddNumberToObject(o, "nan_count", (double)rep->nan_count);
    cJSON_AddNumberToObject(o, "lse_inf_mismatch", (double)rep->lse_inf_mismatch);
    cJSON *w = cJSON_AddObjectToObject(o, "worst");
    cJSON_AddNumberToObject(w, "b", rep->worst_b);
    cJSON_AddNumberToObject(w, "s", rep->worst_s);
    cJSON_AddNumberToObject(w, "h", rep->worst_h);
    cJSON_AddNumberToObject(w, "i", rep->worst_i);
    cJSON_AddStringToObject(o, "message", rep->message);
    return o;
}

cJSON *cli_json_argv(int argc, char **argv)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < argc; i++) cJSON_AddItemToArray(a, cJSON_CreateString(argv[i]));
    return a;
}

void cli_json_print(const cJSON *obj)
{
    char *s = cJSON_Print(obj);
    if (s) {
        fputs(s, stdout);
        fputc('\n', stdout);
        fflush(stdout);
        cJSON_free(s);
    }
}

void cli_roofline_compute(const mla_problem *pb, double us, double peak_tflops, double peak_gbs,
                          cli_roofline *r)
{
    r->flops = r->bytes = 0;
    mla_problem_cost(pb, &r->flops, &r->bytes);
    r->tflops = us > 0 ? r->flops / (us * 1e-6) / 1e12 : 0;
    r->gbs = us > 0 ? r->bytes / (us * 1e-6) / 1e9 : 0;
    r->peak_tflops = peak_tflops;
    r->peak_gbs = peak_gbs;
    double tc = peak_tflops > 0 ? r->flops / (peak_tflops * 1e12) * 1e6 : 0;
    double bw = peak_gbs > 0 ? r->bytes / (peak_gbs * 1e9) * 1e6 : 0;
    r->floor_us = tc > bw ? tc : bw;
    r->memory_bound = bw >= tc;
    r->pct_of_floor = us > 0 ? r->floor_us / us * 100.0 : 0;
}
