// Map kernels for op-table rows 1 mod 4.
#define EMBER_MAP_PART 1
#include "backend/cpu/map_kernels.inc"
