# Entry points; the scripts do the work.
#
#   make test          the whole test suite (scripts/test.sh), what CI runs
#   make format        format the Swift sources with the toolchain's swift-format (.swift-format);
#                      make format-check fails on what it would change, as CI does
#   make release       release builds of castd, castc, cast-emulator, cast-mpris and castd-bench
#   make bench         benchmarks → BENCHMARKS.md (scripts/bench.sh; release build included)
#   make bench-quick   a smoke run of the benchmarks → .build/BENCHMARKS-quick.md
#   make soak          the soak test → SOAK.md (scripts/soak.sh; release build included); fails
#                      when a criterion fails
#   make soak-quick    a smoke run of the soak → .build/SOAK-quick.md
#   make fuzz          each fuzz target for FUZZ_SECONDS (default 60), or only FUZZ_TARGETS
#                      (make fuzz FUZZ_SECONDS=600 FUZZ_TARGETS=CastTXTFuzzer; scripts/fuzz.sh)
#
# castc's release build links the Swift runtime statically: that is a setting of the castc
# target in Package.swift (release only), so plain `swift build -c release` does it too.

# One product at a time: a bare `swift build -c release` also builds every target of every
# dependency, swift-protobuf's protoc (C++) among them.
PRODUCTS := castd castc cast-emulator cast-mpris castd-bench

FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?=

FORMATTED := Sources Tests Fuzz Examples Package.swift

.PHONY: test format format-check release bench bench-quick soak soak-quick fuzz

test:
	scripts/test.sh

format:
	swift format format --in-place --recursive --parallel $(FORMATTED)

format-check:
	swift format lint --strict --recursive --parallel $(FORMATTED)

release:
	@for product in $(PRODUCTS); do \
		echo "swift build -c release --product $$product"; \
		swift build -c release --product $$product || exit 1; \
	done

bench:
	scripts/bench.sh

bench-quick:
	scripts/bench.sh --quick

soak:
	scripts/soak.sh

soak-quick:
	scripts/soak.sh --quick

fuzz:
	scripts/fuzz.sh $(FUZZ_SECONDS) $(FUZZ_TARGETS)
