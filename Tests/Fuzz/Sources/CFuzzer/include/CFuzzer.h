#ifndef CFUZZER_H
#define CFUZZER_H
#include <stddef.h>
#include <stdint.h>
/* libFuzzer's driver for programs with their own main (the fuzzer runtime linked by -sanitize=fuzzer). */
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));
#endif
