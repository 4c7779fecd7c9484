// Zero-copy interoperation on CUDA: pinned host arrays, asynchronous host<->device copies, stream
// handshakes for DLPack / __cuda_array_interface__, and record_stream. No CUDA header needed.
#pragma once

#include <cstdint>

#include "ember/array.hpp"
#include "ember/cuda.hpp"

namespace ember::cuda {

// A CPU array whose storage is page-locked host memory (cuMemHostAlloc, portable to every
// context; freed with cuMemFreeHost when the last array on it dies). ValueError without CUDA.
Array pinned_empty(const Shape& shape, DType dtype);
// True when `a`'s storage came from pinned_empty (or a non_blocking copy to the CPU).
bool is_pinned(const Array& a);

// a.to(device), asynchronous where memory allows: a contiguous pinned CPU array goes to a CUDA
// device with one cuMemcpyHtoDAsync on the current stream and a CUDA array comes back into a new
// pinned array with one cuMemcpyDtoHAsync, neither waiting for the host (synchronize the stream
// or record an Event before reading the result on the host). Both arrays are kept alive until the
// copy has run. Every other case is a.to(device).
Array to_non_blocking(const Array& a, Device device);

// The current stream of `device` (-1: the current device) as an integer handle.
uintptr_t current_stream_handle(int device = -1);
// Makes stream `consumer` (a CUstream handle; 1 and 2 are the legacy and per-thread default
// streams) wait, through an event, for the work queued so far on the current stream of `device`.
// No-op when they are the same stream.
void consumer_wait_current(int device, uintptr_t consumer);
// The converse: the current stream of `device` waits for the work queued so far on `producer`.
void current_wait_producer(int device, uintptr_t producer);

// The CUDA device whose memory `ptr` points into (cuPointerGetAttribute), or -1 when the driver
// does not know the pointer.
int pointer_device(uintptr_t ptr);

// Releases `owner` (the owner of foreign CUDA memory an array wrapped) once the work queued so far
// on the current stream of `device` has run, so a producer's allocator cannot hand the memory out
// while ember's kernels still use it. Never throws.
void release_after_current_work(int device, std::shared_ptr<void> owner) noexcept;
// Releases what finished non-blocking copies and release_after_current_work kept alive (also done
// on each later non-blocking copy).
void retire_finished_work();

// Marks a's memory as used by work on `s`: when the memory is freed, its reuse waits for the work
// queued on `s` by then (record_stream in PyTorch). No-op for CPU arrays and foreign memory.
void record_stream(const Array& a, const Stream& s);
// The same for a raw CUstream handle (1, 2: the legacy and per-thread default streams), which
// must outlive the array's memory.
void record_stream_handle(const Array& a, uintptr_t stream);

}  // namespace ember::cuda
