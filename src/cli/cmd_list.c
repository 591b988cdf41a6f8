/*
 * `mla_var3 list`: every registered kernel version (the registry table), with whether it runs
 * on this device and, if not, why (the architecture gate's reason).
 */
#include <stdio.h>
#include <string.h>
#include "cli.h"

int cli_cmd_list(int argc, char **argv)
{
    int json = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) json = 1;
        else return cli_usage_error("%s: unknown flag (see: mla_var3 list --help)", argv[i]);
    }
    cli_json_mode = json;
    mla_device_info dev;
    int have_gpu = mla_device_count() > 0 && mla_device_query(0, &dev) == MLA_STATUS_OK;
    if (have_gpu) cli_info("device 0: %s (cc %d.%d)\n", dev.name, dev.cc_major, dev.cc_minor);
    else cli_info("no CUDA GPU detected\n");
    cJSON *arr = cJSON_CreateArray();
    int n = mla_registry_count();
    cli_info("%-18s %-4s %-9s %-8s %-28s %-5s %-28s %s\n", "design", "ver", "tier", "target", "stages",
             "cands", "here", "note");
    for (int i = 0; i < n; i++) {
        const mla_kernel_version *kv = mla_registry_get(i);
        if (!kv) continue;
        char stages[128] = "", here[320], why[256] = "", ver[16];
        for (int s = 0; s < kv->num_stages; s++) {
            if (s) strncat(stages, "+", sizeof stages - strlen(stages) - 1);
            strncat(stages, kv->stage_names[s] ? kv->stage_names[s] : "?", sizeof stages - strlen(stages) - 1);
        }
        int runnable = 0;
        if (!have_gpu) {
            snprintf(here, sizeof here, "no GPU (would need %s)", mla_target_name(kv->target));
        } else if (mla_arch_allows(kv->target, dev.cc_major, dev.cc_minor, why, sizeof why)) {
            runnable = 1;
            snprintf(here, sizeof here, "runnable");
        } else {
            snprintf(here, sizeof here, "skipped: %s", why);
        }
        snprintf(ver, sizeof ver, "v%d", kv->version);
        cli_info("%-18s %-4s %-9s %-8s %-28s %-5d %-28s %s%s\n", mla_design_name(kv->design), ver,
                 mla_tier_name(kv->tier), mla_target_name(kv->target), stages, kv->num_candidates, here,
                 kv->not_default ? "[not the default: run by name] " : "", kv->note ? kv->note : "");
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", kv->name);
        cJSON_AddStringToObject(o, "design", mla_design_name(kv->design));
        cJSON_AddNumberToObject(o, "version", kv->version);
        cJSON_AddStringToObject(o, "tier", mla_tier_name(kv->tier));
        cJSON_AddStringToObject(o, "target", mla_target_name(kv->target));
        cJSON *st = cJSON_AddArrayToObject(o, "stages");
        for (int s = 0; s < kv->num_stages; s++)
            cJSON_AddItemToArray(st, cJSON_CreateString(kv->stage_names[s] ? kv->stage_names[s] : "?"));
        cJSON_AddNumberToObject(o, "candidates", kv->num_candidates);
        cJSON_AddStringToObject(o, "note", kv->note ? kv->note : "");
        cJSON_AddBoolToObject(o, "runnable", runnable);
        cJSON_AddBoolToObject(o, "not_default", kv->not_default != 0);
        cJSON_AddStringToObject(o, "status", here);
        cJSON_AddItemToArray(arr, o);
    }
    if (n == 0) cli_info("(no kernel version is linked into this build)\n");
    /* Designs without any version are listed too, so that every design is visible. */
    for (int d = 0; d < 3; d++) {
        int found = 0;
        for (int i = 0; i < n; i++)
            if (mla_registry_get(i) && mla_registry_get(i)->design == (mla_design)d) found = 1;
        if (!found) cli_info("%-18s (no version registered yet)\n", mla_design_name((mla_design)d));
    }
    if (json) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddItemToObject(o, "versions", arr);
        cli_json_print(o);
        cJSON_Delete(o);
    } else {
        cJSON_Delete(arr);
    }
    return 0;
}
