// Map kernels for op-table rows 3 mod 4.
#define EMBER_MAP_PART 3
#include "backend/cpu/map_kernels.inc"
