# Thin wrapper over CMake/ctest. The real build is CMakeLists.txt.
#   make [build]   install missing build packages, configure and build into build/
#   make demo      check the build dependencies and samtools (scripts/check-deps.sh: apt
#                  only for what is missing, only as root), build, run a pileup on demo/,
#                  show the output and compare it with samtools mpileup's
#   make test      test packages + build + ctest, then the same tests under ASan/UBSan; at
#                  the end of each pass, the tests skipped and why (not root: the Slurm
#                  cluster and full-disk cases; as another user it installs nothing)
#   make bench     bench/run-all.sh
#   make test-long the whole genomes and the longest sweeps, which make test leaves out
#   make soak      the long differential passes (scripts/soak.sh): ssdiff on 100 million
#                  cases, the whole-tool fuzzer, the whole genomes; SOAK_SEED, SOAK_CASES,
#                  SOAK_ROUNDS
#   make format    clang-format 14 over every C file in place (format-check: only report;
#                  make test runs it first, and skips it with a message without clang-format)
#   make clean     remove build folders and demo output
# Variables: BUILD, ASAN_BUILD, JOBS, CMAKE_ARGS (extra configure arguments for build/),
#   ASAN_CMAKE_ARGS, ASAN_CTEST_ARGS (e.g. ASAN_CTEST_ARGS='-L unit'), CTEST_ARGS.

BUILD ?= build
ASAN_BUILD ?= build-asan
JOBS ?= 2
CMAKE_ARGS ?=
# make test leaves the whole genomes and the longest sweeps (label long) to make test-long.
CTEST_ARGS ?= -LE long
# The sanitizer pass builds without MPI: that keeps the no-MPI build (one process, no
# mpirun) under CI too, and keeps LeakSanitizer free of Open MPI's exit-time allocations,
# so every leak it reports is ours. `make test ASAN_CMAKE_ARGS=-DSEQSHARD_MPI=ON` sanitizes the MPI
# build instead (its leak suppressions are in tests/CMakeLists.txt).
ASAN_CMAKE_ARGS ?= -DSEQSHARD_MPI=OFF
# The sanitizer pass of make test: the unit tests and the short integration tests that
# drive every input path; make test-long adds the long ones (ASAN_LONG_TESTS) under the
# sanitizers, so CI runs each of them there once.
ASAN_CTEST_ARGS ?= -R "^(test_|make_testdata|integration_pileup_quick|integration_pileup_errors|integration_input_checks|integration_stdin_input|integration_report_fields|integration_messages|integration_run_files|integration_nompi_launcher|integration_option_grammar|integration_mpileup_errors)"
ASAN_LONG_TESTS ?= -R "^(make_testdata|integration_view_vs_samtools|integration_fuzz_readers|integration_view_samtools_opts|integration_shard_spill|integration_resume|integration_realign|integration_pileup_realign_edges|integration_pileup_past_end)"
# The test data is made once, in the normal build, and shared with the sanitizer pass.
TESTDATA = $(abspath $(BUILD))/testdata

DEMO_INPUTS = demo/ref.fa demo/ref.fa.fai demo/demo.bam demo/demo.bam.bai

.PHONY: all build deps test-deps compile demo test test-long asan clean bench soak format
.PHONY: format-check

all: build

build: deps
	@$(MAKE) --no-print-directory compile

deps:
	bash scripts/install-deps.sh

test-deps:
	bash scripts/install-deps.sh --test

# Configure and build, without the package check.
compile:
	cmake -S . -B $(BUILD) $(CMAKE_ARGS)
	cmake --build $(BUILD) -j$(JOBS)

