#!/usr/bin/env python3
"""sass_loops.py - the wgmma loops of a kernel's SASS, with the counts that show whether ptxas kept
them on the uniform datapath.

flash_mla_v24's first build ran its pairs 7-8 % slower than v22's with loops of nearly the same
length: one branch on a loaded value at the consumers' start had made ptxas wrap the loops'
mbarrier waits and wgmma issues in divergence regions (BSSY 5 -> 20 a loop, R2UR 11 -> 38, SR_TID
re-read inside, WARPSYNC.ALL; docs/kernels/flash_mla.md, sixteenth session). Compare a new kernel's
loops with its parent's before spending device time on it.

Usage: scripts/sass_loops.py FILE [NAME_PART]
       scripts/sass_loops.py --check FILE...
       scripts/sass_loops.py --which          (the cuobjdump it would run; exit 1: none)
       scripts/sass_loops.py --compare FILE_A NAME_A FILE_B NAME_B
  FILE: `cuobjdump -sass OBJ` saved to a file, or a CUDA object / cubin (ELF: cuobjdump is run on
  it: $CUOBJDUMP, PATH, /usr/local/cuda/bin, or the nvidia-cuda-cuobjdump pip package's). NAME_PART
  picks the first function whose name contains it (default: every function). A loop is the range
  from a backward branch's target to the branch (branches from the mbarrier retry stubs after the
  last EXIT are skipped); only loops with at least 16 HGMMA are printed, smallest first.
  --check: for every function of every FILE, each innermost such loop must be free of WARPSYNC and
  hold at most MAX_BSSY divergence regions (v24's slow build: 20 and 16 with 3 WARPSYNC; every
  kernel's pair loops at the time of writing: 2-5), and at most one WARPGROUP.ARRIVE for every
  MAX_ARRIVE_DEN HGMMA (ptxas's serialised wgmma: one arrive a wgmma; the pair loops: 12-13 for
  44). Exit 1 on a violation, 77 (skipped) when cuobjdump (or the nvdisasm it runs for sm_90a) is
  needed and not found, or no wgmma loop was found to check. Run by ctest as test_sass_lint on the
  hopper kernel objects.
  --compare: the innermost wgmma loops of two functions (the first whose name contains NAME_A in
  FILE_A, and NAME_B in FILE_B), paired in address order, with each pair's opcode-sequence
  similarity (difflib's ratio over the opcodes, predicates and operands dropped: 1.000 is the same
  instructions in the same order) and the opcodes whose counts differ. The twenty-fourth session
  found the walk kernel's pair loops (flash_mla_v42) to hold v41's opcodes within a few integer
  instructions but only 0.74-0.81 alike in order, and their pairs 2 % faster in the timeline probe,
  v43's with the same loops 5 % slower: a loop's schedule moves its pair, so compare the build
  you measured (the probe's) with the one you ship (the library's) before reading one as the other.
"""
import collections
import glob
import os
import re
import shutil
import subprocess
import sys

MAX_BSSY = 8
# At most HGMMA / MAX_ARRIVE_DEN WARPGROUP.ARRIVEs in a wgmma loop. Every pair loop at the time of
# writing has 12-13 for 44 HGMMA (one a wgmma group); the twentieth session's serialised build
# (flash_mla_v34 with a data-dependent wgmma wait, 30-40 % slower) had one before every HGMMA.
MAX_ARRIVE_DEN = 2

WATCH = ("HGMMA", "WGARRIVE", "BSSY", "R2UR", "S2R", "WARPSYNC", "BAR", "LDL", "STL")


def find_cuobjdump():
    cands = [os.environ.get("CUOBJDUMP", ""), shutil.which("cuobjdump") or "", "/usr/local/cuda/bin/cuobjdump"]
    for sp in sys.path:  # the nvidia-cuda-cuobjdump wheel: nvidia/<cuXX or cuda_cuobjdump>/bin/cuobjdump
        cands += sorted(glob.glob(os.path.join(sp, "nvidia", "*", "bin", "cuobjdump")), reverse=True)
    return next((c for c in cands if c and os.access(c, os.X_OK)), None)


def sass_lines(path):
    with open(path, "rb") as f:
        elf = f.read(4) == b"\x7fELF"
    if not elf:
        return open(path, errors="replace").read().splitlines()
    tool = find_cuobjdump()
    if not tool:
        print("skipped: cuobjdump not found (set CUOBJDUMP, or pip install nvidia-cuda-cuobjdump)")
        sys.exit(77)
    out = subprocess.run([tool, "-sass", path], capture_output=True, text=True, errors="replace")
    if "nvdisasm" in out.stderr and "Function :" not in out.stdout:
        # cuobjdump prints sm_90a SASS through nvdisasm; the cuobjdump wheel alone prints none,
        # and a lint over no functions would pass without having checked anything.
        print("skipped: cuobjdump found no nvdisasm (put it on PATH, or pip install nvidia-cuda-nvdisasm)")
        sys.exit(77)
    return out.stdout.splitlines()


