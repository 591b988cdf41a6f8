#!/usr/bin/env python3
"""flashmla_same_call.py - FlashMLA's SM90 dense decode and mla_var3's flash_mla, timed in one
process on the same inputs by the same protocol, row by row (runs THERE, on the GPU machine).

Why: ANCHORS.md's FlashMLA figures were taken on another day, by a protocol not written down,
and a timed run on the H200 has two regimes (the first ~40-80 ms at 1980 MHz, then the 700 W
power cap at ~1770 MHz; flash_mla devlog, twenty-sixth session) that differ by up to 13 %. The
rows still open in issue 5 differ from those figures by 0.5-5 %. Timing both kernels here, in
alternating order with the same idle before each run, gives each row a same-regime comparison.

What runs:
  - mla_var3 through its C ABI (ctypes on libmla_var3.so; plan once, run on torch's stream),
  - FlashMLA's dense bf16 decode (`flash_mla_with_kvcache(..., use_legacy=True)`) from the
    `sgl-flash-mla` wheel (a packaging of upstream FlashMLA; its SM90 kernels are upstream's),
    carried as a wheel (scripts/fetch_flashmla.sh) and installed with pip --target there.
Both get the same q, paged cache (random page permutation), block table and seqlens; scale
1/sqrt(192), causal (bottom-right). Before timing, both outputs are checked against an fp32
reference on the first and last request (MLA_SPEC.md's bar) and against each other.

Timing, both methods as src/runtime/timing.c does them:
  flush: eager calls, each after a 256 MB zero fill that evicts the L2, events around each call,
         25 ms of warm-up, ~100 ms of calls (10..2000) - triton.testing.do_bench's method, which
         FlashMLA's own benchmark uses;
  graph: one CUDA graph of 8 calls, 10 warm-up replays, 50 timed replays, time / 8; the calls
         rotate over 2 or more input sets (copies_for), as timing.c's do, so that no call can find
         the previous call's last pages in the L2.
Each run reports its median, minimum and the medians of its first and last 10 timed runs (the
two power regimes). Before every run the card idles --cool-ms (default 1000), so each run starts
from the same state; the two kernels alternate (ours first on even row+pass, FlashMLA first on
odd).

  python3 scripts/flashmla_same_call.py --lib build/libmla_var3.so [--passes 2]
         [--modes flush,graph] [--cool-ms 1000] [--json FILE] [--version flash_mla_v47] [--tiling splits=2]
  python3 scripts/flashmla_same_call.py --modes prof --only "32,128,4096,2"   (each call's kernels on the
         GPU timeline under torch.profiler: durations, PDL overlaps, the gap after the fill or the
         previous call, in the flush loop and in graph replays; SM clock sampled by NVML meanwhile)
  python3 scripts/flashmla_same_call.py --merge call1.txt call2.txt   (saved outputs, one table; no GPU)
  python3 scripts/flashmla_same_call.py --selftest     (no GPU, no torch: the pure parts)
"""
import argparse
import ctypes
import json
import math
import re
import statistics
import sys
import threading
import time

# ANCHORS.md, "FlashMLA (DeepSeek's SM90 dense decode, bf16, page 64)": (b, h, t, s, us)
ANCHOR_ROWS = [
    (128, 16, 4096, 1, 164.5), (128, 16, 8192, 1, 309.1),
    (128, 128, 4096, 1, 256.6), (128, 128, 8192, 1, 523.8), (128, 128, 8192, 2, 926.1),
    (32, 128, 4096, 1, 76.0), (32, 128, 4096, 2, 115.8), (32, 128, 4096, 4, 226.1),
    (32, 128, 4096, 8, 470.9), (32, 128, 4096, 16, 900.0), (32, 128, 4096, 32, 1808.5),
    (32, 128, 4096, 64, 3679.6), (32, 128, 4096, 128, 7302.5),
    (64, 128, 4096, 1, 124.6), (64, 128, 4096, 16, 1853.9),
]

PAGE = 64
K_LAT, P_ROPE = 512, 64
SCALE = 1.0 / math.sqrt(192.0)
FLUSH_BYTES = 256 << 20
ENDS = 10


# ------------------------------------------------------------------------------------------------
# pure parts (tested by --selftest without torch)
# ------------------------------------------------------------------------------------------------
def series_stats(us):
    """median, min, and the medians of the first and last ENDS runs of a run's times (launch order)."""
    if not us:
        return None
    k = min(ENDS, len(us))
    return {"n": len(us), "median": statistics.median(us), "min": min(us),
            "first10": statistics.median(us[:k]), "last10": statistics.median(us[-k:])}


def impl_order(row_index, pass_index):
    """Which kernel runs first on a row: alternated by row and by pass (A-B, B-A, ...)."""
    return ("ours", "flashmla") if (row_index + pass_index) % 2 == 0 else ("flashmla", "ours")


def flush_reps(per_call_ms, warm_ms=25.0, rep_ms=100.0):
    """Warm-up and timed call counts of the flush method from a flush+call estimate (timing.c)."""
    per = max(per_call_ms, 1e-3)
    warm = int(min(warm_ms / per, 10000))
    reps = int(rep_ms / per)
    return warm, max(10, min(reps, 2000))


