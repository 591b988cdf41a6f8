/*
 * Device inputs for timing, CUDA-graph timing, the autotuner and its cache.
 * The runtime, not the kernel, owns candidate choice, timing and caching (DESIGN.md).
 */
#ifndef MLA_AUTOTUNE_H
#define MLA_AUTOTUNE_H
#include <stdint.h>
#include "mla_var3.h"
#include "registry.h"
#include "device.h"
#ifdef __cplusplus
extern "C" {
#endif

#define MLA_MAX_INPUT_COPIES 16

/* How the pages of the paged designs' caches are laid out: a random permutation of all pages
 * (a serving cache after churn: the default, what the benchmarks report), or in order (request
 * r's pages consecutive in memory, as a fresh cache or a benchmark with an arange block table
 * would have them). */
typedef enum mla_page_order { MLA_PAGES_RANDOM = 0, MLA_PAGES_SEQUENTIAL = 1 } mla_page_order;

/* The block table's page indices, [num_pages] (request-major), for input copy `copy`: 0, 1, ...
 * in order, or a Fisher-Yates permutation seeded by (seed, copy). */
void mla_page_table(int32_t *bt, int64_t num_pages, uint64_t seed, int copy, mla_page_order order);

/* Random device inputs of a problem, `copies` independent sets so that a rotation over them
 * exceeds the L2 (copies = 0: enough for 2x L2, at most MLA_MAX_INPUT_COPIES). Outputs are
 * allocated per copy too. Values randn/10-like, never zeros; seqlens = t for every request;
 * block tables by mla_page_table (mla_dev_inputs_create: random). */
typedef struct mla_dev_inputs {
    mla_problem pb;
    int copies;
    void *tensors[MLA_MAX_INPUT_COPIES];   /* each points to the design's mla_*_tensors */
    void *allocs[64];
    int num_allocs;
} mla_dev_inputs;

mla_status mla_dev_inputs_create(const mla_problem *pb, int copies, uint64_t seed,
                                 const mla_device_info *dev, mla_dev_inputs *in);
mla_status mla_dev_inputs_create_paged(const mla_problem *pb, int copies, uint64_t seed, mla_page_order pages,
                                       const mla_device_info *dev, mla_dev_inputs *in);
void mla_dev_inputs_destroy(mla_dev_inputs *in);

/* Time a version's pipeline (stages in stage_mask) by CUDA-graph replay with events: one graph
 * runs the pipeline max(copies, min_calls) times (rounded up to whole rotations over the input
 * copies); warm-up replays, then `reps` timed replays; the median per pipeline call in
 * microseconds. `workspace` must hold the plan's bytes. */
mla_status mla_time_pipeline(const mla_kernel_version *kv, const mla_tiling *t,
                             const mla_device_info *dev, const mla_dev_inputs *in,
                             void *workspace, unsigned stage_mask, int warmup, int reps,
                             int min_calls, double *median_us, double *min_us);
/* The benchmark's and the CLI's calls a replay: a call in a decode step's graph follows other
 * kernels, so a call is timed after another call, not after the graph launch's boundary; with
 * two copies a replay half the calls would be first in their graph (flash_mla_v30's PDL launch
 * overlaps its start with the kernel before it, which a graph boundary does not allow). */
#define MLA_TIME_CALLS 8

/* Time a version's pipeline as triton.testing.do_bench does: eager calls on one input copy, each
 * after a 256 MB memset that evicts the L2 and between its own pair of events; warm_ms of
 * warm-up, then about rep_ms of timed calls (10..2000 of them, sized by a five-call estimate);
 * the median and minimum per call, and how many were timed (reps_out, may be NULL). */
mla_status mla_time_flushed(const mla_kernel_version *kv, const mla_tiling *t,
                            const mla_device_info *dev, const mla_dev_inputs *in,
                            void *workspace, unsigned stage_mask, double warm_ms, double rep_ms,
                            int *reps_out, double *median_us, double *min_us);

/* The _ex forms also hand back each timed run's time per call in launch order (series->us, room
 * for series->cap; series->n set), to see how a run's times move while it runs: on the H200 the
 * replays of one run fell into two groups ~12 % apart at b=32,s=4 (flash_mla devlog, twenty-sixth
 * session). series may be NULL. */
typedef struct mla_time_series {
    double *us;
    int cap;
    int n;
} mla_time_series;
mla_status mla_time_pipeline_ex(const mla_kernel_version *kv, const mla_tiling *t,
                                const mla_device_info *dev, const mla_dev_inputs *in,
                                void *workspace, unsigned stage_mask, int warmup, int reps,
                                int min_calls, double *median_us, double *min_us, mla_time_series *series);
mla_status mla_time_flushed_ex(const mla_kernel_version *kv, const mla_tiling *t,
                               const mla_device_info *dev, const mla_dev_inputs *in,
                               void *workspace, unsigned stage_mask, double warm_ms, double rep_ms,
                               int *reps_out, double *median_us, double *min_us, mla_time_series *series);

/* The median of the first k and of the last k runs of a series (k is cut to n; 1 <= k <=
 * MLA_SERIES_ENDS_MAX): on the H200 a run from an idle card is uncapped at its start and under the
 * power cap at its end, so the two ends are the two regimes. Returns 0 on bad arguments. */
#define MLA_SERIES_ENDS_MAX 64
int mla_series_ends(const double *us, int n, int k, double *first_us, double *last_us);

typedef struct mla_tune_entry {
    mla_tiling tiling;
    int ok;                       /* 1: launched, timed */
    double median_us;
    char error[256];              /* why it was skipped (validation reason or CUDA error text) */
} mla_tune_entry;

typedef struct mla_tune_result {
    char kernel[64];
    char device[128];
    char problem_key[160];
    char date[40];                /* ISO 8601 UTC */
    char library_version[16];
    int num_entries;
    mla_tune_entry entries[MLA_MAX_CANDIDATES];
    int winner;                   /* index into entries, -1 if none ran */
} mla_tune_result;

typedef void (*mla_tune_progress_fn)(int done, int total, double best_us, void *ctx);

/* Try every candidate: validate, launch once (a failure skips it with the CUDA error text),
 * then time it by graph replay. The fastest wins. */
mla_status mla_autotune(const mla_kernel_version *kv, const mla_problem *pb,
                        const mla_device_info *dev, mla_tune_progress_fn progress, void *ctx,
                        mla_tune_result *res);

/* The cache file of (device, kernel, problem): <dir>/<device key or sanitized name>/<kernel>/<problem key>.json */
void mla_tune_cache_path(const char *dir, const mla_device_info *dev, const char *kernel,
                         const mla_problem *pb, char *buf, size_t len);
/* Default dir: $MLA_VAR3_CACHE_DIR, else ".cache/kernel-autotune". */
const char *mla_tune_cache_default_dir(void);
/* Load: OK with *res filled; IO_ERROR if absent; a corrupt or stale file (other library
 * version, kernel, problem) gives IO_ERROR and a warning text in `warn`. */
mla_status mla_tune_cache_load(const char *path, const char *kernel, const mla_problem *pb,
                               mla_tune_result *res, char *warn, size_t warn_len);
mla_status mla_tune_cache_store(const char *path, const mla_tune_result *res);

/* Added by the tune helper (additive): */
/* Store with the problem's shape written as a "problem" object too (pb may be NULL: omitted,
 * which is what mla_tune_cache_store does). Load then also checks that object against pb. */
mla_status mla_tune_cache_store_problem(const char *path, const mla_tune_result *res,
                                        const mla_problem *pb);
/* Fill `count` bf16 elements at device pointer `dst` with hash noise, uniform in
 * [-amplitude, amplitude] (never all zeros), on `stream` (a cudaStream_t; NULL = legacy). */
mla_status mla_dev_fill_random_bf16(void *dst, size_t count, uint64_t seed, float amplitude,
                                    void *stream);
/* Internal helpers shared by the tune cache and the device measurement cache. */
void mla_sanitize_name(const char *in, char *out, size_t len);  /* [a-z0-9_-], "unknown" if empty */
mla_status mla_mkdir_p(const char *dir);                         /* IO_ERROR with errno text */
mla_status mla_write_file_atomic(const char *path, const char *text);  /* temp file + rename */

#ifdef __cplusplus
}
#endif
#endif
