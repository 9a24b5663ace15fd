# oqbench build.  `make` builds everything buildable here; `make test` runs
# every test; `make check` runs them again under ASan+UBSan; `make deps`
# installs the Debian packages.  WERROR=1 turns warnings into errors (CI).
#
# Layout of the build: the code is in layers, each a static library with
# its own include path, so a file can include only what its layer may use
# (docs/architecture.md, "Rooms"):
#   lib/        liboqb-lib.a        sees lib/
#   workloads/  liboqb-workloads.a  sees lib/, workloads/
#   bench/      liboqb-bench.a      sees lib/, workloads/, bench/ and its
#                                   subfolders (transports, backends), include/
#   harness/    liboqb-harness.a    sees lib/, workloads/, harness/ and its
#                                   subfolders (not harness/crash/): never a
#                                   transport or backend header
#   harness/crash/ liboqb-crash.a   sees lib/, bench/ (session.h), itself:
#                                   the crash tester is a client of the server
# Subfolders are found with `find`, so a new one joins its layer unasked.
# Every `*_main.c` becomes bin/<name with - for _>, e.g.
# bench/oqb_server_main.c -> bin/oqb-server, linked with its layer's library
# and those below it: bin/oqb (harness/) links no transport or backend code
# and no RDMA or C++ library.  $(O)/liboqb.a holds every layer, for unit
# tests and fuzz targets, which may see everything.  Unit tests are
# tests/unit/test_*.c, one binary each.  Two folders build only where their
# headers exist: bench/transports/verbs/ (rdma-core), and in it the files
# named *_exp.c (MLNX_OFED's experimental verbs).

CC      ?= cc
OPT     ?= -O2
O       ?= build/default
BIN     ?= bin
SAN     ?=

# Baseline x86-64 on purpose: binaries also run inside the Soft-RoCE VM,
# whose emulated CPU lacks AVX-512 (never -march=native here).
WARN    := -Wall -Wextra -Wstrict-prototypes -Wmissing-prototypes -Wshadow \
           -Wformat=2 -Wno-unused-parameter
SRC_DIRS := lib bench workloads harness
INC_DIRS := $(sort $(shell find $(SRC_DIRS) -type d))
# Each layer's include path (the table above).
dirs_of   = $(sort $(shell find $(1) -type d))
INC_lib       := -Ilib -Ilib/settings
INC_workloads := $(INC_lib) -Iworkloads
INC_bench     := $(INC_workloads) $(addprefix -I,$(call dirs_of,bench)) -Iinclude
INC_harness   := $(INC_workloads) $(addprefix -I,$(filter-out harness/crash%,$(call dirs_of,harness)))
INC_crash     := $(INC_lib) -Ibench -Iharness/crash
INC_ALL       := $(addprefix -I,$(INC_DIRS)) -Iinclude
CFLAGS_ALL := -std=gnu11 -g $(OPT) $(WARN) -pthread -MMD -MP -D_GNU_SOURCE \
              $(SAN) $(CFLAGS)
ifeq ($(WERROR),1)
CFLAGS_ALL += -Werror
endif
# LDLIBS_BASE: what every layer may link; LDLIBS_ALL adds the transports'
# and back ends' libraries (RDMA, RocksDB, eRPC), for bench/ and harness/crash/.
LDLIBS_BASE := -ljansson -lpmem -lzstd -lz -lm -lpthread -ldl
LDLIBS_ALL := $(LDLIBS_BASE)

# Optional back ends, built only where their headers exist (fio's CONFIG_RDMA).
# VERBS_INC: where the verbs headers are (MLNX_OFED may install its own
# elsewhere: make VERBS_INC=DIR).  recv_mode mp needs MLNX_OFED's
# experimental verbs with multi-packet SRQ completions (4.6 or later).
VERBS_INC ?= /usr/include
HAVE_VERBS := $(if $(wildcard $(VERBS_INC)/infiniband/verbs.h),$(if $(wildcard $(VERBS_INC)/rdma/rdma_cma.h /usr/include/rdma/rdma_cma.h),1,0),0)
VERBS_EXP_H := $(wildcard $(VERBS_INC)/infiniband/verbs_exp.h)
HAVE_VERBS_EXP := $(if $(VERBS_EXP_H),$(shell grep -q IBV_EXP_WC_MP_WR_CONSUMED $(VERBS_EXP_H) && echo 1 || echo 0),0)
HAVE_GID_EX := $(shell grep -q ibv_query_gid_ex $(VERBS_INC)/infiniband/verbs.h 2>/dev/null && echo 1 || echo 0)
ifneq ($(VERBS_INC),/usr/include)
CFLAGS_ALL += -isystem $(VERBS_INC)
endif
ifeq ($(HAVE_VERBS),1)
CFLAGS_ALL += -DOQB_HAVE_VERBS=1 -DOQB_HAVE_VERBS_TRANSPORT=1 -DOQB_HAVE_GID_EX=$(HAVE_GID_EX)
LDLIBS_ALL += -lrdmacm -libverbs
endif
ifeq ($(HAVE_VERBS_EXP),1)
CFLAGS_ALL += -DOQB_HAVE_VERBS_EXP=1
else ifneq ($(VERBS_EXP_H),)
$(warning $(VERBS_EXP_H) has no multi-packet SRQ completions (MLNX_OFED 4.6 or later has them); recv_mode mp is left out of this build)
endif