def copies_for(cache_bytes, l2_bytes):
    """At least 2 (consecutive calls never share a cache), more while a set is under 2x the L2; <= 8."""
    need = 2
    while need < 8 and (need - 1) * cache_bytes < 2 * l2_bytes:
        need += 1
    return need


def select_rows(rows, only):
    """The rows of a grid named by --only ("b,h,t,s;b,h,t,s"), in the grid's order; all if empty."""
    if not only:
        return list(rows)
    want = {tuple(int(x) for x in w.split(",")) for w in only.split(";") if w.strip()}
    bad = [w for w in want if len(w) != 4]
    if bad:
        raise ValueError(f"--only wants b,h,t,s groups, got {bad}")
    return [r for r in rows if tuple(r[:4]) in want]


def merge_runs(runs):
    """Per (row, impl, mode): the median over passes of each statistic, and the pass range."""
    out = {}
    for r in runs:
        key = (tuple(r["row"]), r["impl"], r["mode"])
        out.setdefault(key, []).append(r["stats"])
    merged = {}
    for key, lst in out.items():
        merged[key] = {f: statistics.median(s[f] for s in lst) for f in ("median", "min", "first10", "last10")}
        merged[key]["passes"] = len(lst)
        merged[key]["lo"] = min(s["median"] for s in lst)
        merged[key]["hi"] = max(s["median"] for s in lst)
    return merged


def table(runs, rows, modes):
    """The comparison table: per row and mode, both kernels' medians and regime ends; ratio > 1:
    FlashMLA slower than mla_var3."""
    m = merge_runs(runs)
    lines = []
    for mode in modes:
        lines.append(f"### {mode} method (us; median over passes of each run's median / first 10 / last 10)")
        lines.append("")
        lines.append("| b | h | t | s | ours median | ours first10 | ours last10 | FlashMLA median | FlashMLA first10 "
                     "| FlashMLA last10 | FlashMLA/ours median | first10 | last10 | ANCHORS FlashMLA "
                     "| passes ours/FlashMLA | ours range | FlashMLA range |")
        lines.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for (b, h, t, s, anchor) in rows:
            o = m.get(((b, h, t, s), "ours", mode))
            f = m.get(((b, h, t, s), "flashmla", mode))

            def v(x, k):
                return f"{x[k]:.1f}" if x else "-"

            def ratio(k):
                return f"{f[k] / o[k]:.3f}" if (o and f and o[k] > 0) else "-"

            def rng(x):
                return f"{x['lo']:.1f}-{x['hi']:.1f}" if x else "-"
            lines.append(f"| {b} | {h} | {t} | {s} | {v(o, 'median')} | {v(o, 'first10')} | {v(o, 'last10')} "
                         f"| {v(f, 'median')} | {v(f, 'first10')} | {v(f, 'last10')} | {ratio('median')} "
                         f"| {ratio('first10')} | {ratio('last10')} | {anchor if anchor else '-'} "
                         f"| {o['passes'] if o else 0}/{f['passes'] if f else 0} | {rng(o)} | {rng(f)} |")
        lines.append("")
    return "\n".join(lines)


def anchor_for(row):
    """ANCHORS.md's FlashMLA figure for (b, h, t, s), or None."""
    for r in ANCHOR_ROWS:
        if tuple(r[:4]) == tuple(row):
            return r[4]
    return None


ROW_LINE = re.compile(r"^row b=(\d+) h=(\d+) t=(\d+) s=(\d+):")
PASS_LINE = re.compile(r"^\s+pass (\d+) (ours|flashmla)\s+(flush|graph)\s+median\s+([\d.]+) first10\s+([\d.]+) "
                       r"last10\s+([\d.]+) min\s+([\d.]+) \(n=(\d+)\)")


def parse_log(text):
    """The runs a saved output of this script printed, in order: (rows in first-seen order, runs)."""
    rows, runs, row = [], [], None
    for line in text.splitlines():
        m = ROW_LINE.match(line)
        if m:
            row = tuple(int(x) for x in m.groups())
            if row not in rows:
                rows.append(row)
            continue
        m = PASS_LINE.match(line)
        if m and row is not None:
            med, f10, l10, mn = (float(x) for x in m.group(4, 5, 6, 7))
            runs.append({"row": list(row), "impl": m.group(2), "mode": m.group(3), "pass": int(m.group(1)),
                         "stats": {"n": int(m.group(8)), "median": med, "min": mn, "first10": f10, "last10": l10}})
    return rows, runs


def merge_files(paths):
    """One table over several saved outputs (several device calls): a row's passes from every file."""
    rows, runs = [], []
    for p in paths:
        with open(p) as f:
            r, u = parse_log(f.read())
        rows += [x for x in r if x not in rows]
        runs += u
    modes = [m for m in ("flush", "graph") if any(x["mode"] == m for x in runs)]
    head = f"Merged {len(paths)} file(s), {len(runs)} runs: the median over all passes of each statistic.\n\n"
    return head + table(runs, [(*r, anchor_for(r)) for r in rows], modes)