def functions(path):
    name, body = None, []
    for line in sass_lines(path):
        m = re.search(r"Function : (\S+)", line)
        if m:
            if name:
                yield name, body
            name, body = m.group(1), []
            continue
        m = re.search(r"/\*([0-9a-f]{4,})\*/\s+([^;]*);", line)
        if m and name:
            text = re.sub(r"^@!?U?P[T0-9]+\s+", "", m.group(2).strip())
            body.append((int(m.group(1), 16), text))
    if name:
        yield name, body


def op_key(text):
    # WARPGROUP.ARRIVE on its own: ptxas puts one before every wgmma it serialises
    return "WGARRIVE" if text.startswith("WARPGROUP.ARRIVE") else text.split()[0].split(".")[0]


def loops(body):
    # mbarrier retry stubs sit after the function's last EXIT and branch back into its loops:
    # their backward branches are not loops
    last_exit = max((a for a, t in body if t.startswith("EXIT")), default=max(a for a, _ in body))
    found = []
    for addr, text in body:
        if not text.startswith("BRA") or addr > last_exit:
            continue
        m = re.search(r"0x([0-9a-f]+)", text)
        if m and int(m.group(1), 16) < addr:
            lo = int(m.group(1), 16)
            ops = collections.Counter(op_key(t) for a, t in body if lo <= a <= addr)
            if ops["HGMMA"] >= 16:
                found.append((addr - lo, lo, addr, ops))
    return sorted(found)


def innermost(found):
    return [f for f in found if not any(g is not f and f[1] <= g[1] and g[2] <= f[2] for g in found)]


def check(paths):
    bad, nloops, nfun = 0, 0, 0
    for path in paths:
        for name, body in functions(path):
            nfun += 1
            for _, lo, hi, ops in innermost(loops(body)):
                nloops += 1
                if ops["WARPSYNC"] or ops["BSSY"] > MAX_BSSY:
                    bad += 1
                    print(f"FAIL {os.path.basename(path)} {name} loop {lo:#x}-{hi:#x}: HGMMA={ops['HGMMA']} "
                          f"BSSY={ops['BSSY']} (max {MAX_BSSY}) WARPSYNC={ops['WARPSYNC']} R2UR={ops['R2UR']} "
                          f"S2R={ops['S2R']}: ptxas could not keep this wgmma loop convergent")
                if ops["WGARRIVE"] * MAX_ARRIVE_DEN > ops["HGMMA"]:
                    bad += 1
                    print(f"FAIL {os.path.basename(path)} {name} loop {lo:#x}-{hi:#x}: HGMMA={ops['HGMMA']} "
                          f"WARPGROUP.ARRIVE={ops['WGARRIVE']} (max HGMMA / {MAX_ARRIVE_DEN}): ptxas serialised "
                          f"this loop's wgmmas (its C7514 'Potential Performance Loss' note)")
    print(f"{len(paths)} files, {nfun} functions, {nloops} innermost wgmma loops, {bad} failing")
    if nloops == 0:
        print("skipped: no wgmma loop found, nothing checked")
        return 77
    return 1 if bad else 0


def compare(fa, na, fb, nb):
    import difflib

    def pick(path, part):
        for name, body in functions(path):
            if part in name:
                return name, body
        print(f"no function with '{part}' in {path}")
        sys.exit(2)

    out = []
    for path, part in ((fa, na), (fb, nb)):
        name, body = pick(path, part)
        lps = sorted(innermost(loops(body)), key=lambda f: f[1])
        seqs = [[t.split()[0] for a, t in body if lo <= a <= hi] for _, lo, hi, _ in lps]
        out.append((name, seqs))
    (an, aseq), (bn, bseq) = out
    print(f"A {an}: {len(aseq)} innermost wgmma loops\nB {bn}: {len(bseq)}")
    for i, (x, y) in enumerate(zip(aseq, bseq)):
        ratio = difflib.SequenceMatcher(None, x, y, autojunk=False).ratio()
        cx, cy = collections.Counter(x), collections.Counter(y)
        diff = {k: (cx[k], cy[k]) for k in sorted(set(cx) | set(cy)) if cx[k] != cy[k]}
        print(f"  loop {i}: {len(x)} / {len(y)} instructions, opcode-sequence similarity {ratio:.3f}, "
              f"counts differing (A, B): {diff if diff else 'none'}")
    return 0


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    if sys.argv[1] == "--which":  # (scripts/setup_deps.sh: is there a cuobjdump to run?)
        tool = find_cuobjdump()
        print(tool or "cuobjdump not found")
        return 0 if tool else 1
    if sys.argv[1] == "--compare" and len(sys.argv) == 6:
        return compare(*sys.argv[2:6])
    if sys.argv[1] == "--check":  # (a CMake list passed as one argument is split here too)
        return check([f for a in sys.argv[2:] for f in a.split(";") if f])
    part = sys.argv[2] if len(sys.argv) > 2 else ""
    for name, body in functions(sys.argv[1]):
        if part not in name:
            continue
        print(f"{name}: {len(body)} instructions")
        for _, lo, hi, ops in loops(body):
            counts = " ".join(f"{k}={ops[k]}" for k in WATCH)
            print(f"  loop {lo:#x}-{hi:#x}: {sum(ops.values())} instructions, {counts}")
        if part:
            break
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # (piped into head)
        sys.exit(0)
