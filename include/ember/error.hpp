// ember's exception hierarchy; the Python bindings map each class to the matching builtin.
#pragma once

#include <stdexcept>
#include <string>

namespace ember {

class Error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

class ValueError : public Error {
public:
    using Error::Error;
};
class TypeError : public Error {
public:
    using Error::Error;
};
class IndexError : public Error {
public:
    using Error::Error;
};
class OverflowError : public Error {
public:
    using Error::Error;
};
class MemoryError : public Error {
public:
    using Error::Error;
};
// The GPU ran out of memory after the pool was trimmed and the allocation retried; a MemoryError
// (Python: ember.cuda.OutOfMemoryError).
class OutOfMemoryError : public MemoryError {
public:
    using MemoryError::MemoryError;
};
// A CUDA driver call or a kernel failed; what() names the driver's error (ember.cuda.CudaError).
class CudaError : public Error {
public:
    using Error::Error;
};
// A generated or user kernel failed to compile; what() holds the numbered source and the NVRTC
// log (ember.CompileError).
class CompileError : public Error {
public:
    using Error::Error;
};
// An axis out of range: a ValueError and an IndexError at once, like numpy.exceptions.AxisError.
class AxisError : public ValueError {
public:
    using ValueError::ValueError;
};

}  // namespace ember
