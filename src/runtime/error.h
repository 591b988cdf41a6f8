/* Thread-local error message of the library (mla_last_error). Never prints. */
#ifndef MLA_ERROR_H
#define MLA_ERROR_H
#include "mla_var3.h"
#ifdef __cplusplus
extern "C" {
#endif
/* Record a printf-style message for this thread and return `status` (for `return mla_fail(...)`). */
mla_status mla_fail(mla_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void mla_clear_error(void);
#ifdef __cplusplus
}
#endif
#endif
