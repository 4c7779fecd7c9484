// Map kernels for op-table rows 0 mod 4.
#define EMBER_MAP_PART 0
#include "backend/cpu/map_kernels.inc"
