// Writes the shipped kernel packs at package build time (CMake's EMBER_SHIP_ARCHS): the common
// kernels compiled by NVRTC for each architecture, one sm_<arch>.pack each. No GPU needed.
//     ember_pack OUT_DIR ARCH [ARCH...]
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "ember/cuda.hpp"

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s OUT_DIR ARCH [ARCH...]\n", argv[0]);
        return 2;
    }
    try {
        for (int i = 2; i < argc; ++i) {
            const int arch = std::atoi(argv[i]);
            const std::string path = std::string(argv[1]) + "/sm_" + argv[i] + ".pack";
            const ember::cuda::PrecompileStats s = ember::cuda::write_kernel_pack(path, arch);
            std::printf(
                "ember_pack: %s: %llu kernels (%llu compiled, %llu from the disk cache) in "
                "%.1f s\n",
                path.c_str(), static_cast<unsigned long long>(s.kernels),
                static_cast<unsigned long long>(s.compiled),
                static_cast<unsigned long long>(s.cached), s.seconds);
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "ember_pack: %s\n", e.what());
        return 1;
    }
    return 0;
}
