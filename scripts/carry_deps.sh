#!/usr/bin/env bash
# carry_deps.sh - runs HERE (the CPU machine, Debian 12), before a device call: downloads the
# cJSON runtime and development packages as .debs into .deps/ (git-ignored) so that they travel
# to the GPU machine, which reaches no package registry. Name `.deps` in the device call's carry;
# scripts/device_run.sh unpacks them there with dpkg -x.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .deps
cd .deps
rm -f libcjson*.deb
if ! apt-get download libcjson1 libcjson-dev >/dev/null 2>&1; then
  # the package lists may be missing or stale on a fresh machine
  apt-get update -qq
  apt-get download libcjson1 libcjson-dev
fi
ls -l libcjson*.deb
