#!/usr/bin/env python3
"""Merge the passes of several `mla_var3 bench-all` outputs (bench.txt, as scripts/device_run.sh
saves them) into one devlog table: per version and problem, the median of every pass in every
file, its range, and TFLOP/s, GB/s and % of the roofline floor at that median, with FlashMLA's
figure where the bench printed one.

Usage: bench_merge.py BENCH.txt [BENCH.txt ...] [--versions=a,b] [--peaks=TFLOPS,GBS] [--ends]

A devlog row should be the median over several passes from different calls, since one pass of
one build moves by up to 10 % on the H200. This script does that for you; each session used to
do it by hand. Each pass line of bench-all gives us, TFLOP/s and GB/s, so a problem's FLOPs and
bytes come from the printed rates (FLOPs = TFLOP/s x us, to the printed precision). No formula
is repeated here. The floor uses --peaks, or else the first file's "Roofline floor at measured
peaks" line. --ends adds two columns: the median over the passes of each pass's first-10 and
last-10 medians, where the log lines carry them ("(first 10 runs X, last 10 Y)", from the
twenty-sixth session on; "-" where none did). On the H200 a run started on an idle card is
uncapped at its start and power-capped at its end, so the two columns are the two regimes.
"""
import re
import statistics
import sys

PASS = re.compile(r"^\s+(\S+)\s+b=(\d+)\s+h=(\d+)\s+t=(\d+)\s+s=(\d+)\s+n=(\d+)\s+([\d.]+) us\s+([\d.]+) TFLOP/s\s+(\d+) GB/s")
ENDS = re.compile(r"\(first \d+ runs ([\d.]+), last \d+ ([\d.]+)\)")
PEAKS = re.compile(r"Roofline floor at measured peaks: ([\d.]+) TFLOP/s, ([\d.]+) GB/s")


def table_row(line):
    """A row of bench-all's markdown table: design, version, (b, h, t, s, n), FlashMLA us or None."""
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    if len(cells) < 14 or not cells[2].isdigit():
        return None
    key = tuple(int(c) for c in cells[2:7])
    anchor = float(cells[12]) if re.fullmatch(r"[\d.]+", cells[12]) else None
    return cells[0], cells[1], key, anchor


def end_cells(pairs):
    """The --ends columns: the medians over the passes of the first-10 and last-10 medians."""
    if not pairs:
        return " - | - |"
    return f" {statistics.median(p[0] for p in pairs):.1f} | {statistics.median(p[1] for p in pairs):.1f} |"


def main(argv):
    files = [a for a in argv if not a.startswith("--")]
    ends_cols = "--ends" in argv
    argv = [a for a in argv if a != "--ends"]
    opts = dict(a[2:].split("=", 1) for a in argv if a.startswith("--") and "=" in a)
    if not files:
        print("usage: bench_merge.py BENCH.txt [...] [--versions=a,b] [--peaks=TFLOPS,GBS] [--ends]", file=sys.stderr)
        return 2
    bad = [a for a in argv if a.startswith("--") and ("=" not in a or a[2:].split("=", 1)[0] not in ("versions", "peaks"))]
    if bad:
        print(f"bench_merge: unknown option {bad[0]} (--versions=a,b, --peaks=TFLOPS,GBS, --ends)", file=sys.stderr)
        return 2
    only = set(opts["versions"].split(",")) if "versions" in opts else None
    peaks = None
    if "peaks" in opts:
        tf, gb = opts["peaks"].split(",")
        peaks = (float(tf), float(gb))
    passes, rates, design, anchor, ends = {}, {}, {}, {}, {}
    for path in files:
        try:
            text = open(path).read().splitlines()
        except OSError as e:
            print(f"bench_merge: {e}", file=sys.stderr)
            return 1
        for line in text:
            m = PASS.match(line)
            if m:
                v, key = m.group(1), tuple(int(x) for x in m.group(2, 3, 4, 5, 6))
                us, tf, gb = float(m.group(7)), float(m.group(8)), float(m.group(9))
                passes.setdefault((v, key), []).append(us)
                e = ENDS.search(line)
                if e:
                    ends.setdefault((v, key), []).append((float(e.group(1)), float(e.group(2))))
                rates.setdefault((v, key), (tf * us * 1e6, gb * us * 1e3))  # FLOPs, bytes
                continue
            m = PEAKS.search(line)
            if m and peaks is None:
                peaks = (float(m.group(1)), float(m.group(2)))
                continue
            if line.startswith("|"):
                r = table_row(line)
                if r:
                    design[r[1]] = r[0]
                    if r[3] is not None:
                        anchor[r[2]] = r[3]
    if not passes:
        print("bench_merge: no bench-all pass lines found", file=sys.stderr)
        return 1
    if peaks is None:
        print("bench_merge: no measured peaks in the files: give --peaks=TFLOPS,GBS", file=sys.stderr)
        return 1
    print(f"Median over {len(files)} file(s); floor at {peaks[0]:g} TFLOP/s, {peaks[1]:g} GB/s.")
    print()
    extra = " first 10 us | last 10 us |" if ends_cols else ""
    print("| design | version | b | h | t | s | n | us (median) | passes | range | TFLOP/s | GB/s | % floor "
          "| FlashMLA us | FlashMLA / ours |" + extra)
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|" + ("---|---|" if ends_cols else ""))
    for (v, key) in sorted(passes, key=lambda k: (k[0], k[1][1] != 128, k[1])):
        if only and v not in only:
            continue
        ps = passes[(v, key)]
        med = statistics.median(ps)
        flops, nbytes = rates[(v, key)]
        floor = max(flops / (peaks[0] * 1e12), nbytes / (peaks[1] * 1e9)) * 1e6
        an = anchor.get(key) if design.get(v) == "flash_mla" else None
        b, h, t, s, n = key
        print(f"| {design.get(v, '?')} | {v} | {b} | {h} | {t} | {s} | {n} | {med:.1f} | {len(ps)} "
              f"| {min(ps):.1f}-{max(ps):.1f} | {flops / med / 1e6:.1f} | {nbytes / med / 1e3:.0f} "
              f"| {100 * floor / med:.1f} | {an if an else '-'} | {f'{an / med:.2f}' if an else '-'} |"
              + (end_cells(ends.get((v, key))) if ends_cols else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
