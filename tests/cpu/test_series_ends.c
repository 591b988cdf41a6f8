/*
 * test_series_ends: mla_series_ends (src/runtime/timing.c), the two ends of a timed run's series in
 * launch order. On the H200 a run from an idle card is uncapped for its first ~40-80 ms and
 * power-capped after (flash_mla devlog, twenty-sixth session); bench-all and the CLI report the
 * median of the first and of the last 10 runs from it. No GPU needed.
 */
#include <stdio.h>

#include "autotune.h"
#include "check.h"

int main(void)
{
    /* a step: 12 fast runs, then 13 slow ones, the medians each side of it */
    double s[25];
    for (int i = 0; i < 25; i++) s[i] = i < 12 ? 214.0 + (i % 3) * 0.5 : 237.0 + (i % 4) * 0.25;
    s[3] = 300.0;  /* one outlier at the start does not move a median of 10 */
    double f = 0, l = 0;
    CHECK(mla_series_ends(s, 25, 10, &f, &l) == 1, "a 25-run series");
    CHECK(f == 214.5 && l == 237.375, "first %g (want 214.5), last %g (want 237.375)", f, l);

    /* k larger than n: both ends are the whole series */
    const double t[3] = {3.0, 1.0, 2.0};
    CHECK(mla_series_ends(t, 3, 10, &f, &l) == 1 && f == 2.0 && l == 2.0, "3 runs: first %g, last %g", f, l);
    /* an even k: the mean of the middle two */
    const double u[4] = {4.0, 1.0, 3.0, 2.0};
    CHECK(mla_series_ends(u, 4, 4, &f, &l) == 1 && f == 2.5 && l == 2.5, "4 runs, k 4: first %g, last %g", f, l);
    CHECK(mla_series_ends(u, 4, 2, &f, &l) == 1 && f == 2.5 && l == 2.5, "4 runs, k 2: first %g, last %g", f, l);
    /* one end only */
    f = l = -1;
    CHECK(mla_series_ends(u, 4, 1, NULL, &l) == 1 && l == 2.0 && f == -1, "last only: %g", l);

    /* bad arguments: refused, outputs untouched */
    f = l = -1;
    CHECK(mla_series_ends(NULL, 4, 2, &f, &l) == 0 && f == -1 && l == -1, "no series");
    CHECK(mla_series_ends(u, 0, 2, &f, &l) == 0 && f == -1, "n 0");
    CHECK(mla_series_ends(u, 4, 0, &f, &l) == 0 && f == -1, "k 0");
    CHECK(mla_series_ends(u, 4, MLA_SERIES_ENDS_MAX + 1, &f, &l) == 0 && f == -1, "k over the maximum");

    printf("test_series_ends: %d passed, %d failed\n", passed, failed);
    return failed || !passed ? 1 : 0;
}
