/*
 * conf/devices.json and the device model without a GPU: the table loads with its ten devices,
 * each with positive limits, peaks and a source; known peaks (H200 4800 GB/s, ...); CUDA names
 * match the right entry (H100 PCIe vs SXM, H200 vs H20); broken tables give IO_ERROR with a
 * message, never a crash; the live query says NO_DEVICE when there is no GPU.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "device.h"
#include "error.h"

#include "check.h"

static const char *const expected_keys[] = {"h100_sxm", "h100_pcie", "h200", "h800", "h20",
                                            "a100", "l40s", "rtx4090", "rtx5090", "b200"};
#define NUM_EXPECTED 10

typedef struct seen {
    int count;
    int found[NUM_EXPECTED];
} seen;

static void visit(const mla_device_info *d, const char *source, void *ctx)
{
    seen *s = ctx;
    s->count++;
    for (int i = 0; i < NUM_EXPECTED; i++)
        if (strcmp(d->key, expected_keys[i]) == 0) s->found[i]++;
    CHECK(d->present == 0, "%s: table entries are not live", d->key);
    CHECK(d->name[0] != '\0', "%s: empty name", d->key);
    CHECK(source && strlen(source) > 10, "%s: no source", d->key);
    CHECK(d->cc_major >= 8, "%s: cc %d.%d", d->key, d->cc_major, d->cc_minor);
    CHECK(d->sm_count > 0, "%s: sm_count %d", d->key, d->sm_count);
    CHECK(d->smem_per_block_optin > 0 && d->smem_per_block_optin < d->smem_per_sm,
          "%s: smem opt-in %zu, per SM %zu", d->key, d->smem_per_block_optin, d->smem_per_sm);
    CHECK(d->regs_per_sm > 0 && d->regs_per_block > 0, "%s: regs %d/%d", d->key, d->regs_per_sm, d->regs_per_block);
    CHECK(d->max_threads_per_block > 0 && d->max_threads_per_sm >= d->max_threads_per_block &&
              d->max_blocks_per_sm > 0,
          "%s: thread/block limits", d->key);
    CHECK(d->l2_bytes >= (size_t)1 << 20, "%s: L2 %zu", d->key, d->l2_bytes);
    CHECK(d->peak_bf16_tflops > 0 && d->peak_mem_gbs > 0, "%s: peaks %g TF %g GB/s", d->key,
          d->peak_bf16_tflops, d->peak_mem_gbs);
}

static int near(double a, double b) { return fabs(a - b) <= 1e-6 * fabs(b) + 1e-9; }

/* Which key a driver-reported name and cc resolve to ("" = unknown). */
static void check_match(const char *cuda_name, int major, int minor, int sms, const char *want_key)
{
    mla_device_info d;
    memset(&d, 0, sizeof d);
    snprintf(d.name, sizeof d.name, "%s", cuda_name);
    d.cc_major = major;
    d.cc_minor = minor;
    d.sm_count = sms;
    d.smem_per_block_optin = 12345;   /* a "live" limit: must survive the match */
    mla_status st = mla_device_attach_table(&d);
    CHECK(st == MLA_STATUS_OK, "attach %s: %s", cuda_name, mla_last_error());
    CHECK(strcmp(d.key, want_key) == 0, "\"%s\" cc %d.%d matched \"%s\", want \"%s\"", cuda_name, major, minor,
          d.key, want_key);
    CHECK(d.smem_per_block_optin == 12345, "%s: the live limit was overwritten", cuda_name);
    if (want_key[0]) {
        CHECK(d.peak_mem_gbs > 0 && d.peak_bf16_tflops > 0, "%s: no peaks", cuda_name);
    } else {
        CHECK(d.peak_mem_gbs == 0 && d.peak_bf16_tflops == 0, "%s: unknown GPU got peaks", cuda_name);
        CHECK(strstr(d.note, "unknown GPU") != NULL, "%s: note \"%s\"", cuda_name, d.note);
    }
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        printf("cannot write %s\n", path);
        exit(1);
    }
    fputs(text, f);
    fclose(f);
}

