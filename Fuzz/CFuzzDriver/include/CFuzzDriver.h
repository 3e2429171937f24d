#ifndef CASTD_CFUZZDRIVER_H
#define CASTD_CFUZZDRIVER_H

#include <stddef.h>
#include <stdint.h>

/// Whether libFuzzer's driver is linked into this executable. A fuzz build links it
/// (scripts/fuzz.sh: libclang_rt.fuzzer_no_main with `-u LLVMFuzzerRunDriver`); every other build
/// does not, and the executable replays its arguments instead.
int castd_fuzz_driver_linked(void);

/// Runs libFuzzer on `callback`; only when castd_fuzz_driver_linked().
int castd_fuzz_run_driver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
