// ember::cuda::Graph (include/ember/cuda.hpp): stream capture into a CUDA graph, its private
// memory pool (runtime.hpp, GraphPool) and replay.
#include <optional>

#include "backend/backend.hpp"
#include "backend/cuda/runtime.hpp"
#include "ember/cuda.hpp"
#include "ember/error.hpp"

namespace ember::cuda {

using namespace ember::gpu;

struct Graph::Impl {
    int device = -1;
    std::optional<Stream> stream;  // the capture stream
    CUstream prev = nullptr;       // the thread's current stream before the capture
    GraphPool* pool = nullptr;
    CUgraph graph = nullptr;
    CUgraphExec exec = nullptr;
    CUevent done = nullptr;  // recorded after each replay: reset waits for it
    bool capturing = false;
};

Graph::Graph() : impl_(std::make_unique<Impl>()) {}
Graph::~Graph() { reset(); }

namespace {

DeviceState& usable(int device, const char* who) {
    if (!backend::cuda())
        throw ValueError(std::string(who) +
                         ": CUDA is not available: " + backend::cuda_unavailable_reason());
    return gpu::device(device < 0 ? gpu::current_device() : device);
}

// Ends the capture state of the calling thread: no pool, the earlier current stream.
void leave_capture(DeviceState& d, CUstream prev) {
    set_capturing_pool(nullptr);
    gpu::set_current_stream(d.index, prev == d.stream ? nullptr : prev);
}

}  // namespace

void Graph::capture_begin(int device, const Stream* stream) {
    const char* who = "ember.cuda.CUDAGraph.capture_begin";
    if (impl_->capturing) throw ValueError(std::string(who) + ": this graph is already capturing");
    if (capturing_pool())
        throw ValueError(std::string(who) +
                         ": this thread is already capturing another graph (captures do not nest)");
    DeviceState& d = usable(stream ? stream->device() : device, who);
    reset();
    bind(d);
    Stream s = stream ? *stream : Stream::create(d.index);
    const CUstream cs = static_cast<CUstream>(s.handle());
    if (cs == d.stream)
        throw ValueError(std::string(who) +
                         ": cannot capture on ember's default stream (other work would be "
                         "captured with it); pass stream=None for a capture stream of its own");
    auto* pool = new GraphPool;
    pool->device = d.index;
    pool->stream = cs;
    // Relaxed mode: the graph's own memory comes from cuMemAlloc, which the stricter modes forbid.
    if (const CUresult r = api().cuStreamBeginCapture(cs, CU_STREAM_CAPTURE_MODE_RELAXED);
        r != CUDA_SUCCESS) {
        delete pool;
        raise(r, "cuStreamBeginCapture");
    }
    impl_->device = d.index;
    impl_->stream = s;
    impl_->pool = pool;
    impl_->prev = current_stream(d);
    impl_->capturing = true;
    set_capturing_pool(pool);
    gpu::set_current_stream(d.index, cs);
}

void Graph::capture_end() {
    const char* who = "ember.cuda.CUDAGraph.capture_end";
    if (!impl_->capturing) throw ValueError(std::string(who) + ": the graph is not capturing");
    if (capturing_pool() != impl_->pool)
        throw ValueError(std::string(who) + ": call it on the thread that began the capture");
    DeviceState& d = gpu::device(impl_->device);
    bind(d);
    leave_capture(d, impl_->prev);
    impl_->capturing = false;
    const DriverApi& a = api();
    CUgraph g = nullptr;
    CUresult r = a.cuStreamEndCapture(static_cast<CUstream>(impl_->stream->handle()), &g);
    if (r == CUDA_SUCCESS) {
        impl_->graph = g;
        r = a.cuGraphInstantiateWithFlags(&impl_->exec, g, 0);
        if (r == CUDA_SUCCESS) r = a.cuEventCreate(&impl_->done, CU_EVENT_DISABLE_TIMING);
    }
    if (r != CUDA_SUCCESS) {
        reset();
        raise(r,
              "ending the CUDA graph capture (an operation in it is not allowed while "
              "capturing)");
    }
}

void Graph::capture_abort() noexcept {
    if (!impl_->capturing) return;
    DeviceState& d = gpu::device(impl_->device);
    if (capturing_pool() == impl_->pool) leave_capture(d, impl_->prev);
    impl_->capturing = false;
    if (bind_noexcept(d)) {
        CUgraph g = nullptr;
        driver()->cuStreamEndCapture(static_cast<CUstream>(impl_->stream->handle()), &g);
        if (g) driver()->cuGraphDestroy(g);
    }
    reset();
}

void Graph::replay() {
    if (!impl_->exec)
        throw ValueError(impl_->capturing
                             ? "ember.cuda.CUDAGraph.replay: the graph is still capturing"
                             : "ember.cuda.CUDAGraph.replay: nothing has been captured");
    DeviceState& d = gpu::device(impl_->device);
    bind(d);
    const DriverApi& a = *driver();
    const CUstream s = current_stream(d);
    check(a.cuGraphLaunch(impl_->exec, s), "cuGraphLaunch");
    check(a.cuEventRecord(impl_->done, s), "cuEventRecord");
    if (launch_blocking() && !capturing_pool())
        check(a.cuStreamSynchronize(s), "the CUDA graph's replay");
}

void Graph::reset() noexcept {
    if (impl_->capturing) {
        capture_abort();  // calls reset again once the capture is over
        return;
    }
    if (impl_->device < 0) return;
    DeviceState& d = gpu::device(impl_->device);
    if (bind_noexcept(d)) {
        const DriverApi& a = *driver();
        if (impl_->done) {
            a.cuEventSynchronize(impl_->done);  // the memory below may be in use by a replay
            a.cuEventDestroy(impl_->done);
        }
        if (impl_->exec) a.cuGraphExecDestroy(impl_->exec);
        if (impl_->graph) a.cuGraphDestroy(impl_->graph);
    }
    if (impl_->pool) release_graph_pool(d, impl_->pool);
    const int dev = impl_->device;
    *impl_ = Impl{};
    impl_->device = dev;
}

bool Graph::capturing() const { return impl_->capturing; }
bool Graph::captured() const { return impl_->exec != nullptr; }

size_t Graph::num_nodes() const {
    if (!impl_->graph) return 0;
    size_t n = 0;
    check(api().cuGraphGetNodes(impl_->graph, nullptr, &n), "cuGraphGetNodes");
    return n;
}

int Graph::device() const { return impl_->device; }

}  // namespace ember::cuda
