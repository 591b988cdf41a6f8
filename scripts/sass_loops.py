#!/usr/bin/env python3
"""sass_loops.py - the wgmma loops of a kernel's SASS, with the counts that show whether ptxas kept
them on the uniform datapath.

flash_mla_v24's first build ran its pairs 7-8 % slower than v22's with loops of nearly the same
length: one branch on a loaded value at the consumers' start had made ptxas wrap the loops'
mbarrier waits and wgmma issues in divergence regions (BSSY 5 -> 20 a loop, R2UR 11 -> 38, SR_TID
re-read inside, WARPSYNC.ALL; docs/kernels/flash_mla.md, sixteenth session). Compare a new kernel's
loops with its parent's before spending device time on it.

Usage: scripts/sass_loops.py SASS_TEXT [NAME_PART]
  SASS_TEXT: `cuobjdump -sass OBJ` saved to a file; NAME_PART picks the first function whose name
  contains it (default: every function). A loop is the range from a backward branch's target to
  the branch (branches from the mbarrier retry stubs after the last EXIT are skipped); only loops
  with at least 16 HGMMA are printed, smallest first.
"""
import collections
import re
import sys

WATCH = ("HGMMA", "BSSY", "R2UR", "S2R", "WARPSYNC", "BAR", "LDL", "STL")


def functions(path):
    name, body = None, []
    for line in open(path, errors="replace"):
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
            ops = collections.Counter(t.split()[0].split(".")[0] for a, t in body if lo <= a <= addr)
            if ops["HGMMA"] >= 16:
                found.append((addr - lo, lo, addr, ops))
    return sorted(found)


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
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
