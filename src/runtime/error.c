/* Thread-local last-error message and status names. */
#include <stdarg.h>
#include <stdio.h>
#include "error.h"

static _Thread_local char mla_error_buf[1024];

mla_status mla_fail(mla_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(mla_error_buf, sizeof mla_error_buf, fmt, ap);
    va_end(ap);
    return status;
}

void mla_clear_error(void) { mla_error_buf[0] = '\0'; }

const char *mla_last_error(void) { return mla_error_buf; }

const char *mla_status_name(mla_status s)
{
    switch (s) {
    case MLA_STATUS_OK: return "MLA_STATUS_OK";
    case MLA_STATUS_INVALID_ARGUMENT: return "MLA_STATUS_INVALID_ARGUMENT";
    case MLA_STATUS_UNSUPPORTED: return "MLA_STATUS_UNSUPPORTED";
    case MLA_STATUS_NO_DEVICE: return "MLA_STATUS_NO_DEVICE";
    case MLA_STATUS_ARCH_MISMATCH: return "MLA_STATUS_ARCH_MISMATCH";
    case MLA_STATUS_CUDA_ERROR: return "MLA_STATUS_CUDA_ERROR";
    case MLA_STATUS_OUT_OF_MEMORY: return "MLA_STATUS_OUT_OF_MEMORY";
    case MLA_STATUS_WORKSPACE_TOO_SMALL: return "MLA_STATUS_WORKSPACE_TOO_SMALL";
    case MLA_STATUS_IO_ERROR: return "MLA_STATUS_IO_ERROR";
    case MLA_STATUS_INTERNAL: return "MLA_STATUS_INTERNAL";
    }
    return "MLA_STATUS_UNKNOWN";
}

#ifndef MLA_VERSION_STRING
#define MLA_VERSION_STRING "0.1.0"
#endif
const char *mla_version_string(void) { return MLA_VERSION_STRING; }

void mla_version(int *major, int *minor, int *patch)
{
    if (major) *major = MLA_VAR3_VERSION_MAJOR;
    if (minor) *minor = MLA_VAR3_VERSION_MINOR;
    if (patch) *patch = MLA_VAR3_VERSION_PATCH;
}
