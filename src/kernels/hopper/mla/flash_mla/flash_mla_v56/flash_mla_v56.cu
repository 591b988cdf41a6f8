// flash_mla_v56 (hopper, sm_90a only): flash_mla_v47, with its one-split kernels (static grid and
// walk) replaced by flash_mla_v55's FlashMLA-schedule pair (fmpair_cta, 384-thread CTAs, P by
// stmatrix) where s * h > 128, that is where each page feeds more than two row blocks of a
// request. At s * h <= 128 (s = 1 at h = 128, every h = 16 row) and for plans with 2+ splits it
// runs v47's kernels, launched as v47 launches them.
//
// Why (twenty-ninth session, call 2, FlashMLA beside each version, first-10 medians): v55 was
// faster than v47 at s = 2..16 and b=128,t=8192,s=2 (s=2 117.4 against 119.7 us, s=16 821.6
// against 844.3, b=128,t=8192,s=2 822.1 against 854.7) and slower at b=128,t=4096,s=1 (242.5
// against 234.8). At s = 1 a page feeds two row blocks, the pages come from DRAM and the pair
// waits for them; FlashMLA's schedule runs the two softmaxes one after the other, so page A's
// right half and page B's left half are released (and reloaded) a softmax later than in v47's
// pair, whose softmax B runs beside softmax A. Not measured directly: the rule follows the rows.
// Prediction (written before the run): v55's times where s * h > 128, v47's elsewhere.
#include "flash_mla_fmpair.cuh"

namespace {
using namespace mla;
using namespace mla::seesaw;

constexpr long long kOpt = OPT_V6 | OPT_LAZY_MAX | OPT_Q_TMA | OPT_ONE_FINISH | OPT_NOMAX;  // v41's

// flash_mla_v56, _walk, _merge (v47's kernels) and _pair, _pair_walk (v55's pair).
MLA_FMPAIR_V56_KERNELS(flash_mla_v56, kOpt)

MLA_FMPAIR_V56_VERSION(flash_mla_v56);

}  // namespace

MLA_FMH_REGISTER(mla_kv_flash_mla_v56, 56, 0,
                 "hopper: v47, with the FlashMLA-schedule pair (v55's fmpair_cta) for one-split plans where s*h > 128")
