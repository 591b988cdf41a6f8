/*
 * Internal interface of the mla_var3 command: the sub-commands, output routing (human text on
 * stdout, or on stderr when --json owns stdout), run folders and JSON builders.
 * The CLI is the only part of mla_var3 that prints.
 */
#ifndef MLA_CLI_H
#define MLA_CLI_H
#include <stdio.h>
#include <stddef.h>
#include <cjson/cJSON.h>
#include "mla_var3.h"
#include "registry.h"
#include "device.h"
#include "ref.h"
#include "args.h"

/* Exit codes (the same for every command; --help prints them). */
enum {
    CLI_EXIT_OK = 0,
    CLI_EXIT_FAIL = 1,       /* --check failed, or a run failed */
    CLI_EXIT_USAGE = 2,      /* bad command line or input file */
    CLI_EXIT_DEVICE = 3,     /* needs a GPU / version skipped by the architecture gate */
    CLI_EXIT_PROFILER = 4    /* ncu / nsys not found */
};

/* Human output: stdout, or stderr when --json owns stdout. */
extern int cli_json_mode;
void cli_info(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* Commands: argv[0] is the command word (or the design name). They return the exit code. */
int cli_cmd_design(int argc, char **argv);
int cli_cmd_list(int argc, char **argv);
int cli_cmd_devices(int argc, char **argv);
int cli_cmd_bench(int argc, char **argv);
int cli_cmd_gate(int argc, char **argv);
int cli_cmd_clone(int argc, char **argv);

/* Help texts (main.c). */
void cli_help_main(FILE *f);
void cli_help_design(FILE *f);
void cli_help_list(FILE *f);
void cli_help_devices(FILE *f);
void cli_help_bench(FILE *f);
void cli_help_gate(FILE *f);
void cli_help_clone(FILE *f);

/* JSON builders (json_out.c). */
cJSON *cli_json_problem(const mla_problem *pb);
cJSON *cli_json_device(const mla_device_info *dev);     /* NULL dev -> JSON null */
cJSON *cli_json_tiling(const mla_tiling *t);
cJSON *cli_json_check(const mla_check_report *rep);     /* NULL -> JSON null */
cJSON *cli_json_argv(int argc, char **argv);
/* Print `obj` on stdout (one object, then a newline). */
void cli_json_print(const cJSON *obj);

/* Files and run folders (runfolder.c). */
int cli_mkdir_p(const char *path);                              /* 0 ok, -1 errno */
int cli_write_text(const char *dir, const char *rel, const char *text);   /* parents made */
int cli_write_json(const char *dir, const char *rel, const cJSON *obj);
int cli_copy_file(const char *src, const char *dir, const char *rel);
char *cli_read_file(const char *path, size_t *len);             /* malloc'd, NUL-ended */
/* <root>/profiles/<mode>/<version>/<problem key>/<timestamp>/ made fresh (a suffix if taken);
 * $MLA_VAR3_RUN_DIR overrides it (the profiler's child writes into its parent's folder). */
int cli_run_dir_create(const char *root, const char *mode, const char *version,
                       const mla_problem *pb, char *dir, size_t len);
/* Find an executable: $PATH, then the extra directories (glob patterns allowed). */
int cli_find_tool(const char *name, const char *const *extra, char *buf, size_t len);
/* Spawn argv (argv[0] a path), stdout (and stderr if merge is 1; merge 2 drops stderr) to
 * `out_path` (NULL: inherit);
 * `env_extra` "K=V" strings added to the environment (NULL-terminated or NULL). Returns the
 * exit status, or -1 if it could not run. */
int cli_spawn(char *const argv[], const char *out_path, int merge_stderr, char *const env_extra[]);
/* The path of this executable (readlink /proc/self/exe). */
int cli_self_exe(char *buf, size_t len);

/* GPU helpers (gpu_util.c): thin cudart wrappers so the rest of the CLI needs no CUDA header. */
int cli_gpu_alloc(void **p, size_t bytes, char *why, size_t why_len);
void cli_gpu_free(void *p);
int cli_gpu_set_device(int dev);
/* The symbol of a __global__ function (cudaFuncGetName, CUDA 12.3+): 0 ok, -1 unknown. */
int cli_gpu_func_name(const void *func, char *buf, size_t len);

/* Calls a timed graph holds (mla_time_pipeline's min_calls): MLA_VAR3_TIME_CALLS (1..64) if set,
 * else MLA_TIME_CALLS. Fewer calls make a shorter burst: the card then spends less of the
 * measurement at its power cap (flash_mla devlog, eighteenth session). */
int cli_time_calls(void);
/* MLA_VAR3_TIME_MODE=flush: totals are timed by mla_time_flushed (triton.testing.do_bench's
 * method: eager calls, each after a 256 MB L2 flush, 25 ms warm-up and ~100 ms timed) instead of
 * by graph replay. */
struct mla_dev_inputs;
int cli_time_flush(void);
#define CLI_SERIES_ENDS 10
/* A pipeline's total time in the mode above (warm, reps, calls: the graph mode's counts); `how`
 * gets a phrase saying how it was timed; first10 / last10 (may be NULL) the median of the first and
 * of the last CLI_SERIES_ENDS timed runs in launch order (mla_series_ends: on the H200 the start of
 * a run from an idle card is uncapped, its end power-capped). MLA_VAR3_TIME_SERIES=1 also prints
 * every run's time. */
mla_status cli_time_total(const mla_kernel_version *kv, const mla_tiling *t, const mla_device_info *dev,
                          const struct mla_dev_inputs *in, void *ws, int warm, int reps, int calls, double *med,
                          double *mn, char *how, size_t how_len, double *first10, double *last10);

/* Roofline figures of one timing (shared by design runs and bench-all). */
typedef struct cli_roofline {
    double flops, bytes;
    double tflops, gbs;             /* achieved */
    double peak_tflops, peak_gbs;   /* the peaks used for `floor_us` */
    const char *peak_source;        /* "measured" or "datasheet" */
    double floor_us, pct_of_floor;
    int memory_bound;               /* bytes term >= FLOPs term */
} cli_roofline;
void cli_roofline_compute(const mla_problem *pb, double us, double peak_tflops, double peak_gbs,
                          cli_roofline *r);

#endif