def call_timeline(kernels, call_names):
    """Where one library's calls sit on the GPU's timeline (the `prof` mode).

    kernels: (name, start_us, end_us) of every kernel a profiled loop ran (fills included);
    call_names: the kernel names of one call, in order (from a profiled single call). A call is
    len(call_names) consecutive kernels with those names. Per call: the gap from the end of the
    kernel before it (a fill or the previous call; negative: it started before that one ended),
    each kernel's duration, the joins between its kernels (next start - previous end; negative:
    overlapped, as a PDL launch can), and its span (first start to last end). Returns the medians
    over the calls, or None when no call is found."""
    ks = sorted(kernels, key=lambda k: k[1])
    n = len(call_names)
    if n == 0:
        return None
    calls, i, prev = [], 0, None
    while i < len(ks):
        grp = ks[i:i + n]
        if len(grp) == n and [k[0] for k in grp] == list(call_names):
            calls.append({"gap": None if prev is None else grp[0][1] - prev[2],
                          "prev_is_call": prev is not None and prev[0] == call_names[-1],
                          "dur": [k[2] - k[1] for k in grp],
                          "joins": [grp[j + 1][1] - grp[j][2] for j in range(n - 1)],
                          "span": grp[-1][2] - grp[0][1]})
            prev = grp[-1]
            i += n
        else:
            prev = ks[i]
            i += 1
    if not calls:
        return None
    med = statistics.median
    gaps = [c["gap"] for c in calls if c["gap"] is not None]
    return {"calls": len(calls), "span": med(c["span"] for c in calls),
            "dur": [med(c["dur"][j] for c in calls) for j in range(n)],
            "joins": [med(c["joins"][j] for c in calls) for j in range(n - 1)],
            "gap": med(gaps) if gaps else None,
            "gap_after_call": med([c["gap"] for c in calls if c["gap"] is not None and c["prev_is_call"]] or [math.nan])}


def short_kernel_name(name):
    """A kernel's demangled name without its return type, namespaces, template and parameter lists:
    "void a::b::k<T, 3>(int)" -> "k", "(anonymous namespace)::flash_mla_v47(X)" -> "flash_mla_v47"."""
    n = name.replace("(anonymous namespace)::", "")
    n = re.sub(r"^void\s+", "", n)
    n = re.split(r"[<(]", n, maxsplit=1)[0]
    return n.split("::")[-1] or name[:48]


def timeline_line(impl, mode, names, tl):
    """One printed line of a call_timeline result (names shortened)."""
    if tl is None:
        return f"  prof {impl:8s} {mode:5s} no call of {len(names)} kernel(s) found"
    short = [short_kernel_name(nm) for nm in names]
    ks = "; ".join(f"{nm} {d:.1f}" for nm, d in zip(short, tl["dur"]))
    js = ", ".join(f"{j:.1f}" for j in tl["joins"]) or "-"
    gap = "-" if tl["gap"] is None else f"{tl['gap']:.1f}"
    return (f"  prof {impl:8s} {mode:5s} calls {tl['calls']} span {tl['span']:.1f} us; gap before {gap}"
            f" (after own call {tl['gap_after_call']:.1f}); joins {js}; kernels: {ks}")