# RocksDB (Debian's librocksdb-dev): the `rocksdb` back end is built only
# where its C API header exists; elsewhere it is a stub that says so.  The
# header's version macros are in a C++ header, so they are read here.
ROCKSDB_INC ?= /usr/include
HAVE_ROCKSDB := $(if $(wildcard $(ROCKSDB_INC)/rocksdb/c.h),1,0)
ifeq ($(HAVE_ROCKSDB),1)
ROCKSDB_HDR_VERSION := $(shell sed -n 's/^\#define ROCKSDB_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\).*/\2/p' \
                         $(ROCKSDB_INC)/rocksdb/version.h 2>/dev/null | paste -sd.)
CFLAGS_ALL += -DOQB_HAVE_ROCKSDB=1 -DOQB_ROCKSDB_HDR_VERSION='"$(ROCKSDB_HDR_VERSION)"'
ifneq ($(ROCKSDB_INC),/usr/include)
CFLAGS_ALL += -isystem $(ROCKSDB_INC)
endif
# only the binaries that call it (the server, its tests) load the library
LDLIBS_ALL += -Wl,--as-needed -lrocksdb -Wl,--no-as-needed
endif

VERBS_DIR := bench/transports/verbs
ALL_SRC  := $(sort $(shell find $(SRC_DIRS) -name '*.c'))

