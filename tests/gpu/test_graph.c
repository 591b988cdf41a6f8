/*
 * test_graph: the API is capturable. For each design's default version: plan, upload a generated
 * problem (b = 3, s = 2, t = 300, varlen with a zero-length request, permuted pages; h = 16 and
 * 128; mla_var6_plus n = t/2), capture mla_*_run into a CUDA graph on a non-blocking stream
 * (global capture mode: any synchronising or allocating call inside run breaks the capture),
 * then replay it 3 times, poisoning the outputs with NaN before each replay, and compare every
 * replay with the naive GPU reference (mla_check_compare). Exit 77 with no GPU.
 *
 * Two runs in one graph: the same plan and workspace on two copies of the inputs (own outputs),
 * captured back to back. A version whose kernels are launched with PDL (flash_mla_v30 on) lets
 * the second run's CTAs start while the first still runs; had they touched the workspace or the
 * outputs before griddepcontrol.wait, the first run's output would be wrong. Run for each
 * design's default version, and for every version named in MLA_VAR3_VERSIONS (as test_kernels).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime_api.h>

#include "mla_var3.h"
#include "ref.h"
#include "gpu_check.h"
#include "device.h"
#include "registry.h"

static int passed, failed, skipped;

static mla_status plan_design(const mla_problem *pb, const mla_plan_options *po, mla_plan_t *plan)
{
    switch (pb->design) {
    case MLA_DESIGN_FLASH_ATTENTION: return mla_flash_attention_plan(pb, po, plan);
    case MLA_DESIGN_FLASH_MLA: return mla_flash_mla_plan(pb, po, plan);
    case MLA_DESIGN_MLA_VAR6_PLUS: return mla_var6_plus_plan(pb, po, plan);
    }
    return MLA_STATUS_INVALID_ARGUMENT;
}

#define CK(call, what)                                                                                \
    do {                                                                                              \
        cudaError_t e_ = (call);                                                                      \
        if (e_ != cudaSuccess) {                                                                      \
            printf("FAIL %s: %s: %s\n", name, what, cudaGetErrorString(e_));                          \
            failed++;                                                                                 \
            goto done;                                                                                \
        }                                                                                             \
    } while (0)

/* version NULL: the design's default; tiling NULL: its default plan; runs 1 or 2 (two copies of
 * the inputs, one graph) */