def selftest():
    fails = passes = 0

    def check(cond, what):
        nonlocal fails, passes
        print(("ok   " if cond else "FAIL ") + what)
        fails += 0 if cond else 1
        passes += 1 if cond else 0
    st = series_stats([5.0] * 3 + [1.0] * 20 + [9.0] * 3)
    check(st["n"] == 26 and st["min"] == 1.0 and st["median"] == 1.0, "series_stats median/min")
    check(st["first10"] == 1.0 and st["last10"] == 1.0, "series_stats ends over 10 runs")
    st = series_stats([1.0, 2.0, 3.0])
    check(st["first10"] == 2.0 and st["last10"] == 2.0, "series_stats ends shorter than 10")
    check(series_stats([]) is None, "series_stats empty")
    check(select_rows(ANCHOR_ROWS, "") == ANCHOR_ROWS, "select_rows: all rows by default")
    check(select_rows(ANCHOR_ROWS, "32,128,4096,16;128,16,8192,1") ==
          [(128, 16, 8192, 1, 309.1), (32, 128, 4096, 16, 900.0)], "select_rows: named rows in grid order")
    check(select_rows(ANCHOR_ROWS, "1,2,3,4") == [], "select_rows: a row not in the grid")
    try:
        select_rows(ANCHOR_ROWS, "32,128,4096")
        check(False, "select_rows: a short group is refused")
    except ValueError:
        check(True, "select_rows: a short group is refused")
    check(impl_order(0, 0) == ("ours", "flashmla") and impl_order(1, 0) == ("flashmla", "ours")
          and impl_order(1, 1) == ("ours", "flashmla"), "impl_order alternates by row and pass")
    check(copies_for(151 << 20, 60 << 20) == 2 and copies_for(40 << 20, 60 << 20) == 4
          and copies_for(1 << 20, 60 << 20) == 8, "copies_for: 2 for large caches, more for small, at most 8")
    check(flush_reps(0.1) == (250, 1000), "flush_reps 100 us")
    check(flush_reps(20.0) == (1, 10), "flush_reps clamps at 10 timed calls")
    check(flush_reps(0.0)[1] == 2000, "flush_reps clamps at 2000 timed calls")
    row = (32, 128, 4096, 1)
    runs = [{"row": row, "impl": "ours", "mode": "flush", "stats": series_stats([64.0, 66.0, 65.0])},
            {"row": row, "impl": "ours", "mode": "flush", "stats": series_stats([70.0])},
            {"row": row, "impl": "flashmla", "mode": "flush", "stats": series_stats([76.0, 78.0])}]
    mg = merge_runs(runs)
    o = mg[(row, "ours", "flush")]
    check(o["passes"] == 2 and o["lo"] == 65.0 and o["hi"] == 70.0 and o["median"] == 67.5, "merge_runs")
    tb = table(runs, [(32, 128, 4096, 1, 76.0)], ["flush"])
    check("| 32 | 128 | 4096 | 1 | 67.5 |" in tb and "| 1.141 |" in tb and "| 76.0 |" in tb, "table row and ratio")
    log1 = ("row b=32 h=128 t=4096 s=1: flash_mla_v47 ...; check ours [True, True]\n"
            "  pass 0 ours     flush median     69.5 first10     69.4 last10     69.6 min     68.0 (n=500) {}\n"
            "  pass 0 flashmla flush median     74.6 first10     74.5 last10     74.7 min     73.0 (n=480) {}\n"
            "  pass 0 ours     graph median     64.0 first10     64.0 last10     64.1 min     63.5 (n=50) {}\n")
    log2 = ("row b=32 h=128 t=4096 s=1: flash_mla_v47\n"
            "  pass 0 flashmla flush median     75.0 first10     74.9 last10     75.1 min     73.5 (n=470) {}\n"
            "  pass 0 ours     flush median     70.5 first10     70.4 last10     70.6 min     69.0 (n=500) {}\n"
            "row b=9 h=16 t=100 s=3: flash_mla_v47\n"
            "  pass 1 ours     flush median     10.0 first10     10.0 last10     10.0 min     9.0 (n=900) HOST-BOUND\n")
    rows, runs = parse_log(log1)
    check(rows == [(32, 128, 4096, 1)] and len(runs) == 3 and runs[1]["impl"] == "flashmla"
          and runs[2]["mode"] == "graph" and runs[0]["stats"]["min"] == 68.0, "parse_log: rows and runs")
    import os
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        paths = []
        for i, text in enumerate((log1, log2)):
            paths.append(os.path.join(d, f"call{i}.txt"))
            with open(paths[-1], "w") as f:
                f.write(text)
        mt = merge_files(paths)
    check("Merged 2 file(s), 6 runs" in mt, "merge_files: header")
    # ours flush 69.5, 70.5 -> 70.0; FlashMLA 74.6, 75.0 -> 74.8; 74.8 / 70.0 = 1.069
    check("| 32 | 128 | 4096 | 1 | 70.0 |" in mt and "| 74.8 |" in mt and "| 1.069 |" in mt
          and "| 2/2 | 69.5-70.5 | 74.6-75.0 |" in mt, "merge_files: passes of both files merged")
    check("| 9 | 16 | 100 | 3 | 10.0 |" in mt and "| 1/0 |" in mt, "merge_files: a row only one file has")
    check("### graph method" in mt and "| 64.0 |" in mt, "merge_files: both methods")
    # call_timeline: fill F, then calls of two kernels A, B (B overlapping A by 2 us, as PDL allows)
    ks = [("F", 0.0, 10.0), ("A", 11.0, 100.0), ("B", 98.0, 103.0),
          ("F", 104.0, 114.0), ("A", 113.0, 200.0), ("B", 199.0, 205.0), ("X", 300.0, 301.0)]
    tl = call_timeline(ks, ["A", "B"])
    check(tl["calls"] == 2 and tl["gap"] == 0.0 and tl["joins"] == [-1.5] and tl["dur"] == [88.0, 5.5]
          and tl["span"] == 92.0, "call_timeline: gaps, joins, durations, spans")
    back = [("A", 0.0, 10.0), ("B", 9.0, 12.0), ("A", 11.0, 20.0), ("B", 20.0, 22.0)]
    tl = call_timeline(back, ["A", "B"])
    check(tl["calls"] == 2 and tl["gap"] == -1.0 and tl["gap_after_call"] == -1.0, "call_timeline: back-to-back calls")
    check(call_timeline([("F", 0.0, 1.0)], ["A"]) is None, "call_timeline: no call")
    check("span 92.0 us" in timeline_line("ours", "flush", ["A(int)", "B"], call_timeline(ks, ["A", "B"])),
          "timeline_line")
    check(short_kernel_name("(anonymous namespace)::flash_mla_v47(CUtensorMap_st, int)") == "flash_mla_v47"
          and short_kernel_name("void sm90::decode::dense::flash_fwd_splitkv_mla_kernel<T<bf16, 576>, P>(Q)")
          == "flash_fwd_splitkv_mla_kernel", "short_kernel_name")
    print(f"{passes} passed, {fails} failed")
    return 1 if fails else 0