# ERPC_DIR: an eRPC checkout, built by its own README outside this
# repository with TRANSPORT=infiniband (ROCE=on for RoCE).  Only then is
# bench/transports/erpc/ built (system erpc; docs/erpc.md).  This project
# never contains eRPC's code or a recipe that builds it.
ERPC_SRC_DIR := bench/transports/erpc
ERPC_DIR ?=
ifneq ($(ERPC_DIR),)
ERPC_LIB := $(firstword $(wildcard $(ERPC_DIR)/build/liberpc.a $(ERPC_DIR)/liberpc.a $(ERPC_DIR)/build/liberpc.so))
ifeq ($(wildcard $(ERPC_DIR)/src/rpc.h),)
$(error ERPC_DIR=$(ERPC_DIR): no src/rpc.h there; point ERPC_DIR at an eRPC checkout (docs/erpc.md))
endif
ifeq ($(wildcard $(ERPC_DIR)/src/config.h),)
$(error ERPC_DIR=$(ERPC_DIR): no src/config.h: eRPC was not configured there; configure and build it as its README says, for its infiniband transport (docs/erpc.md))
endif
ifeq ($(ERPC_LIB),)
$(error ERPC_DIR=$(ERPC_DIR): no build/liberpc.a: build eRPC first, as its README says, for its infiniband transport with RoCE on for RoCE or Soft-RoCE (docs/erpc.md))
endif
ERPC_TRANSPORT := $(shell sed -n 's/^\#define CTransport //p' $(ERPC_DIR)/src/config.h)
ifneq ($(ERPC_TRANSPORT),IBTransport)
$(error ERPC_DIR=$(ERPC_DIR): eRPC was built for transport "$(ERPC_TRANSPORT)" (src/config.h) but the adapter needs IBTransport: rebuild eRPC for its infiniband transport, RoCE on for RoCE (its README; docs/erpc.md))
endif
ifneq ($(HAVE_VERBS),1)
$(error ERPC_DIR is set but the verbs headers are missing (eRPC's infiniband transport needs libibverbs-dev))
endif
ERPC_ROCE   := $(shell grep -q 'kIsRoCE = true' $(ERPC_DIR)/src/config.h && echo 1 || echo 0)
ERPC_COMMIT := $(shell git -C $(ERPC_DIR) rev-parse HEAD 2>/dev/null || echo none)
ERPC_DIRTY  := $(shell git -C $(ERPC_DIR) status --porcelain --untracked-files=no 2>/dev/null | grep -q . && echo 1 || echo 0)
ERPC_FLAGS  := $(shell sed -n 's/^CXX_FLAGS = //p' $(ERPC_DIR)/CMakeFiles/erpc.dir/flags.make 2>/dev/null)
ERPC_CXXFLAGS := -std=c++11 -g $(OPT) -Wall -Wextra $(if $(filter 1,$(WERROR)),-Werror) -pthread -DERPC_INFINIBAND=true \
                 -DERPC_LOG_LEVEL=2 -DERPC_TESTING=false -isystem $(ERPC_DIR)/src \
                 -isystem $(ERPC_DIR)/third_party -isystem $(ERPC_DIR)/third_party/asio/include $(INC_bench) -I$(O) $(SAN) \
                 -DOQB_ERPC_COMMIT='"$(ERPC_COMMIT)"' -DOQB_ERPC_DIRTY=$(ERPC_DIRTY) \
                 -DOQB_ERPC_ROCE=$(ERPC_ROCE) -DOQB_ERPC_FLAGS='"$(ERPC_FLAGS)"'
CFLAGS_ALL += -DOQB_HAVE_ERPC=1
LDLIBS_ALL += $(ERPC_LIB) -lnuma -libverbs -lstdc++
ERPC_OBJ := $(patsubst %.cc,$(O)/%.o,$(wildcard $(ERPC_SRC_DIR)/*.cc))
else
ALL_SRC  := $(filter-out $(ERPC_SRC_DIR)/%,$(ALL_SRC))
ERPC_OBJ :=
endif
ifneq ($(HAVE_VERBS),1)
ALL_SRC  := $(filter-out $(VERBS_DIR)/%,$(ALL_SRC))
endif
ifneq ($(HAVE_VERBS_EXP),1)
ALL_SRC  := $(filter-out $(VERBS_DIR)/%_exp.c,$(ALL_SRC))
endif
# The build id: one hash of every source, header and flag of this build,
# the same in every binary of it, so `oqb doctor` can tell that the
# binaries on a host are the driver's build (bench/buildinfo.c).  It lands
# in $(O)/buildid.h, rewritten only when it changes.
BUILD_ID := $(shell { cat $(sort $(shell find $(SRC_DIRS) include -name '*.[ch]' -o -name '*.cc')) Makefile; \
              printf '%s' '$(subst ','',$(CFLAGS_ALL))'; } | sha256sum | cut -c1-16)
# The flags go there too (quotes and backslashes dropped), for
# `oqb-server --build-info`.
BUILD_FLAGS := $(subst \,,$(subst ",,$(subst ',,$(CFLAGS_ALL))))
$(shell mkdir -p $(O) && printf '#define OQB_BUILD_ID "%s"\n#define OQB_BUILD_FLAGS "%s"\n' '$(BUILD_ID)' \
  '$(BUILD_FLAGS)' >$(O)/buildid.h.tmp && \
  { cmp -s $(O)/buildid.h.tmp $(O)/buildid.h && rm -f $(O)/buildid.h.tmp || mv -f $(O)/buildid.h.tmp $(O)/buildid.h; })

# The build's configuration: which optional parts it has (they depend on
# the headers installed: `make demo` installs fewer than `make test`), the
# compiler and every flag but -Werror (which changes no output).  It lands
# in $(O)/config.stamp, rewritten only when it changes, and every object
# depends on it, so a build whose configuration changed (headers installed
# since, another CC or CFLAGS) is rebuilt whole: a `make test` after a
# slim `make demo` never reuses binaries built without verbs
# (tests/integration/build-config.sh).
BUILD_CONFIG := CC=$(CC) HAVE_VERBS=$(HAVE_VERBS) HAVE_VERBS_EXP=$(HAVE_VERBS_EXP) HAVE_GID_EX=$(HAVE_GID_EX) \
  HAVE_ROCKSDB=$(HAVE_ROCKSDB) ROCKSDB_HDR_VERSION=$(ROCKSDB_HDR_VERSION) ERPC_DIR=$(ERPC_DIR) \
  CFLAGS_ALL=$(filter-out -Werror,$(CFLAGS_ALL)) LDLIBS_ALL=$(LDLIBS_ALL)
$(shell mkdir -p $(O) && printf '%s\n' '$(subst ','',$(BUILD_CONFIG))' | sed 's/ \([A-Z_]*=\)/\n\1/g' \
  >$(O)/config.stamp.tmp && { cmp -s $(O)/config.stamp.tmp $(O)/config.stamp && rm -f $(O)/config.stamp.tmp || \
  mv -f $(O)/config.stamp.tmp $(O)/config.stamp; })

MAIN_SRC := $(filter %_main.c,$(ALL_SRC))
LIB_SRC  := $(filter-out %_main.c,$(ALL_SRC))
LIB_OBJ  := $(LIB_SRC:%.c=$(O)/%.o)
MAIN_OBJ := $(MAIN_SRC:%.c=$(O)/%.o)
LIBA     := $(O)/liboqb.a
binname   = $(subst _,-,$(notdir $(patsubst %_main.c,%,$(1))))
BINS     := $(foreach m,$(MAIN_SRC),$(BIN)/$(call binname,$(m)))

# The layers: the sources of each, its objects compiled with its include
# path, its library, and the libraries a main of that layer links (its own
# first, the ones below after).
LAYERS := lib workloads bench crash harness
layer_of = $(if $(filter harness/crash/%,$(1)),crash,$(if $(filter harness/%,$(1)),harness,$(firstword $(subst /, ,$(1)))))
$(foreach l,$(LAYERS),$(eval SRC_$(l) := $(foreach f,$(ALL_SRC),$(if $(filter $(l),$(call layer_of,$(f))),$(f)))))
$(foreach l,$(LAYERS),$(eval LIBA_$(l) := $(O)/liboqb-$(l).a))
DEPS_lib       := lib
DEPS_workloads := workloads lib
DEPS_bench     := bench workloads lib
DEPS_crash     := crash bench workloads lib
DEPS_harness   := harness workloads lib
LDLIBS_lib       := $(LDLIBS_BASE)
LDLIBS_workloads := $(LDLIBS_BASE)
LDLIBS_bench     := $(LDLIBS_ALL)
LDLIBS_crash     := $(LDLIBS_ALL)
LDLIBS_harness   := $(LDLIBS_BASE)
$(foreach l,$(LAYERS),$(eval $(SRC_$(l):%.c=$(O)/%.o): LAYER_INC := $(INC_$(l))))
# bench/buildinfo.c reads $(O)/buildid.h (the build id and flags)
$(O)/bench/buildinfo.o: LAYER_INC += -I$(O)
$(O)/harness/oqb_main.o: LAYER_INC += -I$(O)

UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(O)/tests/%)

Q := @
ifeq ($(V),1)
Q :=
endif

.PHONY: all test test-long check deps deps-auto demo figures figures-onesided bench-onesided bench-tagger bench-tagger-verbs clean test-verbs test-erpc test-scale test-faults test-faults-rnr microbench bench print-includes \
        test-crash-rocksdb test-dead-hosts test-netem test-faults-verbs print-layer-includes
all: $(BINS) $(UNIT_BIN)

$(O)/%.o: %.c $(O)/config.stamp
	@mkdir -p $(dir $@)
	@echo "  CC    $<"
	$(Q)$(CC) $(CFLAGS_ALL) $(or $(LAYER_INC),$(INC_ALL)) -c -o $@ $<

$(O)/%.o: %.cc $(O)/config.stamp
	@mkdir -p $(dir $@)
	@echo "  CXX   $<"
	$(Q)g++ $(ERPC_CXXFLAGS) -MMD -MP -c -o $@ $<

$(LIBA): $(LIB_OBJ) $(ERPC_OBJ)
	@echo "  AR    $@"
	$(Q)rm -f $@ && ar rcs $@ $^

define layer_lib_rule
$(LIBA_$(1)): $(filter-out %_main.o,$(SRC_$(1):%.c=$(O)/%.o)) $(if $(filter bench,$(1)),$(ERPC_OBJ))
	@echo "  AR    $$@"
	$(Q)rm -f $$@ && ar rcs $$@ $$^
endef
$(foreach l,$(LAYERS),$(eval $(call layer_lib_rule,$(l))))

define bin_rule
$(BIN)/$(call binname,$(1)): $(O)/$(1:%.c=%.o) $(foreach d,$(DEPS_$(call layer_of,$(1))),$(LIBA_$(d)))
	@mkdir -p $(BIN)
	@echo "  LD    $$@"
	$(Q)$(CC) $(CFLAGS_ALL) -o $$@ $$^ $(LDLIBS_$(call layer_of,$(1)))
endef
$(foreach m,$(MAIN_SRC),$(eval $(call bin_rule,$(m))))

# Storage-engine plugins (docs/plugins.md): plugins/NAME/*.c against the
# public header alone (include/oqb_plugin.h), as an out-of-tree author
# builds one, into $(O)/plugins/NAME.so.
PLUGIN_DIRS := $(patsubst %/,%,$(sort $(dir $(wildcard plugins/*/*.c))))
PLUGIN_SOS  := $(PLUGIN_DIRS:plugins/%=$(O)/plugins/%.so)
all: $(PLUGIN_SOS)
define plugin_rule
$(O)/plugins/$(notdir $(1)).so: $(wildcard $(1)/*.c) include/oqb_plugin.h $(O)/config.stamp
	@mkdir -p $(O)/plugins
	@echo "  SO    $$@"
	$(Q)$(CC) -std=c11 -g $(OPT) $(WARN) $(if $(filter 1,$(WERROR)),-Werror) -fPIC -shared -Iinclude $(SAN) \
	  -o $$@ $(wildcard $(1)/*.c) -ljansson
endef
$(foreach d,$(PLUGIN_DIRS),$(eval $(call plugin_rule,$(d))))

$(O)/tests/%: tests/unit/%.c tests/unit/unit.h $(LIBA)
	@mkdir -p $(dir $@)
	@echo "  CC    $<"
	$(Q)$(CC) $(CFLAGS_ALL) $(INC_ALL) -I$(O) -Itests/unit -o $@ $< $(LIBA) $(LDLIBS_ALL)

deps:
	@harness/install-deps.sh

# What the packages are for (harness/install-deps.sh): every package,
# unless the target says less: `make demo` the shm demo's, `make test` and
# `make check` those of the test groups they run.
DEPS_FOR ?= all
deps-auto:
	@harness/install-deps.sh --if-missing $(DEPS_FOR)

# The build steps of the test targets use every CPU.
NPROC := $(shell nproc 2>/dev/null || echo 2)

# `make test` = build, then every test (unit, integration, verbs-in-VM)
# but the full-size and multi-VM runs of tests/long.list, which
# `make test-long` runs; CI (.ci/run) runs both.
test: DEPS_FOR = $(or $(TESTS),$(ERPC_TESTS))
test: deps-auto
	@$(MAKE) --no-print-directory -j$(NPROC) all
	@OQB_BIN=$(abspath $(BIN)) OQB_UNIT=$(abspath $(O)/tests) OQB_ERPC_DIR=$(ERPC_DIR) \
	  OQB_ERPC=$(if $(ERPC_DIR),1,0) tests/run-tests.sh $(or $(TESTS),$(ERPC_TESTS))

test-long: deps-auto
	@$(MAKE) --no-print-directory -j$(NPROC) all
	@OQB_BIN=$(abspath $(BIN)) OQB_UNIT=$(abspath $(O)/tests) tests/run-tests.sh long

# The default groups, plus the eRPC tests (config.sh always; run-erpc.sh
# runs in the VM with ERPC_DIR, and says skip without it).
ERPC_TESTS := unit integration verbs tests/erpc/config.sh tests/erpc/run-erpc.sh

# The eRPC adapter end to end in the Soft-RoCE VM (needs ERPC_DIR).
test-erpc: deps-auto
	@$(MAKE) --no-print-directory all
	@OQB_BIN=$(abspath $(BIN)) OQB_UNIT=$(abspath $(O)/tests) OQB_ERPC_DIR=$(ERPC_DIR) \
	  OQB_ERPC=$(if $(ERPC_DIR),1,0) tests/run-tests.sh tests/erpc/config.sh tests/erpc/run-erpc.sh

# Same tests under AddressSanitizer and UBSan, in a separate build tree.
check: DEPS_FOR = $(or $(TESTS),unit integration verbs)
check: deps-auto
	@$(MAKE) --no-print-directory O=build/san BIN=build/san/bin OPT=-O1 \
	  SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" all
	@ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
	  OQB_SANITIZE=1 OQB_BIN=$(abspath build/san/bin) OQB_UNIT=$(abspath build/san/tests) \
	  tests/run-tests.sh $(TESTS)

test-verbs: deps-auto
	@$(MAKE) --no-print-directory all
	@OQB_BIN=$(abspath $(BIN)) OQB_UNIT=$(abspath $(O)/tests) tests/run-tests.sh verbs

# The paper's testbed shape (docs/scale.md): over verbs in one Soft-RoCE VM,
# 8 client hosts x 24 threads x 18 workers reached over ssh as logical
# hosts: Fig 6's shape at 1, 2, 4 and 8 hosts (3,456 server QPs at 8, 144
# with delegation), Figs 7/8's config (16 workers, oq, rawrpc, deferred,
# Poisson) and durable oq, with histories checked (tests/verbs/run-scale.sh);
# the same shape on shm, and under a 9-node Slurm test cluster.  make
# test-long runs the verbs shape at 4 x 16 x 16 (1,024 QPs) and the other
# two as here.
SCALE_TESTS := tests/verbs/run-scale.sh tests/integration/scale-shm.sh tests/integration/slurm-scale.sh
test-scale: deps-auto
	@$(MAKE) --no-print-directory all
	@OQB_SCALE_HOSTS=8 OQB_SCALE_THREADS=24 OQB_SCALE_WORKERS=18 OQB_SCALE_VM_MB=4096 \
	  OQB_SCALE_PHASES="growth fig78 durable" \
	  OQB_SCALE_VM_TIMEOUT=2700 OQB_SCALE_RUN_S=1200 OQB_TEST_TIMEOUT=2800 \
	  OQB_BIN=$(abspath $(BIN)) OQB_UNIT=$(abspath $(O)/tests) tests/run-tests.sh $(SCALE_TESTS)

# A host lost in the middle of a point at the paper's shape (issue 39;
# docs/scale.md, "Dead hosts"): 8 client hosts x 24 threads, 18 workers,
# over ssh (one sshd per logical host on loopback) and under a 9-node Slurm
# test cluster; one client host, then the server's host, killed with
# everything on it (sshd or slurmd included), under each launcher.  make
# test runs a client host under ssh and the server's node under Slurm at
# 2 x 2 x 2.
DEAD_TESTS := tests/integration/dead-host-ssh.sh tests/integration/dead-host-slurm.sh
test-dead-hosts: deps-auto
	@$(MAKE) --no-print-directory all
	@DEAD_P=8 DEAD_TH=24 DEAD_W=18 DEAD_CASES="client server" DEAD_KILL_AFTER_S=15 OQB_TEST_TIMEOUT=1200 \
	  OQB_BIN=$(abspath $(BIN)) OQB_UNIT=$(abspath $(O)/tests) tests/run-tests.sh $(DEAD_TESTS)

# 1,000 kill -9 crashes of a durable oq server on the rocksdb backend, 0
# committed writes lost (configs/crashtest-rocksdb.json; make test runs 30
# in tests/integration/rocksdb.sh).  The report goes to build/.
test-crash-rocksdb: deps-auto
	@$(MAKE) --no-print-directory all
	@OQB_BIN=$(abspath $(BIN)) $(BIN)/oqb crashtest configs/crashtest-rocksdb.json --out $(O)/crash-rocksdb.json >/dev/null

# Wire faults at full count (issue 39; docs/verbs-vm.md, "Faults on the
# wire"): tc netem between two Soft-RoCE VMs -- the baseline, 0.1 %, 1 % and
# 5 % loss, reordering and delay, each an `oqb run` with its history checked
# and its retransmissions counted -- then a client cut off the wire with and
# without the test-only fault commit-on-error.  make test runs the baseline
# and 1 % only.  The runs, netem-latency.png and a summary stay in
# build/default/netem.  11-15 minutes under TCG.
test-netem: deps-auto
	@$(MAKE) --no-print-directory all
	@OQB_BIN=$(abspath $(BIN)) OQB_UNIT=$(abspath $(O)/tests) OQB_NETEM_FULL=1 OQB_NETEM_OUT=$(abspath $(O))/netem \
	  OQB_TEST_TIMEOUT=2700 tests/run-tests.sh tests/verbs/run-netem.sh

# Faults at full count (issue 39; docs/durability.md): the crash test and a
# checked run beside two CPU hogs with 200 crashes (make test runs 20), the
# crash test with writers stalled across the restarts at 200 (make test:
# 20), the crash tester itself killed 200 times at every point of its cycle
# (make test: 100), and 1,000 crashes of the durable server on rocksdb.
# About 35 minutes here.
# The verbs path's crash test at full count is test-faults-verbs (below).
test-faults: deps-auto
	@$(MAKE) --no-print-directory all
	@OQB_BIN=$(abspath $(BIN)) OQB_UNIT=$(abspath $(O)/tests) OVERLOAD_CRASHES=200 CRASH_STALL_N=200 CRASH_KILLS=200 \
	  OQB_TEST_TIMEOUT=1500 tests/run-tests.sh tests/integration/overload.sh tests/integration/crashtest.sh \
	  tests/integration/crashtest-killed.sh
	@OQB_BIN=$(abspath $(BIN)) $(BIN)/oqb crashtest configs/crashtest-rocksdb.json --out $(O)/crash-rocksdb.json >/dev/null && \
	  jq -e '.crashes_survived == 1000 and .commits_lost == 0' $(O)/crash-rocksdb.json >/dev/null && \
	  echo "ok rocksdb: 1,000 crashes, 0 commits lost ($(O)/crash-rocksdb.json)"

# Receiver not ready at full count (issue 39.4; docs/verbs.md, "Receiver
# not ready"): configs/rnr-verbs.json's six loads over verbs in one
# Soft-RoCE VM (RNR NAKs counted from the device, histories checked, the
# P99 past the onset against below it), and configs/rnr-shm.json's eight
# fractions of the knee on shm (ring full waits).  make test runs two
# points of each (tests/verbs/guest-rnr.sh through run-guests.sh, tests/integration/ring-full.sh).
test-faults-rnr: deps-auto
	@$(MAKE) --no-print-directory all
	@OQB_BIN=$(abspath $(BIN)) OQB_UNIT=$(abspath $(O)/tests) RNR_LOADS=config RING_FULL_FRACTIONS=config OQB_GUESTS=rnr \
	  tests/run-tests.sh tests/verbs/run-guests.sh tests/integration/ring-full.sh

# The crash test on the verbs path at full count (issue 39.2;
# docs/durability.md): in one Soft-RoCE VM, 200 SIGKILLs of a durable verbs
# server under load for each of oq and deferred with delegation off and on,
# 200 on the rocksdb backend, and the negative control (recovery skipped,
# 20 crashes, must lose commits); every committed put checked after every
# restart, 0 lost.  make test runs 2 per combination (tests/verbs/run-crash.sh).
# The reports and server logs go to build/default/crash-verbs/.  Under TCG on
# 2 cores a crash cycle took 3-6 s (pmkv) and 8.5 s (rocksdb, whose reopen
# replays its log) at load 4-7, 6-9 s and 10-50 s at load 10-60: about 1.5 h
# on a quiet host, more on a busy one, so the VM's limit is 6 h.  CRASH_VERBS_N=, CRASH_VERBS_ROCKSDB= and CRASH_VERBS_NEG=
# on the make command line run fewer.
test-faults-verbs: deps-auto
	@$(MAKE) --no-print-directory all
	@CRASH_VERBS_N=$(or $(CRASH_VERBS_N),200) CRASH_VERBS_ROCKSDB=$(or $(CRASH_VERBS_ROCKSDB),200) \
	  CRASH_VERBS_NEG=$(or $(CRASH_VERBS_NEG),20) CRASH_VERBS_OUT=$(abspath $(O))/crash-verbs \
	  OQB_CRASH_VM_TIMEOUT=$(or $(OQB_CRASH_VM_TIMEOUT),21600) OQB_TEST_TIMEOUT=$(or $(OQB_TEST_TIMEOUT),21700) \
	  OQB_BIN=$(abspath $(BIN)) OQB_UNIT=$(abspath $(O)/tests) tests/run-tests.sh tests/verbs/run-crash.sh

# The include flags, for test programs built outside this Makefile
# (tests/verbs/run-verbs.sh builds vtest.c with them).
print-includes:
	@echo $(INC_ALL)

# One layer's include flags (LAYER=harness ...), for tests/integration/rooms.sh.
print-layer-includes:
	@echo $(INC_$(LAYER))

microbench: all
	@$(BIN)/oqb-microbench

# Instructions per request of client, worker and hist_record (callgrind),
# against the gate in results/baselines/icount.json (bench/icount.sh).
bench: all
	@OQB_BIN=$(abspath $(BIN)) bench/icount.sh --check results/baselines/icount.json; rc=$$?; \
	  if [ $$rc = 3 ]; then OQB_BIN=$(abspath $(BIN)) bench/icount.sh; else exit $$rc; fi

demo: DEPS_FOR = demo
demo: deps-auto
	@$(MAKE) --no-print-directory -j$(NPROC) all
	@harness/demo.sh

# Every paper figure at a quick scale on this machine, then the report
# (harness/figures/figures.sh, docs/figures.md); the last line is its index.html.
figures: deps-auto
	@$(MAKE) --no-print-directory all
	@OQB_BIN=$(BIN) harness/figures/figures.sh

# The one-sided designs beside OQ (issue 52; docs/figures.md, "One-sided
# writes"): configs/onesided-verbs.json in the Soft-RoCE VM, then the
# report with the figure labelled by the checker's verdicts and the claim
# rows (harness/figures/onesided.sh); the last line is its index.html.
figures-onesided: deps-auto
	@$(MAKE) --no-print-directory all
	@OQB_BIN=$(BIN) harness/figures/onesided.sh

# The commit latency of seqwrite and write1 against oq's in one boot of the
# Soft-RoCE VM, 5 runs each, with ib_write_lat and ib_atomic_lat for scale
# (bench/onesided-lat.sh; docs/systems.md, "Measured"): a benchmark that
# reports its targets, failing only when a measurement could not be taken.
bench-onesided: deps-auto
	@$(MAKE) --no-print-directory all
	@tests/vm/rxe-vm -t $(or $(ONESIDED_LAT_VM_TIMEOUT),1200) -e OQB_BIN=$(abspath $(BIN)) \
	  $(if $(RUNS),-e RUNS=$(RUNS)) -- bash bench/onesided-lat.sh

# The host-stall tagger against injected stalls and system-made delays
# (bench/tagger-validate.sh; docs/trust.md, "Validating the tagger"): on
# shm here, and on verbs in the Soft-RoCE VM.  Root; a quiet machine.
bench-tagger: all
	@bash bench/tagger-validate.sh $(PAIRS)

bench-tagger-verbs: deps-auto
	@$(MAKE) --no-print-directory all
	@tests/vm/rxe-vm -t $(or $(TAGGER_VM_TIMEOUT),1500) -e OQB_BIN=$(abspath $(BIN)) -e TRANSPORT=verbs \
	  -- bash bench/tagger-validate.sh $(PAIRS)

clean:
	rm -rf build bin

-include $(shell find build -name '*.d' 2>/dev/null)

# ---------------------------------------------------------------- fuzz
# Fuzzing (tests/fuzz/README.md).  Each tests/fuzz/fuzz_NAME.c is one
# libFuzzer target over one parser.
#  - `make` also links each target with tests/fuzz/replay_main.c into
#    $(O)/tests/fuzz-replay-NAME (this compiler, these flags), and builds
#    $(O)/tests/bad-input-probe; tests/integration/fuzz-corpus.sh and
#    bad-input.sh run them in `make test`: no fuzzer needed there.
#  - `make fuzz` builds the targets with clang and libFuzzer in build/fuzz/
#    and runs each FUZZ_SECONDS on its corpus (tests/fuzz/run-fuzz.sh);
#    what it finds goes to build/fuzz/, never into the repository.
FUZZ_CC      ?= clang-14
FUZZ_SECONDS ?= 60
FUZZ_SRC     := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_TARGETS ?= $(patsubst tests/fuzz/fuzz_%.c,%,$(FUZZ_SRC))
FUZZ_SAN     := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined

.PHONY: fuzz fuzz-build
all: $(patsubst tests/fuzz/fuzz_%.c,$(O)/tests/fuzz-replay-%,$(FUZZ_SRC)) $(O)/tests/bad-input-probe

$(O)/tests/fuzz-replay-%: tests/fuzz/fuzz_%.c tests/fuzz/replay_main.c tests/fuzz/fuzz.h $(LIBA)
	@mkdir -p $(dir $@)
	@echo "  CC    $<"
	$(Q)$(CC) $(CFLAGS_ALL) $(INC_ALL) -Itests/fuzz -DFUZZ_NAME='"$*"' -o $@ $< tests/fuzz/replay_main.c \
	  $(LIBA) $(LDLIBS_ALL)

$(O)/tests/bad-input-probe: tests/bad-input/probe.c $(LIBA)
	@mkdir -p $(dir $@)
	@echo "  CC    $<"
	$(Q)$(CC) $(CFLAGS_ALL) $(INC_ALL) -o $@ $< $(LIBA) $(LDLIBS_ALL)

# Used with O=build/fuzz by fuzz-build: the library has coverage hooks.
$(O)/fuzz-%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $(LIBA)
	@echo "  FUZZ  $@"
	$(Q)$(CC) $(CFLAGS_ALL) $(INC_ALL) -fsanitize=fuzzer -Itests/fuzz -o $@ $< $(LIBA) $(LDLIBS_ALL)

fuzz-build:
	@$(MAKE) --no-print-directory O=build/fuzz CC=$(FUZZ_CC) OPT=-O1 WERROR=0 \
	  SAN="-fsanitize=fuzzer-no-link $(FUZZ_SAN)" CFLAGS=-Wno-missing-field-initializers \
	  $(FUZZ_TARGETS:%=build/fuzz/fuzz-%)

fuzz: fuzz-build
	@tests/fuzz/run-fuzz.sh build/fuzz $(FUZZ_SECONDS) $(FUZZ_TARGETS)