/* A broken table must give IO_ERROR with a message from every entry point that reads it. */
static void check_broken(const char *path, const char *text, const char *what, const char *expect_in_msg)
{
    if (text) write_file(path, text);
    setenv("MLA_VAR3_DEVICES", path, 1);
    CHECK(strcmp(mla_devices_json_path(), path) == 0, "path override: %s", mla_devices_json_path());
    mla_clear_error();
    int n = mla_device_table_foreach(NULL, NULL);
    CHECK(n == -1, "%s: foreach returned %d", what, n);
    CHECK(mla_last_error()[0] != '\0', "%s: foreach left no message", what);
    mla_device_info d;
    mla_clear_error();
    mla_status st = mla_device_from_table("h200", &d);
    CHECK(st == MLA_STATUS_IO_ERROR, "%s: from_table gave %s", what, mla_status_name(st));
    CHECK(strstr(mla_last_error(), path) != NULL, "%s: message does not name the file: %s", what, mla_last_error());
    if (expect_in_msg)
        CHECK(strstr(mla_last_error(), expect_in_msg) != NULL, "%s: message \"%s\" lacks \"%s\"", what,
              mla_last_error(), expect_in_msg);
    printf("  %-22s -> %s: %s\n", what, mla_status_name(st), mla_last_error());
    unsetenv("MLA_VAR3_DEVICES");
    if (text) unlink(path);
}