# ------------------------------------------------------------------------------------------------
# mla_var3 through its C ABI
# ------------------------------------------------------------------------------------------------
class MlaProblem(ctypes.Structure):
    _fields_ = [("design", ctypes.c_int), ("b", ctypes.c_int), ("s", ctypes.c_int), ("t", ctypes.c_int),
                ("h", ctypes.c_int), ("d", ctypes.c_int), ("k", ctypes.c_int), ("p", ctypes.c_int),
                ("n", ctypes.c_int), ("page_size", ctypes.c_int), ("causal", ctypes.c_int),
                ("scale", ctypes.c_float)]


class MlaFlashMlaTensors(ctypes.Structure):
    _fields_ = [("q", ctypes.c_void_p), ("q_strides", ctypes.c_int64 * 3),
                ("cache", ctypes.c_void_p), ("num_pages", ctypes.c_int),
                ("block_table", ctypes.c_void_p), ("max_pages", ctypes.c_int),
                ("block_table_stride", ctypes.c_int64), ("seqlens", ctypes.c_void_p),
                ("out", ctypes.c_void_p), ("out_strides", ctypes.c_int64 * 3), ("lse", ctypes.c_void_p)]


class MlaPlanOptions(ctypes.Structure):
    _fields_ = [("device", ctypes.c_int), ("version", ctypes.c_char_p), ("tiling", ctypes.c_char_p),
                ("autotune", ctypes.c_int), ("cache_dir", ctypes.c_char_p)]


class Ours:
    def __init__(self, lib_path):
        self.lib = ctypes.CDLL(lib_path)
        L = self.lib
        L.mla_last_error.restype = ctypes.c_char_p
        L.mla_problem_init.argtypes = [ctypes.POINTER(MlaProblem), ctypes.c_int]
        L.mla_plan_options_init.argtypes = [ctypes.POINTER(MlaPlanOptions)]
        L.mla_flash_mla_plan.argtypes = [ctypes.POINTER(MlaProblem), ctypes.POINTER(MlaPlanOptions),
                                         ctypes.POINTER(ctypes.c_void_p)]
        L.mla_plan_workspace_size.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t)]
        L.mla_plan_describe.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
        L.mla_flash_mla_run.argtypes = [ctypes.c_void_p, ctypes.POINTER(MlaFlashMlaTensors), ctypes.c_void_p,
                                        ctypes.c_size_t, ctypes.c_void_p]
        L.mla_plan_destroy.argtypes = [ctypes.c_void_p]

    def _ok(self, st, what):
        if st != 0:
            raise RuntimeError(f"{what}: status {st}: {self.lib.mla_last_error().decode()}")

    def plan(self, b, s, t, h, version=None, tiling=None):
        pb = MlaProblem()
        self._ok(self.lib.mla_problem_init(ctypes.byref(pb), 1), "mla_problem_init")
        pb.b, pb.s, pb.t, pb.h, pb.scale = b, s, t, h, SCALE
        opt = MlaPlanOptions()
        self.lib.mla_plan_options_init(ctypes.byref(opt))
        if version:
            opt.version = version.encode()
        if tiling:
            opt.tiling = tiling.encode()
        plan = ctypes.c_void_p()
        self._ok(self.lib.mla_flash_mla_plan(ctypes.byref(pb), ctypes.byref(opt), ctypes.byref(plan)),
                 "mla_flash_mla_plan")
        ws = ctypes.c_size_t()
        self._ok(self.lib.mla_plan_workspace_size(plan, ctypes.byref(ws)), "mla_plan_workspace_size")
        buf = ctypes.create_string_buffer(512)
        self.lib.mla_plan_describe(plan, buf, 512)
        return plan, ws.value, buf.value.decode()

    def tensors(self, q, cache, bt, seqlens, out, lse):
        x = MlaFlashMlaTensors()
        x.q = q.data_ptr()
        x.q_strides[:] = [q.stride(0), q.stride(1), q.stride(2)]
        x.cache = cache.data_ptr()
        x.num_pages = cache.shape[0]
        x.block_table = bt.data_ptr()
        x.max_pages = bt.shape[1]
        x.block_table_stride = bt.stride(0)
        x.seqlens = seqlens.data_ptr()
        x.out = out.data_ptr()
        x.out_strides[:] = [out.stride(0), out.stride(1), out.stride(2)]
        x.lse = lse.data_ptr()
        return x

    def run(self, plan, x, ws_ptr, ws_bytes, stream):
        self._ok(self.lib.mla_flash_mla_run(plan, ctypes.byref(x), ws_ptr, ws_bytes, stream), "mla_flash_mla_run")


