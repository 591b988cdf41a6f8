/*
 * mla_page_table without a GPU: the block tables the benchmark inputs use. In order: the
 * identity. Random: a permutation of all pages (each index once, in range), the same for the
 * same (seed, copy), different between copies, and not the identity.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mla_var3.h"
#include "autotune.h"

#include "check.h"

static int is_permutation(const int32_t *bt, int64_t n)
{
    char *seen = calloc((size_t)n, 1);
    int ok = seen != NULL;
    for (int64_t i = 0; ok && i < n; i++) {
        if (bt[i] < 0 || bt[i] >= n || seen[bt[i]]) ok = 0;
        else seen[bt[i]] = 1;
    }
    free(seen);
    return ok;
}

int main(void)
{
    const int64_t n = 32 * 64;  /* b=32, t=4096, 64-token pages */
    int32_t *a = malloc((size_t)n * sizeof *a), *b = malloc((size_t)n * sizeof *b);
    if (!a || !b) return 1;

    mla_page_table(a, n, 1234, 0, MLA_PAGES_SEQUENTIAL);
    int identity = 1;
    for (int64_t i = 0; i < n; i++) identity &= a[i] == (int32_t)i;
    CHECK(identity, "sequential pages are not 0, 1, 2, ...");

    mla_page_table(a, n, 1234, 0, MLA_PAGES_RANDOM);
    CHECK(is_permutation(a, n), "random pages are not a permutation of 0..%lld", (long long)(n - 1));
    int moved = 0;
    for (int64_t i = 0; i < n; i++) moved += a[i] != (int32_t)i;
    CHECK(moved > n / 2, "random pages left %lld of %lld in place", (long long)(n - moved), (long long)n);

    mla_page_table(b, n, 1234, 0, MLA_PAGES_RANDOM);
    CHECK(!memcmp(a, b, (size_t)n * sizeof *a), "the same seed and copy gave two tables");
    mla_page_table(b, n, 1234, 1, MLA_PAGES_RANDOM);
    CHECK(is_permutation(b, n) && memcmp(a, b, (size_t)n * sizeof *a), "copies 0 and 1 share a table");
    mla_page_table(b, n, 99, 0, MLA_PAGES_RANDOM);
    CHECK(memcmp(a, b, (size_t)n * sizeof *a), "seeds 1234 and 99 share a table");

    mla_page_table(a, 1, 5, 0, MLA_PAGES_RANDOM);
    CHECK(a[0] == 0, "one page: %d", a[0]);

    free(a);
    free(b);
    printf("test_page_table: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
