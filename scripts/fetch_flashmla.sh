#!/usr/bin/env bash
# fetch_flashmla.sh - runs HERE (the CPU machine, which reaches PyPI), before a device call that
# times FlashMLA beside mla_var3 (scripts/flashmla_same_call.py, device_run.sh's `anchor` stage):
# downloads the `sgl-flash-mla` wheel, a packaging of upstream FlashMLA whose SM90 dense decode is
# upstream's kernel, into .whl/ (git-ignored). Name `.whl` in the device call's carry; the GPU
# machine reaches no registry, and its image has the PyTorch the wheel loads into.
# Nothing of FlashMLA enters this repository: it is measured, not built or linked.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=${MLA_FLASHMLA_WHEEL_VERSION:-1.0.0}
mkdir -p .whl
rm -f .whl/sgl_flash_mla-*.whl
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  -d .whl "sgl-flash-mla==$VERSION"
ls -l .whl/sgl_flash_mla-*.whl
