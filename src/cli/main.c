/*
 * mla_var3: the command of the mla_var3 workbench. Dispatches to the sub-commands (a design
 * run, list, devices, gate, bench-all, clone) and holds their help texts. `--help` works after
 * every command and wins over any other argument.
 */
#include <stdio.h>
#include <string.h>
#include "cli.h"

static const char exit_codes[] =
    "exit codes: 0 ok, 1 check failed / run failed, 2 bad arguments or input,\n"
    "            3 needs a GPU or the version is skipped on this GPU, 4 profiler not found\n";

void cli_help_main(FILE *f)
{
    fprintf(f,
        "mla_var3 %s: Multi-head Latent Attention kernels: check, time, profile, tune.\n\n"
        "usage:\n"
        "  mla_var3 <design> [vN] [--b= --s= --t= --h= --n= ...] [--check] [--autotune]\n"
        "           [--prof_type=disabled|event|annotation|ncu|nsys] [--tiling=k=v,...] [--json]\n"
        "  mla_var3 list                     every kernel version and whether it runs here\n"
        "  mla_var3 devices [--measure]      the device table and the detected GPU\n"
        "  mla_var3 gate --ncu=F.csv --needs=a,b   portable-or-hopper suitability gate\n"
        "  mla_var3 bench-all [--out=DIR] [--quick] [--autotune] the benchmark grid of MLA_SPEC.md\n"
        "  mla_var3 clone <design_vN> <vM>   start a new kernel version from an old one\n"
        "  mla_var3 --version | --help       (`mla_var3 <command> --help` for each command)\n\n"
        "designs: flash_attention (decompressed), flash_mla (absorbed, paged latent cache),\n"
        "         mla_var6_plus (old tokens latent, newest n decompressed)\n\n%s",
        mla_version_string(), exit_codes);
}

void cli_help_design(FILE *f)
{
    fprintf(f,
        "usage: mla_var3 <design> [vN] [options]\n"
        "  design: flash_attention | flash_mla | mla_var6_plus; version v0 or flash_mla_v0\n"
        "          (default: the newest version that passes the architecture gate here)\n"
        "problem (MLA_SPEC.md; defaults in brackets):\n"
        "  --b=N [32] requests   --s=N [16] query tokens   --t=N [4096] KV tokens (max)\n"
        "  --h=N [128] heads     --d=N [128] nope/value dim  --k=N [512] latent dim\n"
        "  --p=N [64] RoPE dim   --page=N [64] cache page    --causal=0|1 [1]\n"
        "  --n=N   mla_var6_plus only: newest tokens decompressed [t/2]\n"
        "  --scale=X [1/sqrt(d+p)]   --varlen (random per-request lengths)   --seed=N [1234]\n"
        "  --pages=random|sequential [random]  the timed inputs' block tables: a random permutation\n"
        "                 of the pages, or request r's pages consecutive (an arange table)\n"
        "run:\n"
        "  --check        compare with a reference (GPU: naive fp32 kernel; CPU: naive formula)\n"
        "  --autotune     time every tiling candidate now and cache the winner\n"
        "                 (without it a cached winner is used if one exists)\n"
        "  --tiling=block_m=64,splits=8   override tiling fields\n"
        "  --prof_type=disabled  run once (and check if asked)\n"
        "             event      total and per-stage time (CUDA-graph replay, median)\n"
        "             annotation event + roofline: TFLOP/s, GB/s, %% of floor, bottleneck\n"
        "             ncu|nsys   re-run under Nsight Compute / Systems into the run folder\n"
        "  --json         one JSON object on stdout (human text goes to stderr)\n"
        "  --device=N [0] --out=DIR [out]: run folder out/profiles/<mode>/<version>/<params>/<time>/\n"
        "With no GPU the CPU reference runs on the same problem (threaded; --check adds the\n"
        "naive formula and compares).\n%s", exit_codes);
}

void cli_help_list(FILE *f)
{
    fprintf(f, "usage: mla_var3 list [--json]\n"
               "  every registered kernel version: design, version, tier, target, stages,\n"
               "  candidate tilings, note, and whether it runs on this device (or why not).\n%s",
            exit_codes);
}

void cli_help_devices(FILE *f)
{
    fprintf(f, "usage: mla_var3 devices [--measure] [--device=N]\n"
               "  the devices.json table (limits, datasheet peaks and their source) and the\n"
               "  detected GPU; --measure measures copy GB/s and bf16 GEMM TFLOP/s (cached).\n%s",
            exit_codes);
}

