/*
 * The architecture gate without a GPU: which kernel target may run on which compute capability,
 * on fake devices from devices.json (A100 8.0, L40S 8.9, H200 9.0, B200 10.0, RTX 5090 12.0) and
 * on synthetic cc values, with readable reasons; and the default version per design through the
 * real registry (a design with no linked version is reported as skipped, not passed).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "registry.h"
#include "error.h"

#include "check.h"

static int skipped = 0;

/* Expected verdicts, written out rather than recomputed from the rule under test. */
typedef struct gate_case {
    int major, minor;
    int sm80_plus, sm90a, sm100a;
} gate_case;

static void check_gate(const char *label, int major, int minor, const int expect[3])
{
    static const mla_target targets[3] = {MLA_TARGET_SM80_PLUS, MLA_TARGET_SM90A, MLA_TARGET_SM100A};
    char cc[16];
    snprintf(cc, sizeof cc, "%d.%d", major, minor);
    for (int i = 0; i < 3; i++) {
        char why[256];
        memset(why, 'x', sizeof why);
        why[sizeof why - 1] = '\0';
        int ok = mla_arch_allows(targets[i], major, minor, why, sizeof why);
        CHECK(ok == expect[i], "%s (cc %s): %s gave %d, expected %d (%s)", label, cc, mla_target_name(targets[i]),
              ok, expect[i], why);
        if (!ok) {
            CHECK(why[0] != '\0' && strstr(why, cc) != NULL, "%s: reason \"%s\" does not mention cc %s", label, why,
                  cc);
            CHECK(strstr(why, mla_target_name(targets[i])) != NULL, "%s: reason \"%s\" does not name %s", label,
                  why, mla_target_name(targets[i]));
        } else {
            CHECK(why[0] == '\0', "%s: allowed but reason \"%s\"", label, why);
        }
        /* NULL why must be accepted. */
        CHECK(mla_arch_allows(targets[i], major, minor, NULL, 0) == expect[i], "%s: NULL why", label);
    }
}

static void test_table_devices(void)
{
    static const struct {
        const char *key;
        int major, minor;
        int expect[3];
    } devs[] = {
        {"a100", 8, 0, {1, 0, 0}},  {"l40s", 8, 9, {1, 0, 0}},     {"h200", 9, 0, {1, 1, 0}},
        {"b200", 10, 0, {1, 0, 1}}, {"rtx5090", 12, 0, {1, 0, 0}},
    };
    for (size_t i = 0; i < sizeof devs / sizeof devs[0]; i++) {
        mla_device_info d;
        mla_status st = mla_device_from_table(devs[i].key, &d);
        CHECK(st == MLA_STATUS_OK, "table device %s: %s", devs[i].key, mla_last_error());
        if (st != MLA_STATUS_OK) continue;
        CHECK(d.present == 0, "%s: a table device is not present", devs[i].key);
        CHECK(d.cc_major == devs[i].major && d.cc_minor == devs[i].minor, "%s: cc %d.%d, expected %d.%d",
              devs[i].key, d.cc_major, d.cc_minor, devs[i].major, devs[i].minor);
        check_gate(devs[i].key, d.cc_major, d.cc_minor, devs[i].expect);
    }
}

