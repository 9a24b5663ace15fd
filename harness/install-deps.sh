#!/usr/bin/env bash
# Install the Debian packages oqbench needs.  Idempotent; works as root or
# through sudo.  With --if-missing it only acts when a package is absent, so
# `make test` and `make demo` can call it every time at the cost of one
# dpkg-query.
set -euo pipefail

PKGS=(
  build-essential pkg-config
  libjansson-dev libpmem-dev libzstd-dev zstd zlib1g-dev
  rdma-core libibverbs-dev librdmacm-dev ibverbs-utils rdmacm-utils perftest
  gnuplot-nox jq
  python3    # the separate HdrHistogram decoder (tests/hdr-decode.py, tests/integration/result-file.sh)
  python3-yaml  # reads the CI snippets to run them (tests/ci-snippets.py, tests/integration/ci-snippets.sh)
  chromium   # loads the figures report headless (tests/integration/report-browser.sh, report-width.sh)
  valgrind   # instruction counts per request (bench/icount.sh, tests/integration/icount.sh)
  memcached  # the memcached back end starts this binary itself, on a UNIX socket (tests/integration/memcached.sh)
  librocksdb-dev  # the rocksdb back end, in process through its C API (tests/integration/rocksdb.sh)
  openssh-client openssh-server
  slurmctld slurmd slurm-client munge   # the Slurm launcher's test (tests/integration/slurm.sh)
  # the Soft-RoCE VM that runs the verbs tests (tests/vm/rxe-vm)
  qemu-system-x86 linux-image-amd64 busybox-static iproute2 kmod xz-utils cpio
)

missing=()
for p in "${PKGS[@]}"; do
  st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$st" == "install ok installed" ]] || missing+=("$p")
done

if [[ ${1:-} == --if-missing && ${#missing[@]} -eq 0 ]]; then
  exit 0
fi
if [[ ${#missing[@]} -eq 0 ]]; then
  echo "deps: all ${#PKGS[@]} packages are installed"
  exit 0
fi

SUDO=()
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null 2>&1; then SUDO=(sudo); else
    echo "deps: missing packages: ${missing[*]}" >&2
    echo "deps: not root and no sudo; install them as root: apt-get install ${missing[*]}" >&2
    exit 1
  fi
fi

echo "deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update -q >&2
"${SUDO[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
