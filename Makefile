# Developer entry points; scripts/ holds the real work.
.PHONY: fuzz

FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?=

# Each fuzz target for FUZZ_SECONDS (make fuzz FUZZ_SECONDS=600 FUZZ_TARGETS=CastTXTFuzzer).
fuzz:
	scripts/fuzz.sh $(FUZZ_SECONDS) $(FUZZ_TARGETS)
