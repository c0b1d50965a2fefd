// libFuzzer's entry point for a program with a main of its own (libFuzzer 11 and later).
#include <stddef.h>
#include <stdint.h>
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));