# ------------------------------------------------------------------------------------------------
# the GPU side
# ------------------------------------------------------------------------------------------------
def input_copies(torch, b, t):
    """Input sets for the graph method: enough that two calls apart read 2x the L2 between them."""
    cache_bytes = b * ((t + PAGE - 1) // PAGE) * PAGE * (K_LAT + P_ROPE) * 2
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    return copies_for(cache_bytes, l2)


def make_inputs(torch, b, s, t, h, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    dev = "cuda"
    q = (torch.randn(b, s, h, K_LAT + P_ROPE, generator=g, device=dev) / 10).clamp_(-1, 1).to(torch.bfloat16)
    mp = (t + PAGE - 1) // PAGE
    num_pages = b * mp
    cache = (torch.randn(num_pages, PAGE, K_LAT + P_ROPE, generator=g, device=dev) / 10).clamp_(-1, 1)
    cache = cache.to(torch.bfloat16)
    bt = torch.randperm(num_pages, generator=g, device=dev).to(torch.int32).view(b, mp).contiguous()
    seqlens = torch.full((b,), t, dtype=torch.int32, device=dev)
    return q, cache, bt, seqlens


def reference(torch, q, cache, bt, t, r):
    """fp32 attention of request r over its t tokens, bottom-right causal: out [s, h, 512], lse [h, s]."""
    s = q.shape[1]
    mp = (t + PAGE - 1) // PAGE
    kv = cache[bt[r, :mp].long()].reshape(-1, K_LAT + P_ROPE)[:t].float()
    qr = q[r].float()                                           # [s, h, 576]
    sc = torch.einsum("shd,td->hst", qr, kv) * SCALE             # [h, s, t]
    i = torch.arange(s, device=q.device).view(s, 1)
    j = torch.arange(t, device=q.device).view(1, t)
    sc = sc.masked_fill((j > t - s + i).unsqueeze(0), float("-inf"))
    lse = torch.logsumexp(sc, dim=-1)                            # [h, s]
    p = torch.softmax(sc, dim=-1)
    out = torch.einsum("hst,td->shd", p, kv[:, :K_LAT])
    return out, lse


def bar(torch, out, lse, ref_out, ref_lse):
    """MLA_SPEC.md's bar: relative Frobenius error, max error against max|ref|, lse error, finiteness."""
    o, ro = out.float(), ref_out.float()
    rel = (torch.linalg.vector_norm(o - ro) / torch.linalg.vector_norm(ro)).item()
    mx = ((o - ro).abs().max() / ro.abs().max()).item()
    dl = (lse.float() - ref_lse.float()).abs().max().item()
    finite = bool(torch.isfinite(o).all().item())
    ok_out = finite and rel <= 5e-3 and mx <= 2e-2
    return ok_out, dl <= 1e-3, {"rel": rel, "max_over_maxref": mx, "lse_abs": dl, "finite": finite}


def time_flush(torch, fn, flush):
    torch.cuda.synchronize()
    fn()
    torch.cuda.synchronize()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record()
    for _ in range(5):
        flush.zero_()
        fn()
    e1.record()
    e1.synchronize()
    warm, reps = flush_reps(e0.elapsed_time(e1) / 5)
    for _ in range(warm):
        flush.zero_()
        fn()
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(reps)]
    w0 = time.perf_counter()
    for a, c in ev:
        flush.zero_()
        a.record()
        fn()
        c.record()
    host_us = (time.perf_counter() - w0) * 1e6 / reps
    torch.cuda.synchronize()
    gpu_us = ev[0][0].elapsed_time(ev[-1][1]) * 1000.0 / reps
    # The events time the GPU; a host slower than the GPU (Python's launch path) would leave the
    # GPU idle between a start event and its call and put that gap into the time.
    return [a.elapsed_time(c) * 1000.0 for a, c in ev], host_us, gpu_us


def make_graph(torch, fn, copies=1, calls=8):
    """A CUDA graph of `calls` calls; fn(k) runs on input set k, the calls rotate over the sets
    (each set warmed once on a side stream first, as graph capture wants)."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for k in range(copies):
            fn(k)
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for i in range(calls):
            fn(i % copies)
    torch.cuda.synchronize()
    return g


def time_graph(torch, fn, copies=1, calls=8, warm=10, reps=50):
    """fn(k) runs on input set k; the graph's calls rotate over the sets."""
    g = make_graph(torch, fn, copies, calls)
    for _ in range(warm):
        g.replay()
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(reps)]
    for a, c in ev:
        a.record()
        g.replay()
        c.record()
    torch.cuda.synchronize()
    del g
    return [a.elapsed_time(c) * 1000.0 / calls for a, c in ev], None, None


def kernels_of(torch, prof):
    """(name, start_us, end_us) of the GPU activities (kernels, memsets) a torch.profiler run saw."""
    out = []
    try:  # kineto's own records: GPU start and duration in ns
        for e in prof.profiler.kineto_results.events():
            if e.device_type() == torch.autograd.DeviceType.CUDA:
                out.append((e.name(), e.start_ns() / 1000.0, (e.start_ns() + e.duration_ns()) / 1000.0))
    except AttributeError:
        for e in prof.events():
            if e.device_type == torch.autograd.DeviceType.CUDA:
                out.append((e.name, e.time_range.start, e.time_range.end))
    return sorted(out, key=lambda k: k[1])