static void run_design(mla_design design, int h, const char *version, const char *tiling, int runs)
{
    char name[160];
    mla_problem pb;
    mla_problem_init(&pb, design);
    pb.b = 3, pb.s = 2, pb.t = 300, pb.h = h, pb.causal = 1;
    pb.n = design == MLA_DESIGN_MLA_VAR6_PLUS ? pb.t / 2 : 0;
    snprintf(name, sizeof name, "%s%s%s b=%d s=%d t=%d h=%d n=%d%s%s%s", mla_design_name(design),
             version ? " " : "", version ? version : "", pb.b, pb.s, pb.t, pb.h, pb.n, tiling ? " " : "",
             tiling ? tiling : "", runs > 1 ? " (two runs a graph)" : "");

    mla_plan_t plan = NULL;
    mla_gen g;
    int have_gen = 0;
    mla_gpu_inputs in, in2;
    memset(&in, 0, sizeof in);
    memset(&in2, 0, sizeof in2);
    void *ws = NULL;
    size_t ws_bytes = 0;
    float *ref_out_d = NULL, *ref_lse_d = NULL;
    float *ref_out = NULL, *ref_lse = NULL, *out = NULL, *lse = NULL;
    cudaStream_t st = NULL;
    cudaGraph_t graph = NULL;
    cudaGraphExec_t exec = NULL;
    char desc[256] = "";

    mla_plan_options po;
    mla_plan_options_init(&po);
    po.version = version;
    po.tiling = tiling;
    mla_status s = plan_design(&pb, version || tiling ? &po : NULL, &plan);
    if (s == MLA_STATUS_UNSUPPORTED || s == MLA_STATUS_ARCH_MISMATCH) {
        printf("SKIP %s: %s: %s\n", name, mla_status_name(s), mla_last_error());
        skipped++;
        goto done;
    }
    if (s != MLA_STATUS_OK) {
        printf("FAIL %s: plan: %s: %s\n", name, mla_status_name(s), mla_last_error());
        failed++;
        goto done;
    }
    mla_plan_describe(plan, desc, sizeof desc);
    if (mla_plan_workspace_size(plan, &ws_bytes) != MLA_STATUS_OK) {
        printf("FAIL %s: workspace size: %s\n", name, mla_last_error());
        failed++;
        goto done;
    }
    mla_gen_options go = {.seed = 777 + (uint64_t)h + (uint64_t)design, .varlen = 1, .zero_length = 1,
                          .permute_pages = 1, .designs = 1u << design};
    if (mla_gen_create(&pb, &go, &g) != MLA_STATUS_OK) {
        printf("FAIL %s: generator: %s\n", name, mla_last_error());
        failed++;
        goto done;
    }
    have_gen = 1;
    if (mla_gpu_inputs_upload(&pb, &g, &in) != MLA_STATUS_OK ||
        (runs > 1 && mla_gpu_inputs_upload(&pb, &g, &in2) != MLA_STATUS_OK)) {
        printf("FAIL %s: upload: %s\n", name, mla_last_error());
        failed++;
        goto done;
    }
    if (ws_bytes) CK(cudaMalloc(&ws, ws_bytes), "workspace");
    CK(cudaMalloc((void **)&ref_out_d, in.out_elems * sizeof(float)), "cudaMalloc");
    CK(cudaMalloc((void **)&ref_lse_d, in.lse_elems * sizeof(float)), "cudaMalloc");
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), "cudaStreamCreate");
    ref_out = malloc(in.out_elems * sizeof(float));
    ref_lse = malloc(in.lse_elems * sizeof(float));
    out = malloc(in.out_elems * sizeof(float));
    lse = malloc(in.lse_elems * sizeof(float));
    if (!ref_out || !ref_lse || !out || !lse) {
        printf("FAIL %s: host memory\n", name);
        failed++;
        goto done;
    }

    /* the reference, once */
    s = mla_gpu_inputs_reference(&in, ref_out_d, ref_lse_d, st);
    if (s != MLA_STATUS_OK) {
        printf("FAIL %s: gpu reference: %s\n", name, mla_last_error());
        failed++;
        goto done;
    }
    CK(cudaStreamSynchronize(st), "gpu reference");
    CK(cudaMemcpy(ref_out, ref_out_d, in.out_elems * sizeof(float), cudaMemcpyDeviceToHost), "download");
    CK(cudaMemcpy(ref_lse, ref_lse_d, in.lse_elems * sizeof(float), cudaMemcpyDeviceToHost), "download");

    /* capture one run (or two, sharing the workspace) */
    CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal), "cudaStreamBeginCapture");
    s = mla_gpu_inputs_run(plan, &in, ws, ws_bytes, st);
    if (s == MLA_STATUS_OK && runs > 1) s = mla_gpu_inputs_run(plan, &in2, ws, ws_bytes, st);
    {
        cudaError_t ee = cudaStreamEndCapture(st, &graph);
        if (s != MLA_STATUS_OK) {
            printf("FAIL %s: run under capture: %s: %s\n", name, mla_status_name(s), mla_last_error());
            failed++;
            goto done;
        }
        if (ee != cudaSuccess) {
            printf("FAIL %s: capture broken by the run: %s\n", name, cudaGetErrorString(ee));
            failed++;
            cudaGetLastError();   /* clear the (non-sticky) capture error */
            goto done;
        }
    }
    {
        size_t nodes = 0;
        CK(cudaGraphGetNodes(graph, NULL, &nodes), "cudaGraphGetNodes");
        if (nodes == 0) {
            printf("FAIL %s: the captured graph is empty (run enqueued nothing on the stream)\n", name);
            failed++;
            goto done;
        }
        printf("     %s: captured %zu graph node(s) [%s]\n", name, nodes, desc);
    }
    CK(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");

    for (int rep = 0; rep < 3; rep++) {
        s = mla_gpu_inputs_poison(&in, st);
        if (s == MLA_STATUS_OK && runs > 1) s = mla_gpu_inputs_poison(&in2, st);
        if (s != MLA_STATUS_OK) {
            printf("FAIL %s: poison: %s\n", name, mla_last_error());
            failed++;
            goto done;
        }
        CK(cudaGraphLaunch(exec, st), "cudaGraphLaunch");
        CK(cudaStreamSynchronize(st), "graph replay");
        for (int k = 0; k < runs; k++) {
            if (mla_gpu_inputs_download(k ? &in2 : &in, out, lse) != MLA_STATUS_OK) {
                printf("FAIL %s: download: %s\n", name, mla_last_error());
                failed++;
                goto done;
            }
            mla_check_report r;
            mla_check_compare(&pb, in.dv, out, lse, ref_out, ref_lse, &r);
            printf("%s %s replay %d run %d: %s\n", r.pass ? "PASS" : "FAIL", name, rep + 1, k + 1, r.message);
            if (r.pass) passed++;
            else failed++;
        }
    }

done:
    fflush(stdout);
    if (exec) cudaGraphExecDestroy(exec);
    if (graph) cudaGraphDestroy(graph);
    if (st) cudaStreamDestroy(st);
    free(ref_out), free(ref_lse), free(out), free(lse);
    if (ref_out_d) cudaFree(ref_out_d);
    if (ref_lse_d) cudaFree(ref_lse_d);
    if (ws) cudaFree(ws);
    mla_gpu_inputs_free(&in);
    mla_gpu_inputs_free(&in2);
    if (have_gen) mla_gen_destroy(&g);
    mla_plan_destroy(plan);
}

int main(void)
{
    if (mla_device_count() == 0) {
        printf("SKIP: no CUDA device\n");
        return 77;
    }
    static const mla_design designs[] = {MLA_DESIGN_FLASH_ATTENTION, MLA_DESIGN_FLASH_MLA, MLA_DESIGN_MLA_VAR6_PLUS};
    static const int hs[] = {16, 128};
    for (int d = 0; d < 3; d++)
        for (int i = 0; i < 2; i++)
            for (int runs = 1; runs <= 2; runs++) run_design(designs[d], hs[i], NULL, NULL, runs);
    const char *only = getenv("MLA_VAR3_VERSIONS");
    for (int v = 0; only && v < mla_registry_count(); v++) {
        const mla_kernel_version *kv = mla_registry_get(v);
        if (!mla_name_in_list(only, kv->name)) continue;
        /* the default plan (many splits and a combine here) and two splits (a merge in the
         * cluster where the version has one, through its workspace) */
        static const char *const tilings[] = {NULL, "splits=2"};
        for (int i = 0; i < 2; i++)
            for (int k = 0; k < 2; k++)
                for (int runs = 1; runs <= 2; runs++) run_design(kv->design, hs[i], kv->name, tilings[k], runs);
    }
    printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
    if (failed) return 1;
    return passed ? 0 : 77;
}
