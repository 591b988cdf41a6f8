#!/usr/bin/env bash
# Install what the build needs on a fresh Debian/Ubuntu machine: cmake, a C compiler, cJSON.
# nvcc (the CUDA toolkit) is expected on PATH or in /usr/local/cuda; it is not an apt package
# here. A carried cJSON (MLA_VAR3_DEPS=<dir with usr/include/cjson>) is used as is.
set -euo pipefail
need=()
command -v cmake >/dev/null 2>&1 || need+=(cmake)
command -v cc >/dev/null 2>&1 || need+=(build-essential)
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
if [ -z "${MLA_VAR3_DEPS:-}" ] && [ ! -f /usr/include/cjson/cJSON.h ]; then need+=(libcjson-dev); fi
if [ ${#need[@]} -gt 0 ]; then
  echo "setup_deps: installing ${need[*]}"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}"
fi
if ! command -v nvcc >/dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "setup_deps: nvcc not found (install the CUDA toolkit, or put it on PATH)" >&2
  exit 1
fi
# cuobjdump for the SASS lint (tests: test_sass_lint) is not in every CUDA toolkit install; the
# nvidia-cuda-cuobjdump wheel carries it. Best effort: without it that test reports skipped.
if command -v python3 >/dev/null 2>&1 && ! python3 "$(dirname "$0")/sass_loops.py" --which >/dev/null 2>&1; then
  echo "setup_deps: installing nvidia-cuda-cuobjdump (pip) for the SASS lint"
  python3 -m pip install -q nvidia-cuda-cuobjdump >/dev/null 2>&1 || echo "setup_deps: pip install nvidia-cuda-cuobjdump failed; test_sass_lint will be skipped" >&2
fi
# cuobjdump disassembles sm_90a through nvdisasm (beside it or on PATH); without it it prints no
# SASS at all, so the wheel's cuobjdump needs the nvidia-cuda-nvdisasm wheel too.
cuobj=$(python3 "$(dirname "$0")/sass_loops.py" --which 2>/dev/null) &&
  if [ ! -x "$(dirname "$cuobj")/nvdisasm" ] && ! command -v nvdisasm >/dev/null 2>&1; then
    echo "setup_deps: installing nvidia-cuda-nvdisasm (pip) for the SASS lint"
    python3 -m pip install -q nvidia-cuda-nvdisasm >/dev/null 2>&1 || echo "setup_deps: pip install nvidia-cuda-nvdisasm failed; test_sass_lint will be skipped" >&2
  fi
