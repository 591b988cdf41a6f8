/*
 * simple.c - the smallest program using libmla_var3 through its public header only.
 * Describes a flash_mla decode problem, validates and costs it, then tries to plan it.
 * With no GPU, planning says so (NO_DEVICE) and the program still exits 0; with a GPU it
 * prints the chosen kernel, tiling and workspace size.
 * Build: cc simple.c $(pkg-config --cflags --libs mla_var3)   (or examples/CMakeLists.txt)
 */
#include <stdio.h>
#include <mla_var3.h>

int main(void)
{
    printf("mla_var3 %s\n", mla_version_string());

    mla_problem pb;
    mla_problem_init(&pb, MLA_DESIGN_FLASH_MLA);
    pb.b = 4;
    pb.s = 2;
    pb.t = 1024;
    if (mla_problem_validate(&pb) != MLA_STATUS_OK) {
        fprintf(stderr, "invalid problem: %s\n", mla_last_error());
        return 1;
    }
    double flops = 0, bytes = 0;
    mla_problem_cost(&pb, &flops, &bytes);
    printf("flash_mla b=%d s=%d t=%d h=%d: %.3f GFLOP, %.3f MB\n", pb.b, pb.s, pb.t, pb.h,
           flops * 1e-9, bytes * 1e-6);

    mla_plan_t plan = NULL;
    mla_status st = mla_flash_mla_plan(&pb, NULL, &plan);
    if (st == MLA_STATUS_NO_DEVICE) {
        printf("no GPU: %s\n", mla_last_error());
        return 0;
    }
    if (st != MLA_STATUS_OK) {
        fprintf(stderr, "plan failed: %s: %s\n", mla_status_name(st), mla_last_error());
        return 1;
    }
    char desc[256];
    size_t ws = 0;
    mla_plan_describe(plan, desc, sizeof desc);
    mla_plan_workspace_size(plan, &ws);
    printf("plan: %s\nworkspace: %zu bytes\n", desc, ws);
    mla_plan_destroy(plan);
    return 0;
}