def profile_calls(torch, fn, flush, copies, n_flush=None, replays=4):
    """The `prof` mode: one call's kernels, then the flush method's loop and graph replays (the
    same graph as time_graph's) under torch.profiler (CUPTI); call_timeline of each."""
    from torch.profiler import profile, ProfilerActivity
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        fn(0)
        torch.cuda.synchronize()
    names = [k[0] for k in kernels_of(torch, p)]
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record()
    for _ in range(3):
        flush.zero_()
        fn(0)
    e1.record()
    e1.synchronize()
    # ~100 ms of the flush loop (as time_flush), with the SM clock sampled while it runs
    n_flush = flush_reps(e0.elapsed_time(e1) / 3)[1] if n_flush is None else n_flush
    clocks, stop = [], threading.Event()
    sampler = threading.Thread(target=sample_clock, args=(clocks, stop), daemon=True)
    sampler.start()
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        for _ in range(n_flush):
            flush.zero_()
            fn(0)
        torch.cuda.synchronize()
    stop.set()
    sampler.join()
    res = {"names": names, "flush": call_timeline(kernels_of(torch, p), names),
           "clock_mhz": statistics.median(clocks) if clocks else None}
    g = make_graph(torch, fn, copies)
    for _ in range(3):
        g.replay()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        for _ in range(replays):
            g.replay()
        torch.cuda.synchronize()
    res["graph"] = call_timeline(kernels_of(torch, p), names)
    return res


def sample_clock(out, stop, every_s=0.002):
    """SM clock samples (MHz) every ~2 ms until stop is set (NVML; nothing if it is not there)."""
    try:
        import pynvml
        pynvml.nvmlInit()
        hd = pynvml.nvmlDeviceGetHandleByIndex(0)
        while not stop.is_set():
            out.append(pynvml.nvmlDeviceGetClockInfo(hd, pynvml.NVML_CLOCK_SM))
            time.sleep(every_s)
    except Exception:
        pass


