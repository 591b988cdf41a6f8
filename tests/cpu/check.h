/* The C tests' check: counts what passed and what failed, and prints each failure with its file,
 * line and condition followed by a printf-style message. One per test program. */
#ifndef MLA_TEST_CHECK_H
#define MLA_TEST_CHECK_H
#include <stdio.h>

static int passed, failed;

#define CHECK(cond, ...)                                                  \
    do {                                                                  \
        if (cond) {                                                       \
            passed++;                                                     \
        } else {                                                          \
            failed++;                                                     \
            printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);        \
            printf(__VA_ARGS__);                                          \
            printf("\n");                                                 \
        }                                                                 \
    } while (0)

#endif
