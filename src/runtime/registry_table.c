/* The one table of kernel versions (design order, then version). Dispatch, `list`, the tests
 * and the CLI all read it through registry.h. */
#include <stddef.h>
#include "registry.h"

/* Strong references: they also make the linker pull each version out of the static archive. */
extern const mla_kernel_version mla_kv_flash_attention_v0;
extern const mla_kernel_version mla_kv_flash_mla_v0;
extern const mla_kernel_version mla_kv_flash_mla_v1;
extern const mla_kernel_version mla_kv_flash_mla_v2;
extern const mla_kernel_version mla_kv_flash_mla_v3;
extern const mla_kernel_version mla_kv_flash_mla_v4;
extern const mla_kernel_version mla_kv_flash_mla_v5;
extern const mla_kernel_version mla_kv_flash_mla_v6;
extern const mla_kernel_version mla_kv_flash_mla_v7;
extern const mla_kernel_version mla_kv_flash_mla_v8;
extern const mla_kernel_version mla_kv_flash_mla_v9;
extern const mla_kernel_version mla_kv_flash_mla_v10;
extern const mla_kernel_version mla_kv_flash_mla_v11;
extern const mla_kernel_version mla_kv_flash_mla_v12;
extern const mla_kernel_version mla_kv_flash_mla_v16;
extern const mla_kernel_version mla_kv_flash_mla_v17;
extern const mla_kernel_version mla_kv_flash_mla_v18;
extern const mla_kernel_version mla_kv_flash_mla_v19;
extern const mla_kernel_version mla_kv_flash_mla_v20;
extern const mla_kernel_version mla_kv_flash_mla_v21;
extern const mla_kernel_version mla_kv_flash_mla_v22;
extern const mla_kernel_version mla_kv_flash_mla_v24;
extern const mla_kernel_version mla_kv_flash_mla_v25;
extern const mla_kernel_version mla_kv_flash_mla_v30;
extern const mla_kernel_version mla_kv_flash_mla_v35;
extern const mla_kernel_version mla_kv_flash_mla_v40;
extern const mla_kernel_version mla_kv_flash_mla_v41;
extern const mla_kernel_version mla_kv_flash_mla_v42;
extern const mla_kernel_version mla_kv_flash_mla_v44;
extern const mla_kernel_version mla_kv_flash_mla_v47;
extern const mla_kernel_version mla_kv_flash_mla_v54;
extern const mla_kernel_version mla_kv_flash_mla_v55;
extern const mla_kernel_version mla_kv_flash_mla_v56;
extern const mla_kernel_version mla_kv_flash_mla_v57;
extern const mla_kernel_version mla_kv_flash_mla_v58;
extern const mla_kernel_version mla_kv_flash_mla_v61;
extern const mla_kernel_version mla_kv_flash_mla_v62;
extern const mla_kernel_version mla_kv_flash_mla_v63;
extern const mla_kernel_version mla_kv_flash_mla_v64;
extern const mla_kernel_version mla_kv_flash_mla_v65;
extern const mla_kernel_version mla_kv_flash_mla_v66;
extern const mla_kernel_version mla_kv_flash_mla_v68;
extern const mla_kernel_version mla_kv_flash_mla_v97;
extern const mla_kernel_version mla_kv_flash_mla_v99;
extern const mla_kernel_version mla_kv_mla_var6_plus_v0;

const mla_kernel_version *const mla_registry_table[] = {
    &mla_kv_flash_attention_v0,
    &mla_kv_flash_mla_v0,
    &mla_kv_flash_mla_v1,
    &mla_kv_flash_mla_v2,
    &mla_kv_flash_mla_v3,
    &mla_kv_flash_mla_v4,
    &mla_kv_flash_mla_v5,
    &mla_kv_flash_mla_v6,
    &mla_kv_flash_mla_v7,
    &mla_kv_flash_mla_v8,
    &mla_kv_flash_mla_v9,
    &mla_kv_flash_mla_v10,
    &mla_kv_flash_mla_v11,
    &mla_kv_flash_mla_v12,
    &mla_kv_flash_mla_v16,
    &mla_kv_flash_mla_v17,
    &mla_kv_flash_mla_v18,
    &mla_kv_flash_mla_v19,
    &mla_kv_flash_mla_v20,
    &mla_kv_flash_mla_v21,
    &mla_kv_flash_mla_v22,
    &mla_kv_flash_mla_v24,
    &mla_kv_flash_mla_v25,
    &mla_kv_flash_mla_v30,
    &mla_kv_flash_mla_v35,
    &mla_kv_flash_mla_v40,
    &mla_kv_flash_mla_v41,
    &mla_kv_flash_mla_v42,
    &mla_kv_flash_mla_v44,
    &mla_kv_flash_mla_v47,
    &mla_kv_flash_mla_v54,
    &mla_kv_flash_mla_v55,
    &mla_kv_flash_mla_v56,
    &mla_kv_flash_mla_v57,
    &mla_kv_flash_mla_v58,
    &mla_kv_flash_mla_v61,
    &mla_kv_flash_mla_v62,
    &mla_kv_flash_mla_v63,
    &mla_kv_flash_mla_v64,
    &mla_kv_flash_mla_v65,
    &mla_kv_flash_mla_v66,
    &mla_kv_flash_mla_v68,
    &mla_kv_flash_mla_v97,
    &mla_kv_flash_mla_v99,
    &mla_kv_mla_var6_plus_v0,
};
const int mla_registry_table_size = (int)(sizeof mla_registry_table / sizeof mla_registry_table[0]);
