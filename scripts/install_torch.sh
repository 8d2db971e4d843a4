#!/usr/bin/env bash
# Install torch into the given Python before anything that depends on it.
# Prefer a local CPU wheel (pip's find-links) so no multi-GB CUDA build is downloaded;
# elsewhere take the CPU build on machines without an NVIDIA GPU, the default build otherwise.
set -euo pipefail
py=${1:-python3}
# The same bounds as pyproject.toml's (tests/test_dependency_bounds.py checks that they agree).
spec='torch>=2.13,<2.14'
if "$py" -c 'import torch' 2>/dev/null; then exit 0; fi
# A local wheel (pip's find-links) is taken as a file; its dependencies come from the usual indexes.
local=$(mktemp -d)
trap 'rm -rf "$local"' EXIT
if "$py" -m pip download --quiet --no-deps --no-index torch==2.13.0 -d "$local" 2>/dev/null; then
  "$py" -m pip install "$local"/torch-*.whl && exit 0
fi
if [ "$(uname -s)" = Linux ] && ! command -v nvidia-smi >/dev/null 2>&1; then
  "$py" -m pip install "$spec" --index-url https://download.pytorch.org/whl/cpu && exit 0
fi
"$py" -m pip install "$spec"
