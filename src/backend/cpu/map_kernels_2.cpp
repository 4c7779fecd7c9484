// Map kernels for op-table rows 2 mod 4.
#define EMBER_MAP_PART 2
#include "backend/cpu/map_kernels.inc"
