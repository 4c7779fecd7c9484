// ember::build_info: the compiler of this build, and what each backend reports it loaded.
#include "ember/build_info.hpp"

namespace ember {

BuildInfo build_info() {
    BuildInfo b;
#if defined(__clang__)
    b.compiler = "clang " __clang_version__;
#elif defined(__GNUC__)
    b.compiler = "gcc " __VERSION__;
#else
    b.compiler = "unknown";
#endif
    b.cxx_standard = long(__cplusplus);
    b.host = host_libraries();
    b.cuda = cuda_libraries();
    return b;
}

}  // namespace ember
