#!/usr/bin/env bash
# Installs everything gpsm needs to build and test, then stages the header-only dependencies and
# the GoogleTest sources into .deps/ so that a machine with no package registry (the GPU machine)
# can build from a copy of the tree (scripts/device-run.sh carries .deps there).
# Idempotent: a second run only checks.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

# The build tools are needed everywhere. The header-only libraries and GoogleTest's sources are
# needed only until they are staged in .deps: a copy of the tree that carries .deps (a GPU node
# with no package registry) builds without them. ccache only speeds rebuilds; unzip only unpacks
# the wheels below.
staged() {  # staged PKG: whether this machine or .deps already has what PKG provides
  case $1 in
    libcli11-dev) [ -d .deps/cli11/include/CLI ];;
    nlohmann-json3-dev) [ -d .deps/json/include/nlohmann ];;
    libfmt-dev) [ -d .deps/fmt/include/fmt ];;
    libstb-dev) [ -d .deps/stb/include/stb ];;
    googletest|libgtest-dev) [ -d .deps/googletest ];;
    cmake|g++|make) command -v "$1" >/dev/null;;  # e.g. cmake from pip, not a Debian package
    ccache|unzip) command -v "$1" >/dev/null || [ -d .deps/json/include/nlohmann ];;
    *) return 1;;
  esac
}
need_apt=()
for pkg in cmake g++ make ccache libcli11-dev nlohmann-json3-dev libfmt-dev libstb-dev googletest libgtest-dev unzip; do
  dpkg -s "$pkg" >/dev/null 2>&1 || staged "$pkg" || need_apt+=("$pkg")
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
# matplotlib draws `gpsm report` plots. Optional: without it (no registry) everything else works
# and `gpsm report` says plots need it.
"$py" -c 'import matplotlib' 2>/dev/null || "$py" -m pip install -q matplotlib ||
  echo "setup: could not install matplotlib: gpsm report will not draw plots" >&2

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
# NCCL (the `nccl` paradigm of gpsm bench): headers and libnccl.so.2 from the PyPI wheel
# nvidia-nccl-cu13, so gpsm links it with no GPU and no system NCCL. Optional: without it gpsm
# builds and reports nccl unsupported. libnccl.so.2 is ~330 MB, too large to carry to the GPU
# machine, so it is kept in .deps-nccl, outside .deps: there src/CMakeLists.txt finds python3's
# nvidia/nccl instead.
# python3's own nvidia/ packages (a GPU node's image often has them) serve as well: CMake looks
# there too, so nothing is downloaded.
py_nvidia=$("$py" -c 'import nvidia; print(list(nvidia.__path__)[0])' 2>/dev/null || true)
if [ -n "$py_nvidia" ] && [ -f "$py_nvidia/nccl/include/nccl.h" ] && [ -f "$py_nvidia/nccl/lib/libnccl.so.2" ]; then
  :
elif [ ! -f .deps-nccl/include/nccl.h ] || [ ! -f .deps-nccl/lib/libnccl.so.2 ]; then
  rm -rf .deps-nccl .deps-nccl.tmp
  if "$py" -m pip download -q --no-deps -d .deps/wheels nvidia-nccl-cu13; then
    whl=$(ls .deps/wheels/nvidia_nccl_cu13-*.whl | sort -V | tail -1)
    unzip -q -o "$whl" 'nvidia/nccl/include/*' 'nvidia/nccl/lib/libnccl.so*' '*/License.txt' -d .deps-nccl.tmp
    mkdir -p .deps-nccl
    mv .deps-nccl.tmp/nvidia/nccl/include .deps-nccl.tmp/nvidia/nccl/lib .deps-nccl/
    cp .deps-nccl.tmp/*.dist-info/licenses/License.txt .deps-nccl/ 2>/dev/null || true
    rm -rf .deps-nccl.tmp .deps/wheels/nvidia_nccl_cu13-*.whl  # 300 MB; .deps-nccl is the copy kept
  else
    echo "setup: could not download nvidia-nccl-cu13: gpsm builds without NCCL (nccl paradigm unsupported)" >&2
  fi
fi
# NVSHMEM (the `nvshmem` paradigms of gpsm bench: their workers, gpsm-nvshmem-stencil and gpsm-nvshmem-cg): headers,
# libnvshmem_host.so.3, libnvshmem_device.a and the unique-ID bootstrap plugin from the PyPI wheel
# nvidia-nvshmem-cu13, so the worker compiles and links with no GPU. Optional, like NCCL. Kept in
# .deps-nvshmem, outside .deps (~45 MB): on the GPU machine src/CMakeLists.txt finds python3's
# nvidia/nvshmem instead. Pinned so every developer compiles against the same headers
# (GPSM_NVSHMEM_VERSION overrides); the GPU machine builds against its own copy.
nvshmem_version=${GPSM_NVSHMEM_VERSION:-3.4.5}
if [ -n "$py_nvidia" ] && [ -f "$py_nvidia/nvshmem/include/nvshmem.h" ] && [ -f "$py_nvidia/nvshmem/lib/libnvshmem_device.a" ]; then
  :
elif [ ! -f .deps-nvshmem/include/nvshmem.h ] || [ ! -f .deps-nvshmem/lib/libnvshmem_device.a ]; then
  rm -rf .deps-nvshmem .deps-nvshmem.tmp
  wheels=$(mktemp -d)
  if "$py" -m pip download -q --no-deps -d "$wheels" "nvidia-nvshmem-cu13==$nvshmem_version"; then
    whl=$(ls "$wheels"/nvidia_nvshmem_cu13-*.whl | sort -V | tail -1)
    unzip -q -o "$whl" 'nvidia/nvshmem/include/*' 'nvidia/nvshmem/lib/libnvshmem_host.so*' \
      'nvidia/nvshmem/lib/libnvshmem_device.a' 'nvidia/nvshmem/lib/nvshmem_bootstrap_uid.so*' \
      '*/License.txt' -d .deps-nvshmem.tmp
    mkdir -p .deps-nvshmem
    mv .deps-nvshmem.tmp/nvidia/nvshmem/include .deps-nvshmem.tmp/nvidia/nvshmem/lib .deps-nvshmem/
    cp .deps-nvshmem.tmp/*.dist-info/licenses/License.txt .deps-nvshmem/ 2>/dev/null || true
    rm -rf .deps-nvshmem.tmp
  else
    echo "setup: could not download nvidia-nvshmem-cu13: gpsm builds without NVSHMEM (nvshmem paradigm unsupported)" >&2
  fi
  rm -rf "$wheels"
fi
# Header-only libraries, staged so the GPU machine (no registry) builds the same code.
[ -d .deps/cli11/include/CLI ] || cp -r /usr/include/CLI .deps/cli11/include/
[ -d .deps/json/include/nlohmann ] || cp -r /usr/include/nlohmann .deps/json/include/
[ -d .deps/fmt/include/fmt ] || cp -r /usr/include/fmt .deps/fmt/include/
# stb_image / stb_image_write (PNG in and out for image filtering): headers only, from Debian's libstb-dev.
[ -d .deps/stb/include/stb ] || { mkdir -p .deps/stb/include && cp -r /usr/include/stb .deps/stb/include/; }
[ -d .deps/googletest ] || cp -r /usr/src/googletest .deps/googletest
rm -rf .deps/include  # layout before 2026-11-21
echo "setup: dependencies ready (.deps staged)"
