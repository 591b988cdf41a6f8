// Host side of the scheduled seesaw versions (flash_mla_v4, flash_mla_v8): one workspace holds
// the device-side plan and the partial rows,
//   parts[num_parts] | prefix[b + 1] | pprefix[b + 1] | costs[b + 1] | ws_lse[slots][s*h] |
//   ws_o[slots][s*h][512]
// with slots = 2 * num_parts, a bound on the segments of requests that get 2+ splits (each part
// holds at most two such segments: its first and its last).
#pragma once
#include "flash_mla_seesaw.cuh"

namespace mla {
namespace seesaw {

struct SchedLayout {
    int row_blocks, num_parts, slots;
    size_t off_prefix, off_pprefix, off_costs, off_lse, off_o, total;
};

// num_parts = the tiling's splits, or (0) SMs / row blocks: one CTA per SM.
inline SchedLayout sched_layout(const mla_tiling *t, const mla_problem *pb, const mla_device_info *dev)
{
    SchedLayout L;
    L.row_blocks = (pb->s * pb->h + BM - 1) / BM;
    const int sms = dev && dev->sm_count > 0 ? dev->sm_count : 132;
    L.num_parts = t->splits > 0 ? t->splits : (sms / L.row_blocks > 1 ? sms / L.row_blocks : 1);
    L.slots = L.num_parts > 1 ? 2 * L.num_parts : 0;
    const size_t rpr = (size_t)pb->s * pb->h;
    L.off_prefix = align_up((size_t)L.num_parts * sizeof(mla_sched_part), 256);
    L.off_pprefix = L.off_prefix + align_up((size_t)(pb->b + 1) * sizeof(int), 256);
    L.off_costs = L.off_pprefix + align_up((size_t)(pb->b + 1) * sizeof(int), 256);
    L.off_lse = L.off_costs + align_up((size_t)(pb->b + 1) * sizeof(long long), 256);
    L.off_o = L.off_lse + align_up((size_t)L.slots * rpr * sizeof(float), 256);
    L.total = L.off_o + align_up((size_t)L.slots * rpr * DA * sizeof(float), 256);
    return L;
}

// The plan and partial-row views of a workspace laid out by sched_layout.
struct SchedBufs {
    mla_sched_part *parts;
    int *prefix, *pprefix;
    long long *costs;
    Plan plan;
    TileOut to;
};
inline SchedBufs sched_bufs(const SchedLayout &L, void *workspace)
{
    char *ws = (char *)workspace;
    SchedBufs s;
    s.parts = (mla_sched_part *)ws;
    s.prefix = (int *)(ws + L.off_prefix);
    s.pprefix = (int *)(ws + L.off_pprefix);
    s.costs = (long long *)(ws + L.off_costs);
    s.plan.parts = s.parts;
    s.plan.prefix = s.prefix;
    s.plan.pprefix = s.pprefix;
    s.to.partial = 0;  // per segment in the kernel
    s.to.ws_o = (float *)(ws + L.off_o);
    s.to.ws_lse = (float *)(ws + L.off_lse);
    return s;
}

}  // namespace seesaw
}  // namespace mla
