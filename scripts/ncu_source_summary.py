#!/usr/bin/env python3
"""Summarise Nsight Compute's source page (scripts/device_ncu.sh ... source): where the warps of
one kernel launch were sampled, by stall reason and by SASS instruction.

Usage: ncu_source_summary.py ncu_src_<version>.csv [top N] [--regions]
Prints the totals by stall reason, the N instructions with the most samples (offset, SASS, the
two largest reasons), and the samples by opcode. Offsets are from the kernel's first instruction.
--regions also cuts the code at every named-barrier sync/arrive, wgmma wait and first mbarrier
wait of a group, and prints each region's share of the samples with its three main reasons: in a
warp-specialised kernel the regions are the roles' steps, so their shares are where each role's
time goes.
Samples that no stall_* column of the page accounts for are counted as "unnamed": on Hopper the
source page has no column for the `gmma` reason (a warp waiting at WARPGROUP.ARRIVE / an HGMMA
for the other warps of its warpgroup; the launch-level metric
smsp__average_warps_issue_stalled_gmma has it), so on wgmma kernels "unnamed" is mostly that
(flash_mla_v47 at b=32,s=16: ~15 % of its samples, on WARPGROUP.ARRIVE and HGMMA lines).
"""
import csv
import sys
from collections import Counter, defaultdict


def load(path):
    rows = []
    with open(path, newline="") as f:
        r = csv.reader(f)
        header = None
        for rec in r:
            if rec and rec[0] == "Address":
                header = rec
                continue
            if header is None or len(rec) != len(header):
                continue
            rows.append(dict(zip(header, rec)))
    return rows


def num(x):
    try:
        return float(x.replace(",", ""))
    except ValueError:
        return 0.0


UNNAMED = "stall_unnamed"


def unnamed(r, reasons):
    """An instruction's samples that none of the page's stall_* columns accounts for."""
    return max(0.0, num(r["Warp Stall Sampling (All Samples)"]) - sum(num(r[k]) for k in reasons))


def main():
    path = sys.argv[1]
    top = int(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[2].isdigit() else 40
    rows = load(path)
    if not rows:
        print("no instruction rows in", path)
        return 1
    base = int(rows[0]["Address"], 16)
    reasons = [k for k in rows[0] if k.startswith("stall_") and "(Not Issued)" not in k]
    total = sum(num(r["Warp Stall Sampling (All Samples)"]) for r in rows)
    print(f"{len(rows)} instructions, {total:.0f} samples")
    tot = Counter()
    for r in rows:
        for k in reasons:
            tot[k] += num(r[k])
        tot[UNNAMED] += unnamed(r, reasons)
    print("by reason: " + ", ".join(f"{k[6:]} {100 * v / total:.1f}%" for k, v in tot.most_common() if v))
    byop = defaultdict(float)
    for r in rows:
        op = r["Source"].split()[0] if r["Source"].split() else "?"
        if op.startswith("@"):
            op = r["Source"].split()[1]
        byop[op.split(".")[0]] += num(r["Warp Stall Sampling (All Samples)"])
    print("by opcode: " + ", ".join(f"{k} {100 * v / total:.1f}%" for k, v in sorted(byop.items(), key=lambda x: -x[1])[:16]))
    print(f"top {top} instructions (offset, % of samples, SASS, main reasons):")
    for r in sorted(rows, key=lambda r: -num(r["Warp Stall Sampling (All Samples)"]))[:top]:
        s = num(r["Warp Stall Sampling (All Samples)"])
        rs = sorted([(num(r[k]), k[6:]) for k in reasons] + [(unnamed(r, reasons), UNNAMED[6:])], reverse=True)[:2]
        print(f"  {int(r['Address'], 16) - base:#07x} {100 * s / total:5.2f}%  {r['Source'].strip()[:60]:60s} "
              + ", ".join(f"{n} {100 * v / s:.0f}%" for v, n in rs if v))
    if "--regions" in sys.argv:
        print("regions (start offset, end offset, % of samples, instructions, first SASS, main reasons):")
        cur, acc, n, rs = None, 0.0, 0, Counter()

        def flush(end):
            if n and acc > 0.0005 * total:
                top3 = ", ".join(f"{k[6:]} {100 * v / acc:.0f}%" for k, v in rs.most_common(3) if v)
                print(f"  {cur[0]:#07x}-{end:#07x} {100 * acc / total:6.2f}%  n={n:4d}  {cur[1][:50]:50s} | {top3}")

        for r in rows:
            off = int(r["Address"], 16) - base
            src = r["Source"].strip()
            first_wait = "TRYWAIT" in src and "+0x" not in src.split("[")[-1]
            if cur is None or "BAR.SYNC" in src or "BAR.ARV" in src or "DEPBAR" in src or first_wait:
                if cur is not None:
                    flush(off)
                cur, acc, n, rs = (off, src), 0.0, 0, Counter()
            acc += num(r["Warp Stall Sampling (All Samples)"])
            n += 1
            for k in reasons:
                rs[k] += num(r[k])
            rs[UNNAMED] += unnamed(r, reasons)
        flush(int(rows[-1]["Address"], 16) - base + 16)  # one past the last 16-byte instruction
    return 0


if __name__ == "__main__":
    sys.exit(main())
