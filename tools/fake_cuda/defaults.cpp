// Weak do-nothing definitions (returning 0, CUDA_SUCCESS) of every driver entry point ember
// resolves (loader.hpp's list); driver.cpp overrides the ones whose outputs ember reads.
#include "backend/cuda/loader.hpp"

using namespace ember::gpu;

#define EMBER_FAKE_DEFAULT(member, symbol, ret, params)     \
    extern "C" __attribute__((weak, visibility("default"))) \
    ret fake_##member params __asm__(symbol);               \
    extern "C" ret fake_##member params { return ret{}; }
EMBER_DRIVER_SYMBOLS(EMBER_FAKE_DEFAULT)
