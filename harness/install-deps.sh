#!/usr/bin/env bash
# Install the Debian packages oqbench needs, only those of what is about to
# run.  Idempotent; works as root or through sudo.
#
# Usage: harness/install-deps.sh [--if-missing] [--list] [FOR...]
#   FOR is what the packages are for (default: all):
#     demo         `make demo`: the build's libraries' -dev packages, and
#                  what harness/demo.sh runs (jq, column, gnuplot for oqb plot)
#     build, unit  the whole build (with the optional parts: verbs, rocksdb)
#     integration  the unit build and the tools the integration tests start
#     verbs        the integration set and the Soft-RoCE VM (tests/vm/rxe-vm)
#     all, long    every package (`make deps`)
#   and any of tests/run-tests.sh's arguments: a script under tests/verbs/
#   or tests/erpc/ counts as verbs, any other script or name as
#   integration, so `make test TESTS="unit figures-lab"` installs the
#   integration set and `make test TESTS=unit` the build.
#   --if-missing  act only when a package is absent (one dpkg-query each),
#                 so make can call it every time
#   --list        print the packages of FOR, one a line, and install nothing
set -euo pipefail

# The build: the libraries every binary links (Makefile's LDLIBS_BASE).
BUILD=(build-essential pkg-config libjansson-dev libpmem-dev libzstd-dev zlib1g-dev)
# The build's optional parts, built only where their headers are found
# (the Makefile's HAVE_VERBS and HAVE_ROCKSDB; $(O)/config.stamp records them).
OPTIONAL=(libibverbs-dev librdmacm-dev librocksdb-dev)
# What harness/demo.sh runs besides bin/: jq, column, and oqb plot's gnuplot.
DEMO=(jq bsdextrautils gnuplot-nox)
TOOLS=(
  zstd jq bsdextrautils gnuplot-nox
  rdma-core ibverbs-utils rdmacm-utils perftest
  python3    # the separate HdrHistogram decoder (tests/hdr-decode.py, tests/integration/result-file.sh)
  python3-yaml  # reads the CI snippets to run them (tests/ci-snippets.py, tests/integration/ci-snippets.sh)
  chromium   # loads the figures report headless (tests/integration/report-browser.sh, report-width.sh)
  valgrind   # instruction counts per request (bench/icount.sh, tests/integration/icount.sh)
  memcached  # the memcached back end starts this binary itself, on a UNIX socket (tests/integration/memcached.sh)
  openssh-client openssh-server
  slurmctld slurmd slurm-client munge   # the Slurm launcher's test (tests/integration/slurm.sh)
)
# the Soft-RoCE VM that runs the verbs tests (tests/vm/rxe-vm)
VM=(qemu-system-x86 linux-image-amd64 busybox-static iproute2 kmod xz-utils cpio)

if_missing=0 list=0
fors=()
for a in "$@"; do
  case $a in
  --if-missing) if_missing=1 ;;
  --list) list=1 ;;
  -*) echo "install-deps: unknown option $a; use --if-missing, --list and what for (demo, unit, integration, verbs, all)" >&2; exit 2 ;;
  *) fors+=("$a") ;;
  esac
done
[ ${#fors[@]} -gt 0 ] || fors=(all)

want_build=0 want_opt=0 want_demo=0 want_tools=0 want_vm=0
for f in "${fors[@]}"; do
  case $f in
  demo) want_build=1 want_demo=1 ;;
  build | unit) want_build=1 want_opt=1 ;;
  all | long) want_build=1 want_opt=1 want_tools=1 want_vm=1 ;;
  verbs | tests/verbs/* | tests/erpc/*) want_build=1 want_opt=1 want_tools=1 want_vm=1 ;;
  *) want_build=1 want_opt=1 want_tools=1 ;;   # integration, or one of its scripts
  esac
done
PKGS=()
[ $want_build = 1 ] && PKGS+=("${BUILD[@]}")
[ $want_opt = 1 ] && PKGS+=("${OPTIONAL[@]}")
[ $want_demo = 1 ] && PKGS+=("${DEMO[@]}")
[ $want_tools = 1 ] && PKGS+=("${TOOLS[@]}")
[ $want_vm = 1 ] && PKGS+=("${VM[@]}")
mapfile -t PKGS < <(printf '%s\n' "${PKGS[@]}" | awk '!seen[$0]++')

if [ $list = 1 ]; then
  printf '%s\n' "${PKGS[@]}"
  exit 0
fi

missing=()
for p in "${PKGS[@]}"; do
  st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$st" == "install ok installed" ]] || missing+=("$p")
done

if [[ $if_missing == 1 && ${#missing[@]} -eq 0 ]]; then
  exit 0
fi
if [[ ${#missing[@]} -eq 0 ]]; then
  echo "deps: all ${#PKGS[@]} packages for ${fors[*]} are installed"
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

echo "deps: installing for ${fors[*]}: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update -q >&2
"${SUDO[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