void cli_help_bench(FILE *f)
{
    fprintf(f, "usage: mla_var3 bench-all [--out=DIR] [--quick] [--autotune] [--versions=a,b] [--device=N]\n"
               "                          [--order=alternate|registry] [--passes=N] [--pages=random|sequential]\n"
               "                          [--cool=MS] [--dry-run]\n"
               "  times every runnable version on MLA_SPEC.md's benchmark grid (CUDA-graph replay,\n"
               "  warm-up 5, median of 30) and writes DIR/bench.md, DIR/bench.json and\n"
               "  DIR/bench_b32_t4096.svg (default DIR: out). --quick: a few rows only. --autotune: tune each row (cached winners reused).\n"
               "  --versions=flash_mla_v1,flash_mla_v0: only these versions' rows.\n"
               "  --order: a problem's versions run in registry order, reversed on every second problem\n"
               "  (alternate, the default: under a power cap the version measured second on a long row\n"
               "  loses several %%), or always in registry order. --passes=N (1-16, default 1): run the\n"
               "  whole grid N times, every second pass with each problem's versions in the other order;\n"
               "  a row reports the median of its passes and their range (one pass of two identical\n"
               "  kernels differed by up to 14 %% on the H200). --pages: the paged caches' block tables\n"
               "  as a random permutation of the pages (the default: a cache after serving churn) or in\n"
               "  order (request r's pages consecutive, as an arange block table). --cool=MS (0-60000, default\n"
               "  0): idle MS ms before timing each row, so that every row starts from the same card state\n"
               "  (the H200 runs ~40-80 ms of full load uncapped, then under its power cap). Each row's log\n"
               "  line and bench.json (pass_first10_us, pass_last10_us) also give the median of its first\n"
               "  and of its last 10 timed runs. --dry-run: print the rows in the order\n"
               "  they would run and exit (no GPU needed).\n"
               "  FlashMLA's figures (ANCHORS.md) are shown for the flash_mla rows.\n%s",
            exit_codes);
}

void cli_help_gate(FILE *f)
{
    fprintf(f,
        "usage: mla_var3 gate --ncu=FILE.csv --needs=LIST [--kernel=NAME] [--eligible=X] [--json]\n"
        "  The suitability gate of DESIGN.md on an Nsight Compute CSV (ncu --csv --page raw).\n"
        "  --needs: the controls the next optimisation needs, comma separated:\n"
        "    hopper-tier: producer_consumer, barrier_scheduling, tma_pipeline, clusters,\n"
        "                 register_movement, wgmma\n"
        "    portable:    tile_size, split_count, cta_remap, occupancy\n"
        "  Move to hopper only if the profile shows 1 CTA/SM with fewer than X eligible warps\n"
        "  per scheduler (default 1.0) AND a hopper-tier control is needed AND no portable one.\n"
        "  --kernel: the row whose kernel name contains NAME (default: the longest kernel).\n"
        "  Exit 0 with either decision; 2 on bad input.\n");
}

void cli_help_clone(FILE *f)
{
    fprintf(f,
        "usage: mla_var3 clone <design_vN> <vM> [--root=DIR]\n"
        "  copies src/kernels/<tier>/mla/<design>/<design>_vN/ to <design>_vM/ (under DIR,\n"
        "  default: the current directory), renaming files and identifiers, and prints what\n"
        "  to add to src/runtime/registry_table.c. Refuses if the target exists.\n%s",
        exit_codes);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        cli_help_main(stderr);
        return CLI_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    mla_design d;
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        cli_help_main(stdout);
        return 0;
    }
    if (!strcmp(cmd, "--version")) {
        printf("mla_var3 %s\n", mla_version_string());
        return 0;
    }
    struct { const char *name; int (*fn)(int, char **); void (*help)(FILE *); } cmds[] = {
        {"list", cli_cmd_list, cli_help_list},
        {"devices", cli_cmd_devices, cli_help_devices},
        {"gate", cli_cmd_gate, cli_help_gate},
        {"bench-all", cli_cmd_bench, cli_help_bench},
        {"clone", cli_cmd_clone, cli_help_clone},
    };
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        if (strcmp(cmd, cmds[i].name)) continue;
        if (cli_wants_help(argc, argv, 2)) {
            cmds[i].help(stdout);
            return 0;
        }
        return cmds[i].fn(argc - 1, argv + 1);
    }
    if (mla_design_from_name(cmd, &d)) {
        if (cli_wants_help(argc, argv, 2)) {
            cli_help_design(stdout);
            return 0;
        }
        return cli_cmd_design(argc - 1, argv + 1);
    }
    return cli_usage_error("%s: unknown command or design (see mla_var3 --help)", cmd);
}