demo:
	@missing=""; for f in $(DEMO_INPUTS); do [ -f "$$f" ] || missing="$$missing $$f"; done; \
	if [ -n "$$missing" ]; then \
		echo "make demo: demo data missing:$$missing; it is made by the demo data script" \
		     "(see demo/ or docs/), then run make demo again" >&2; \
		exit 1; \
	fi
	@# what the build needs, checked with pkg-config and CMake; apt installs only what is
	@# missing, and only as root; elsewhere it says what is missing and the build goes on
	@# without what is optional (MPI, tcmalloc, the tests)
	@fallback=$$(bash scripts/check-deps.sh --cmake-args) || \
		echo "make demo: a required build dependency is missing (above); trying anyway" >&2; \
	cmake -S . -B $(BUILD) $(CMAKE_ARGS) $$fallback && cmake --build $(BUILD) -j$(JOBS)
	@mkdir -p demo-out
	$(BUILD)/seqshard pileup -f demo/ref.fa -o demo-out/demo.pileup demo/demo.bam
	@echo "demo output: $(CURDIR)/demo-out/demo.pileup ($$(wc -l < demo-out/demo.pileup) lines); first lines:"
	@head -3 demo-out/demo.pileup
	@# the same bytes as samtools mpileup, when samtools is there to ask
	@if command -v samtools >/dev/null 2>&1; then \
		samtools mpileup -f demo/ref.fa demo/demo.bam 2>/dev/null >demo-out/samtools.pileup; \
		if cmp -s demo-out/demo.pileup demo-out/samtools.pileup; then \
			echo "demo: identical to 'samtools mpileup -f demo/ref.fa demo/demo.bam'" \
			     "($$(samtools --version | head -1))"; \
		else \
			echo "demo: DIFFERS from samtools mpileup (demo-out/samtools.pileup)" >&2; exit 1; \
		fi; \
	else \
		echo "demo: NOT compared with samtools mpileup: samtools is missing and was not" \
		     "installed (that needs root); apt-get install samtools, then make demo again" >&2; \
	fi

# ctest, then what it skipped and why (scripts/test-summary.py reads its JUnit file);
# the status is ctest's. $(1): the build folder, $(2): ctest's arguments, $(3): variables
# set for ctest (and the tests).
define run_ctest
	@rm -f $(1)/ctest-results.xml; rc=0; $(3) ctest --test-dir $(1) --output-on-failure -j$(JOBS) \
		--output-junit ctest-results.xml $(2) || rc=$$?; \
	python3 scripts/test-summary.py $(1)/ctest-results.xml || true; \
	exit $$rc
endef

test: test-deps
	bash scripts/format.sh --check --or-skip
	@$(MAKE) --no-print-directory compile
	$(call run_ctest,$(BUILD),$(CTEST_ARGS))
	@$(MAKE) --no-print-directory asan

# The sanitizer pass alone (expects the packages installed).
asan:
	cmake -S . -B $(ASAN_BUILD) -DSEQSHARD_SANITIZE=ON -DSEQSHARD_ALLOCATOR=glibc \
		-DSEQSHARD_TESTDATA_DIR=$(TESTDATA) $(ASAN_CMAKE_ARGS)
	cmake --build $(ASAN_BUILD) -j$(JOBS)
	$(call run_ctest,$(ASAN_BUILD),$(ASAN_CTEST_ARGS))

# The tests make test leaves out (label long: the whole genomes, tests/integration/
# genomes_*.sh, and the longest sweeps); CI runs them after make test.
# Then the tests of label sweep again with every layout of their lists (SS_SWEEP=full:
# make test runs each case at one), and the long sanitizer pass.
test-long: test-deps
	@$(MAKE) --no-print-directory compile
	$(call run_ctest,$(BUILD),-L long)
	$(call run_ctest,$(BUILD),-L sweep -LE long,SS_SWEEP=full)
	@$(MAKE) --no-print-directory asan ASAN_CTEST_ARGS='$(ASAN_LONG_TESTS)'

soak: build
	BUILD=$(BUILD) bash scripts/soak.sh

bench: build
	@if [ -f bench/run-all.sh ]; then \
		bash bench/run-all.sh; \
	else \
		echo "make bench: bench/run-all.sh does not exist yet; nothing to run"; \
	fi

# Every C file in the repository (scripts/format.sh lists them), with clang-format 14.
format:
	bash scripts/format.sh

format-check:
	bash scripts/format.sh --check

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) demo-out
