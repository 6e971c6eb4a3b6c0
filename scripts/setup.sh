#!/usr/bin/env bash
# Installs everything gpsm needs to build and test, then stages the header-only dependencies and
# the GoogleTest sources into .deps/ so that a machine with no package registry (the GPU machine)
# can build from a copy of the tree (scripts/device-run.sh carries .deps there).
# Idempotent: a second run only checks.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

need_apt=()
for pkg in cmake g++ make ccache libcli11-dev nlohmann-json3-dev libfmt-dev googletest libgtest-dev unzip; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need_apt+=("$pkg")
done
if [ ${#need_apt[@]} -gt 0 ]; then
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    echo "setup: installing ${need_apt[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
  else
    echo "setup: missing Debian packages: ${need_apt[*]} (run as root with apt-get, or install them)" >&2
    exit 1
  fi
fi

py=${PYTHON:-python3}
# matplotlib draws `gpsm report` plots.
"$py" -c 'import matplotlib' 2>/dev/null || "$py" -m pip install -q matplotlib

# Each staged dependency has its own include directory, so one never shadows a newer system copy
# of another (e.g. nvml.h's folder must not carry an older nlohmann/json.hpp onto the path).
mkdir -p .deps/nvml/include .deps/json/include .deps/cli11/include .deps/fmt/include .deps/wheels
# NVML header (the library itself comes with the driver and is loaded at run time with dlopen).
if [ ! -f .deps/nvml/include/nvml.h ]; then
  if [ -f /usr/local/cuda/include/nvml.h ]; then
    cp /usr/local/cuda/include/nvml.h .deps/nvml/include/
  else
    "$py" -m pip download -q --no-deps -d .deps/wheels nvidia-nvml-dev
    unzip -q -o -j .deps/wheels/nvidia_nvml_dev-*.whl '*/include/nvml.h' -d .deps/nvml/include
  fi
fi
# Header-only libraries, staged so the GPU machine (no registry) builds the same code.
[ -d .deps/cli11/include/CLI ] || cp -r /usr/include/CLI .deps/cli11/include/
[ -d .deps/json/include/nlohmann ] || cp -r /usr/include/nlohmann .deps/json/include/
[ -d .deps/fmt/include/fmt ] || cp -r /usr/include/fmt .deps/fmt/include/
[ -d .deps/googletest ] || cp -r /usr/src/googletest .deps/googletest
rm -rf .deps/include  # layout before 2026-11-21
echo "setup: dependencies ready (.deps staged)"
