// The CPU backend's FFT family (src/backend/cpu/fft.cpp): the registered host FFT.
#pragma once

#include "backend/backend.hpp"

namespace ember::host {

// Runs the call on the host FFT registered with ember::set_host_fft; Error when there is none.
void fft(const backend::FftCall& call);

}  // namespace ember::host
