#include "CFuzzDriver.h"

// Weak: an undefined weak symbol is null, and it does not make the linker take libFuzzer from an
// archive; a fuzz build asks for it by name (-u).
extern int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *, size_t))
    __attribute__((weak));

int castd_fuzz_driver_linked(void) { return LLVMFuzzerRunDriver != NULL; }

int castd_fuzz_run_driver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size)) {
    return LLVMFuzzerRunDriver(argc, argv, callback);
}