int main(void)
{
    printf("devices.json: %s\n", mla_devices_json_path());

    seen s;
    memset(&s, 0, sizeof s);
    int n = mla_device_table_foreach(visit, &s);
    CHECK(n == NUM_EXPECTED, "foreach returned %d (%s)", n, mla_last_error());
    CHECK(s.count == n, "callback ran %d times for %d entries", s.count, n);
    for (int i = 0; i < NUM_EXPECTED; i++)
        CHECK(s.found[i] == 1, "key %s found %d times", expected_keys[i], s.found[i]);

    mla_device_info d;
    CHECK(mla_device_from_table("h200", &d) == MLA_STATUS_OK, "h200: %s", mla_last_error());
    CHECK(d.present == 0 && d.cc_major == 9 && d.cc_minor == 0 && d.sm_count == 132, "h200 cc %d.%d sms %d",
          d.cc_major, d.cc_minor, d.sm_count);
    CHECK(near(d.peak_mem_gbs, 4800) && near(d.peak_bf16_tflops, 989.4), "h200 peaks %g GB/s %g TF",
          d.peak_mem_gbs, d.peak_bf16_tflops);
    CHECK(d.smem_per_block_optin == 227 * 1024 && d.smem_per_sm == 228 * 1024, "h200 smem %zu %zu",
          d.smem_per_block_optin, d.smem_per_sm);
    CHECK(d.l2_bytes == (size_t)50 << 20, "h200 L2 %zu", d.l2_bytes);
    CHECK(mla_device_from_table("h100_sxm", &d) == MLA_STATUS_OK && near(d.peak_mem_gbs, 3350), "h100_sxm");
    CHECK(mla_device_from_table("a100", &d) == MLA_STATUS_OK && d.cc_major == 8 && d.cc_minor == 0 &&
              d.sm_count == 108 && d.smem_per_block_optin == 163 * 1024 && near(d.peak_bf16_tflops, 312) &&
              near(d.peak_mem_gbs, 2039),
          "a100");
    CHECK(mla_device_from_table("l40s", &d) == MLA_STATUS_OK && d.cc_major == 8 && d.cc_minor == 9 &&
              d.smem_per_block_optin == 99 * 1024,
          "l40s");
    CHECK(mla_device_from_table("rtx5090", &d) == MLA_STATUS_OK && d.cc_major == 12 && d.sm_count == 170, "rtx5090");
    CHECK(mla_device_from_table("b200", &d) == MLA_STATUS_OK && d.cc_major == 10 && d.cc_minor == 0 &&
              near(d.peak_bf16_tflops, 2250),
          "b200");
    CHECK(mla_device_from_table("h20", &d) == MLA_STATUS_OK && d.sm_count == 78 && near(d.peak_mem_gbs, 4000),
          "h20");
    mla_status st = mla_device_from_table("v100", &d);
    CHECK(st == MLA_STATUS_INVALID_ARGUMENT && strstr(mla_last_error(), "v100"), "unknown key: %s %s",
          mla_status_name(st), mla_last_error());

    /* Driver names -> table entries. */
    check_match("NVIDIA H100 80GB HBM3", 9, 0, 132, "h100_sxm");
    check_match("NVIDIA H100 PCIe", 9, 0, 114, "h100_pcie");
    check_match("NVIDIA H200", 9, 0, 132, "h200");
    check_match("NVIDIA H20", 9, 0, 78, "h20");
    /* The name decides, not the SM count (which only breaks ties between equal matches). */
    check_match("NVIDIA H100 PCIe", 9, 0, 132, "h100_pcie");
    check_match("NVIDIA H200", 9, 0, 78, "h200");
    check_match("NVIDIA H800", 9, 0, 132, "h800");
    check_match("NVIDIA A100-SXM4-80GB", 8, 0, 108, "a100");
    check_match("NVIDIA L40S", 8, 9, 142, "l40s");
    check_match("NVIDIA GeForce RTX 4090", 8, 9, 128, "rtx4090");
    check_match("NVIDIA GeForce RTX 5090", 12, 0, 170, "rtx5090");
    check_match("NVIDIA B200", 10, 0, 148, "b200");
    check_match("Tesla V100-SXM2-16GB", 7, 0, 80, "");
    check_match("NVIDIA H200", 8, 0, 132, "");   /* a name alone is not enough: cc must agree */

    /* Broken tables. */
    char path[256];
    snprintf(path, sizeof path, "/tmp/mla_devreg_test_%d.json", (int)getpid());
    printf("broken tables:\n");
    check_broken(path, "{ \"devices\": [ { \"key\": \"x\", ", "truncated JSON", "not valid JSON");
    check_broken(path, "[1, 2, 3]", "not an object", NULL);
    check_broken(path, "{\"devices\": 3}", "devices not a list", NULL);
    check_broken(path, "{\"devices\": []}", "empty list", NULL);
    check_broken(path,
                 "{\"devices\": [{\"key\": \"h200\", \"name\": \"H200\", \"match\": [\"H200\"], \"cc\": [9, 0],"
                 " \"smem_per_block_optin_kb\": 227, \"smem_per_sm_kb\": 228, \"regs_per_sm\": 65536,"
                 " \"l2_mb\": 50, \"bf16_dense_tflops\": 989, \"mem_gbs\": 4800, \"source\": \"x\"}]}",
                 "missing sm_count", "sm_count");
    check_broken(path,
                 "{\"devices\": [{\"key\": \"h200\", \"name\": \"H200\", \"match\": [\"H200\"], \"cc\": \"9.0\","
                 " \"sm_count\": 132, \"smem_per_block_optin_kb\": 227, \"smem_per_sm_kb\": 228,"
                 " \"regs_per_sm\": 65536, \"l2_mb\": 50, \"bf16_dense_tflops\": 989, \"mem_gbs\": 4800,"
                 " \"source\": \"x\"}]}",
                 "cc not a list", "cc");
    check_broken("/tmp/mla_devreg_no_such_dir/devices.json", NULL, "missing file", "cannot open");

    /* After unsetenv the compiled-in table is back. */
    CHECK(mla_device_table_foreach(NULL, NULL) == NUM_EXPECTED, "table after unsetenv: %s", mla_last_error());

    /* Live query: NO_DEVICE without a GPU; with one, live limits. */
    int count = mla_device_count();
    printf("mla_device_count() = %d\n", count);
    CHECK(count >= 0, "negative device count");
    st = mla_device_query(count, &d);   /* one past the last ordinal never exists */
    CHECK(st == MLA_STATUS_NO_DEVICE && mla_last_error()[0], "query(%d) gave %s", count, mla_status_name(st));
    if (count > 0) {
        st = mla_device_query(0, &d);
        CHECK(st == MLA_STATUS_OK && d.present == 1 && d.sm_count > 0 && d.smem_per_block_optin > 0 &&
                  d.max_threads_per_block > 0,
              "query(0): %s %s", mla_status_name(st), mla_last_error());
        printf("device 0: %s cc %d.%d, %d SMs, key \"%s\", %g TF, %g GB/s, SM clock %d MHz; %s\n", d.name,
               d.cc_major, d.cc_minor, d.sm_count, d.key, d.peak_bf16_tflops, d.peak_mem_gbs, d.sm_clock_mhz,
               d.note);
    } else {
        printf("no GPU: %s\n", mla_last_error());
    }

    if (failed) {
        printf("test_devices_json: %d check(s) failed\n", failed);
        return 1;
    }
    printf("test_devices_json: all checks passed\n");
    return 0;
}