static void test_synthetic(void)
{
    static const gate_case cases[] = {
        {6, 1, 0, 0, 0},  {7, 0, 0, 0, 0},  {7, 5, 0, 0, 0},  {8, 0, 1, 0, 0},  {8, 6, 1, 0, 0},
        {8, 7, 1, 0, 0},  {8, 9, 1, 0, 0},  {9, 0, 1, 1, 0},  {9, 1, 1, 0, 0},  {10, 0, 1, 0, 1},
        {10, 3, 1, 0, 0}, {11, 0, 1, 0, 0}, {12, 0, 1, 0, 0}, {12, 1, 1, 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int e[3] = {cases[i].sm80_plus, cases[i].sm90a, cases[i].sm100a};
        check_gate("synthetic", cases[i].major, cases[i].minor, e);
    }
    char why[256];
    CHECK(strcmp(mla_target_name(MLA_TARGET_SM80_PLUS), "sm_80+") == 0 &&
              strcmp(mla_target_name(MLA_TARGET_SM90A), "sm_90a") == 0 &&
              strcmp(mla_target_name(MLA_TARGET_SM100A), "sm_100a") == 0,
          "target names");
    CHECK(mla_arch_allows((mla_target)42, 9, 0, why, sizeof why) == 0 && why[0], "unknown target allowed");
}

/* The newest linked version of `design` whose target passes (versions marked not_default only
 * when nothing else passes), computed independently. */
static const mla_kernel_version *expected_default(mla_design design, int major, int minor)
{
    const mla_kernel_version *best = NULL;
    for (int i = 0; i < mla_registry_count(); i++) {
        const mla_kernel_version *kv = mla_registry_get(i);
        if (!kv || kv->design != design) continue;
        int ok = kv->target == MLA_TARGET_SM80_PLUS ? major >= 8
               : kv->target == MLA_TARGET_SM90A    ? (major == 9 && minor == 0)
                                                   : (major == 10 && minor == 0);
        if (!ok) continue;
        if (!best) { best = kv; continue; }
        int better = best->not_default != kv->not_default ? !kv->not_default : kv->version > best->version;
        if (better) best = kv;
    }
    return best;
}

static void test_defaults(void)
{
    static const struct { int major, minor; } ccs[] = {{8, 0}, {8, 9}, {9, 0}, {10, 0}, {12, 0}};
    for (int di = 0; di < 3; di++) {
        mla_design design = (mla_design)di;
        const char *dn = mla_design_name(design);
        int linked = 0;
        for (int i = 0; i < mla_registry_count(); i++)
            if (mla_registry_get(i) && mla_registry_get(i)->design == design) linked++;
        char why[1024]; /* the size the library passes itself (api.c, error.c) */
        if (!linked) {
            printf("SKIP %s: no version linked in the registry yet; default checks not run\n", dn);
            skipped++;
            const mla_kernel_version *kv = mla_registry_default(design, 9, 0, why, sizeof why);
            CHECK(kv == NULL && why[0], "%s: a default with nothing linked", dn);
            continue;
        }
        /* On sm_80 only portable (sm_80+) versions may be chosen. */
        const mla_kernel_version *kv = mla_registry_default(design, 8, 0, why, sizeof why);
        const mla_kernel_version *exp80 = expected_default(design, 8, 0);
        if (exp80) {
            CHECK(kv != NULL && kv->target == MLA_TARGET_SM80_PLUS, "%s on 8.0: got %s (%s)", dn,
                  kv ? kv->name : "NULL", why);
            CHECK(kv == exp80, "%s on 8.0: got %s, expected %s", dn, kv ? kv->name : "NULL", exp80->name);
        } else {
            printf("SKIP %s: no sm_80+ version linked (only arch-specific ones); 8.0 check not run\n", dn);
            skipped++;
            CHECK(kv == NULL && why[0], "%s on 8.0: expected NULL with a reason, got %s", dn, kv ? kv->name : "NULL");
        }
        for (size_t c = 0; c < sizeof ccs / sizeof ccs[0]; c++) {
            const mla_kernel_version *got = mla_registry_default(design, ccs[c].major, ccs[c].minor, why, sizeof why);
            const mla_kernel_version *want = expected_default(design, ccs[c].major, ccs[c].minor);
            CHECK(got == want, "%s on %d.%d: got %s, expected %s (%s)", dn, ccs[c].major, ccs[c].minor,
                  got ? got->name : "NULL", want ? want->name : "NULL", why);
            if (got)
                CHECK(mla_arch_allows(got->target, ccs[c].major, ccs[c].minor, NULL, 0), "%s default fails the gate",
                      got->name);
        }
        /* A pre-Ampere GPU gets no default, and the reason lists each skipped version. */
        kv = mla_registry_default(design, 7, 5, why, sizeof why);
        CHECK(kv == NULL, "%s on 7.5: got %s", dn, kv ? kv->name : "NULL");
        CHECK(strstr(why, "7.5") != NULL, "%s on 7.5: reason \"%s\"", dn, why);
        for (int i = 0; i < mla_registry_count(); i++) {
            const mla_kernel_version *o = mla_registry_get(i);
            if (o && o->design == design && o->name)
                CHECK(strstr(why, o->name) != NULL, "%s on 7.5: reason does not list %s: %s", dn, o->name, why);
        }
        printf("  %s: default on 8.0 %s; on 7.5: %s\n", dn, exp80 ? exp80->name : "(none)", why);
    }
}

int main(void)
{
    test_table_devices();
    test_synthetic();
    test_defaults();
    printf("test_gate: %d passed, %d failed, %d skipped\n", passed, failed, skipped);
    return failed ? 1 : 0;
}