def smi():
    """SM clock (MHz), power (W) and clock event reasons right now, if NVML is there."""
    try:
        import pynvml
        pynvml.nvmlInit()
        hd = pynvml.nvmlDeviceGetHandleByIndex(0)
        clk = pynvml.nvmlDeviceGetClockInfo(hd, pynvml.NVML_CLOCK_SM)
        pw = pynvml.nvmlDeviceGetPowerUsage(hd) / 1000.0
        try:
            rs = pynvml.nvmlDeviceGetCurrentClocksEventReasons(hd)
        except Exception:
            rs = pynvml.nvmlDeviceGetCurrentClocksThrottleReasons(hd)
        return {"sm_mhz": clk, "power_w": pw, "reasons": hex(rs)}
    except Exception as e:  # NVML is a nicety here
        return {"error": str(e)[:80]}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lib", default="build/libmla_var3.so")
    ap.add_argument("--version", default=None, help="mla_var3 version (default: the library's choice)")
    ap.add_argument("--only", default="", help="b,h,t,s;b,h,t,s: run these rows of the grid only")
    ap.add_argument("--passes", type=int, default=2)
    ap.add_argument("--modes", default="flush,graph",
                    help="flush, graph (timed) and prof (each call's kernels on the GPU timeline, torch.profiler)")
    ap.add_argument("--cool-ms", type=float, default=1000.0)
    ap.add_argument("--json", default=None)
    ap.add_argument("--tiling", default=None, help="mla_var3 tiling override, e.g. splits=2")
    ap.add_argument("--selftest", action="store_true")
    ap.add_argument("--merge", nargs="+", metavar="FILE", help="merge saved outputs into one table (no GPU)")
    a = ap.parse_args()
    if a.selftest:
        return selftest()
    if a.merge:
        print(merge_files(a.merge))
        return 0

    try:
        import torch
        import flash_mla
    except ImportError as e:
        print(f"needs PyTorch with CUDA and the sgl-flash-mla wheel (scripts/fetch_flashmla.sh, installed with "
              f"pip --target on the GPU machine): {e}")
        return 2
    if not flash_mla.has_legacy():
        print("FlashMLA's legacy (SM90) kernels are not in this build of the wheel")
        return 2
    ours = Ours(a.lib)
    rows = select_rows(ANCHOR_ROWS, a.only)
    if not rows:
        print(f"--only {a.only!r} names no row of the ANCHORS grid")
        return 2
    modes = [m for m in a.modes.split(",") if m]
    dev = torch.cuda.get_device_properties(0)
    print(f"device: {dev.name}, {dev.multi_processor_count} SMs; torch {torch.__version__}; "
          f"flash_mla {flash_mla.__version__}; {smi()}")
    flush = torch.empty(FLUSH_BYTES, dtype=torch.uint8, device="cuda")
    runs, checks, profs = [], [], []
    failed = fm_missed = 0
    for ri, (b, h, t, s, anchor) in enumerate(rows):
        # Input sets: the first is checked; the graph method's calls rotate over all of them, so a
        # call never finds the previous call's last pages in the L2 (timing.c does the same).
        sets = [make_inputs(torch, b, s, t, h, seed=1000 + 97 * k + ri) for k in range(input_copies(torch, b, t))]
        q, cache, bt, seqlens = sets[0]
        plan, ws_bytes, desc = ours.plan(b, s, t, h, a.version, a.tiling)
        ws = torch.empty(max(ws_bytes, 256), dtype=torch.uint8, device="cuda")
        out = torch.full((b, s, h, K_LAT), float("nan"), dtype=torch.bfloat16, device="cuda")
        lse = torch.full((b, h, s), float("nan"), dtype=torch.float32, device="cuda")
        xs = [ours.tensors(*st, out, lse) for st in sets]

        def run_ours(k=0):
            ours.run(plan, xs[k], ws.data_ptr(), ws_bytes, torch.cuda.current_stream().cuda_stream)

        kcs = [st[1].view(st[1].shape[0], PAGE, 1, K_LAT + P_ROPE) for st in sets]
        meta, _ = flash_mla.get_mla_metadata()
        fm_out = {}

        def run_fm(k=0):
            o, l = flash_mla.flash_mla_with_kvcache(sets[k][0], kcs[k], sets[k][2], sets[k][3], K_LAT, meta,
                                                    softmax_scale=SCALE, causal=True, use_legacy=True)
            fm_out["o"], fm_out["l"] = o, l

        # correctness: both against the fp32 reference on the first and last request, and each other
        run_ours()
        run_fm()
        torch.cuda.synchronize()
        verdict = {"row": [b, h, t, s], "ours_plan": desc}
        for r in sorted({0, b - 1}):
            ro, rl = reference(torch, q, cache, bt, t, r)
            # lse [b, h, s] in both libraries, natural log
            ok_o, okl_o, m_o = bar(torch, out[r], lse[r], ro, rl)
            ok_f, okl_f, m_f = bar(torch, fm_out["o"][r], fm_out["l"][r], ro, rl)
            verdict[f"ours_r{r}"] = m_o
            verdict[f"flashmla_r{r}"] = m_f
            verdict[f"ok_r{r}"] = [ok_o and okl_o, ok_f and okl_f]
            # ours must meet the bar; FlashMLA's result is reported (a FlashMLA miss is not ours)
            failed += (not ok_o) + (not okl_o)
            fm_missed += (not ok_f) + (not okl_f)
        diff = (out.float() - fm_out["o"].float()).abs().max().item()
        verdict["max_abs_ours_vs_flashmla"] = diff
        checks.append(verdict)
        print(f"row b={b} h={h} t={t} s={s}: {desc}; check ours {[verdict[k][0] for k in verdict if k.startswith('ok_')]}"
              f" flashmla {[verdict[k][1] for k in verdict if k.startswith('ok_')]}; max|ours-fm| {diff:.3g}",
              flush=True)

        for p in range(a.passes):
            for impl in impl_order(ri, p):
                fn = run_ours if impl == "ours" else run_fm
                for mode in modes:
                    time.sleep(a.cool_ms / 1000.0)
                    if mode == "prof":
                        pr = profile_calls(torch, fn, flush, len(sets))
                        profs.append({"row": [b, h, t, s], "impl": impl, "pass": p, **pr})
                        for pm in ("flush", "graph"):
                            print(timeline_line(impl, pm, pr["names"], pr[pm]), flush=True)
                        print(f"  prof {impl:8s} clock  median {pr['clock_mhz']} MHz over the flush loop", flush=True)
                        continue
                    us, host_us, gpu_us = (time_flush(torch, fn, flush) if mode == "flush"
                                           else time_graph(torch, fn, len(sets)))
                    st = series_stats(us)
                    runs.append({"row": [b, h, t, s], "impl": impl, "mode": mode, "pass": p, "stats": st,
                                 "host_us_per_iter": host_us, "gpu_us_per_iter": gpu_us,
                                 "smi_after": smi(), "series": us if len(us) <= 200 else None})
                    lag = ""
                    if host_us is not None and host_us > gpu_us:
                        lag = f" HOST-BOUND (host {host_us:.0f} us an iteration, GPU {gpu_us:.0f})"
                    print(f"  pass {p} {impl:8s} {mode:5s} median {st['median']:8.1f} first10 {st['first10']:8.1f} "
                          f"last10 {st['last10']:8.1f} min {st['min']:8.1f} (n={st['n']}) {runs[-1]['smi_after']}{lag}",
                          flush=True)
        ours.lib.mla_plan_destroy(plan)   # the row's tensors go when the next row rebinds them

    print()
    print(table(runs, rows, [m for m in modes if m != "prof"]))
    n_ok = sum(1 for c in checks for k in c if k.startswith("ok_") and c[k][0])
    print(f"FlashMLA against the reference: {fm_missed} misses of the bar (out or lse)")
    print(f"checks (mla_var3 against the fp32 reference): {n_ok} passed, {failed} failed")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"rows": [list(r) for r in rows], "runs": runs, "checks": checks, "profiles": profs,
                       "cool_ms": a.cool_ms, "passes": a.passes, "modes": modes}, f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
