// What the kernel-family generators under src/backend/cuda/codegen share: the limits of the
// by-value geometries and the assembly of a one-kernel NVRTC program from the device headers.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "backend/cuda/cuda_types.hpp"
#include "backend/cuda/nvrtc.hpp"

namespace ember::gpu {

// Most collapsed dimensions a strided kernel handles; the host splits deeper loops into
// launches over the outer dimensions.
inline constexpr int max_strided_dims = 8;
inline constexpr int max_map_operands = 4;  // output + up to three inputs

// A header a program includes by name after the device prelude and scalar.hpp: (name, text).
using ProgramHeader = std::pair<std::string, std::string>;

// One kernel's translation unit: the generated-by line, EMBER_DEVICE_COMPLEX when `cplx`, the
// includes of the device prelude, scalar.hpp and `extra`, then `text`; the headers in memory.
Program single_program(std::string kernel_name, std::string text, bool cplx,
                       std::vector<ProgramHeader> extra = {});

// An embedded .cuh file as a program pastes it: the text after its leading `//` lines (they
// describe the file to its readers, not the program), each @KEY@ of `fills` replaced. Throws
// std::logic_error when a key is absent or a placeholder is left unfilled.
using DeviceTextFill = std::pair<std::string_view, std::string>;
std::string paste_device_text(std::string_view cuh,
                              std::initializer_list<DeviceTextFill> fills = {});

}  // namespace ember::gpu
