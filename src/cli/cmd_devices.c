/*
 * `mla_var3 devices [--measure]`: the devices.json table (limits, datasheet peaks and where
 * they come from), then the detected GPU; --measure times copy bandwidth and a bf16 GEMM.
 */
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "measure.h"

static void print_row(const mla_device_info *d, const char *source, void *ctx)
{
    int *count = ctx;
    (*count)++;
    printf("%-10s %-26.26s %2d.%-2d %4d %8zu %6.0f %8.1f %6.0f  %s\n", d->key, d->name, d->cc_major,
           d->cc_minor, d->sm_count, d->smem_per_block_optin / 1024, (double)d->l2_bytes / (1 << 20),
           d->peak_bf16_tflops, d->peak_mem_gbs, source ? source : "");
}

int cli_cmd_devices(int argc, char **argv)
{
    int measure = 0, ordinal = 0;
    for (int i = 1; i < argc; i++) {
        const char *v;
        int missing = 0;
        if (!strcmp(argv[i], "--measure")) measure = 1;
        else if ((v = cli_flag_value(argv[i], "device", &missing))) {
            int rc = cli_parse_int(argv[i], v, 0, 1024, &ordinal);
            if (rc) return rc;
        } else if (missing) return cli_usage_error("%s: needs a value (--device=N)", argv[i]);
        else return cli_usage_error("%s: unknown flag (see: mla_var3 devices --help)", argv[i]);
    }
    printf("device table: %s\n", mla_devices_json_path());
    printf("%-10s %-26s %-5s %4s %8s %6s %8s %6s  %s\n", "key", "name", "cc", "SMs", "smem KB", "L2 MB",
           "bf16 TF", "GB/s", "source");
    int count = 0;
    if (mla_device_table_foreach(print_row, &count) < 0)
        printf("(device table unreadable: %s)\n", mla_last_error());
    printf("\n");
    if (mla_device_count() == 0) {
        printf("no CUDA GPU detected\n");
        if (measure) {
            fprintf(stderr, "mla_var3: devices --measure needs a GPU\n");
            return CLI_EXIT_DEVICE;
        }
        return 0;
    }
    mla_device_info dev;
    if (mla_device_query(ordinal, &dev) != MLA_STATUS_OK) {
        fprintf(stderr, "mla_var3: --device=%d: %s\n", ordinal, mla_last_error());
        return CLI_EXIT_DEVICE;
    }
    printf("detected device %d: %s, cc %d.%d, %d SMs, smem opt-in %zu KB, L2 %.0f MB, SM clock %d MHz\n",
           dev.ordinal, dev.name, dev.cc_major, dev.cc_minor, dev.sm_count,
           dev.smem_per_block_optin / 1024, (double)dev.l2_bytes / (1 << 20), dev.sm_clock_mhz);
    printf("  table entry: %s; datasheet %.1f bf16 TFLOP/s, %.0f GB/s%s%s\n",
           dev.key[0] ? dev.key : "(none)", dev.peak_bf16_tflops, dev.peak_mem_gbs,
           dev.note[0] ? "; " : "", dev.note);
    if (mla_device_measure_load(&dev) == MLA_STATUS_OK && !measure)
        printf("  measured (cached): %.0f GB/s copy, %.1f TFLOP/s bf16 GEMM\n", dev.measured_gbs,
               dev.measured_tflops);
    if (measure) {
        cli_gpu_set_device(ordinal);
        printf("measuring (device-to-device copy, bf16 GEMM 8192^3)...\n");
        fflush(stdout);
        if (mla_device_measure(&dev, 1) != MLA_STATUS_OK) {
            fprintf(stderr, "mla_var3: measure: %s\n", mla_last_error());
            return CLI_EXIT_FAIL;
        }
        printf("  copy: %8.0f GB/s measured vs %6.0f GB/s datasheet (%.0f %%)\n", dev.measured_gbs,
               dev.peak_mem_gbs, dev.peak_mem_gbs > 0 ? dev.measured_gbs / dev.peak_mem_gbs * 100 : 0.0);
        if (dev.measured_tflops > 0)
            printf("  bf16: %8.1f TFLOP/s measured vs %6.1f TFLOP/s datasheet (%.0f %%)\n",
                   dev.measured_tflops, dev.peak_bf16_tflops,
                   dev.peak_bf16_tflops > 0 ? dev.measured_tflops / dev.peak_bf16_tflops * 100 : 0.0);
        else
            printf("  bf16: not measured (%s)\n", dev.note[0] ? dev.note : "cuBLAS not available");
    }
    return 0;
}
