// Reverse-mode automatic differentiation (DESIGN.md §8): grad mode, the graph's nodes and edges,
// the autograd state an array handle carries, and backward()/grad().
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "ember/array.hpp"

namespace ember::autograd {

// ---- grad mode (per thread) -----------------------------------------------------------------
bool is_grad_enabled();
void set_grad_enabled(bool enabled);

// Sets grad mode for a scope and restores the previous mode on exit.
class GradModeGuard {
public:
    explicit GradModeGuard(bool enabled) : prev_(is_grad_enabled()) { set_grad_enabled(enabled); }
    ~GradModeGuard() { set_grad_enabled(prev_); }
    GradModeGuard(const GradModeGuard&) = delete;
    GradModeGuard& operator=(const GradModeGuard&) = delete;

private:
    bool prev_;
};
struct NoGradGuard : GradModeGuard {
    NoGradGuard() : GradModeGuard(false) {}
};

// Anomaly mode (process-wide): every recorded op's forward output and every backward result is
// checked for NaN/inf, and the error names the op. Costs a device-to-host read per op.
bool is_anomaly_enabled();
void set_anomaly_enabled(bool enabled);
// In anomaly mode, called when a node is recorded; its text (e.g. a Python traceback) is shown
// with a backward error of that node.
void set_anomaly_context_hook(std::string (*hook)());

class Node;

// Makes a view of an array (the same view of another array of the same shape).
using ViewFn = std::function<Array(const Array&)>;

// Where a gradient goes: input slot `input_nr` of node `fn` (null: nowhere).
struct Edge {
    std::shared_ptr<Node> fn;
    uint32_t input_nr = 0;
    bool valid() const { return fn != nullptr; }
};

// The autograd state of an array, shared by the copies of its handle. Leaves have no grad_fn;
// non-leaves point at the node that made them (output `output_nr`).
struct Meta {
    static MetaPtr make() { return MetaPtr::adopt(new Meta); }
    std::atomic<uint32_t> refs{1};  // MetaPtr references
    bool requires_grad = false;
    bool retains_grad = false;
    // Views made by recorded view ops: their root base and how to make them from it, so an
    // in-place write through the view rebases the base's history, and a view whose base got a
    // new history (the storage's rebase count moved) gets its own history made again.
    bool is_view = false;
    uint64_t view_rebases = 0;  // the storage's rebase count when the view's history was made
    Array view_base;
    std::shared_ptr<const ViewFn> view_fn;  // null: the view cannot be written through
    uint32_t output_nr = 0;
    Array grad;  // accumulated gradient (leaves)
    // The gradient of a non-leaf that retains it: filled by its grad_fn during backward.
    std::shared_ptr<Array> retained;
    std::shared_ptr<Node> grad_fn;
    std::weak_ptr<Node> accumulator;  // the leaf's AccumulateGrad node while a graph holds it
    // register_hook on a leaf: run on its gradient before it is accumulated.
    std::vector<std::function<Array(const Array&)>> hooks;
};

// Shape, dtype and device of a node's input or output (gradients are reduced and cast to it).
struct TensorInfo {
    Shape shape;
    DType dtype = DType::float32;
    Device device;
};

// A node of the graph: the backward of one recorded op. apply() maps the gradients of its outputs
// to those of its inputs (one per next edge; an undefined Array is a zero gradient), written in
// ember ops, so it runs on any device and, with create_graph, is itself recorded.
class Node : public std::enable_shared_from_this<Node> {
public:
    Node();
    virtual ~Node();
    Node(const Node&) = delete;
    Node& operator=(const Node&) = delete;

    virtual std::string name() const = 0;
    // The op that recorded it, for messages ("ember.log"); the name by default.
    virtual std::string op_name() const { return name(); }
    virtual std::vector<Array> apply(std::vector<Array>&& grad_outputs) = 0;
    // Drops the saved arrays (after a backward without retain_graph).
    virtual void release_saved() {}
    // Whether apply() is called with zeros for outputs that got no gradient (else it is skipped
    // when none of them got one).
    virtual bool materialize_grads() const { return false; }

    uint64_t sequence_nr() const { return seq_; }
    int num_inputs() const { return int(next.size()); }
    int num_outputs() const { return int(outputs.size()); }

    std::vector<Edge> next;          // per input
    std::vector<TensorInfo> inputs;  // per input
    std::vector<TensorInfo> outputs;
    // Gradients kept for non-leaf outputs (retain_grad): output number and the slot.
    std::vector<std::pair<uint32_t, std::shared_ptr<Array>>> retained;
    // register_hook on non-leaf outputs: output number and the hook, which sees the output's
    // gradient before this node does and may return a replacement (undefined: keep it).
    std::vector<std::pair<uint32_t, std::function<Array(const Array&)>>> hooks;
    std::string context;  // anomaly mode: where it was recorded
    bool freed = false;   // its saved arrays were released

private:
    uint64_t seq_;
};

// An array saved for backward with its version: unpacking it after an in-place change raises.
class SavedArray {
public:
    SavedArray() = default;
    // `is_output`: the array is output `output_nr` of the node saving it (no reference cycle).
    SavedArray(const Array& a, bool is_output, uint32_t output_nr = 0);
    bool defined() const { return data_.defined(); }
    // The array (with its autograd state when grad mode is on, for higher-order gradients).
    Array unpack(const Node& owner) const;
    void reset();

private:
    // No strong reference that could lead back to the owner: a saved output refers to it only
    // when unpacked, a non-leaf input's grad_fn is held weakly (the owner's edges hold it).
    Array data_;                      // without autograd state
    std::weak_ptr<Node> grad_fn_;     // a non-leaf input's grad_fn
    std::shared_ptr<Node> leaf_acc_;  // a leaf input's accumulator (it holds the leaf's state)
    uint64_t version_ = 0;
    bool output_ = false;
    bool requires_grad_ = false;
    uint32_t output_nr_ = 0;
};

// ---- recording helpers (for custom nodes) -----------------------------------------------------
// The edge a gradient for `a` goes to: its grad_fn, or its leaf accumulator; invalid when `a`
// does not require grad.
Edge gradient_edge(const Array& a);
// Fills node.next and node.inputs from `inputs` (arrays that do not require grad, and undefined
// ones, get invalid edges).
void collect_next_edges(Node& node, std::span<const Array* const> inputs);
// Makes `outputs` the outputs of `node` (they now require grad; they must be fresh arrays).
void set_history(std::span<Array* const> outputs, const std::shared_ptr<Node>& node);
// Whether any of `inputs` requires grad while grad mode is on.
bool any_requires_grad(std::span<const Array* const> inputs);
// Outputs of an op without a backward formula: when an input requires grad, the floating ones
// get a node whose backward raises naming `op` (instead of a silently missing gradient).
void not_implemented(const char* op, std::span<const Array* const> inputs,
                     std::span<Array* const> outputs);

// ---- backward -------------------------------------------------------------------------------
// Accumulates d(sum of outputs·grad_outputs)/d(leaf) into the .grad of the leaves (or only of
// `inputs` when given). An empty/undefined grad_output means ones for a one-element output.
// retain_graph defaults to create_graph.
void backward(std::span<const Array> outputs, std::span<const Array> grad_outputs = {},
              std::optional<bool> retain_graph = std::nullopt, bool create_graph = false,
              std::span<const Array> inputs = {});
// The gradients of the outputs with respect to `inputs`, without touching any .grad. With
// allow_unused, an input the outputs do not depend on gets an undefined Array (else it raises).
std::vector<Array> grad(std::span<const Array> outputs, std::span<const Array> inputs,
                        std::span<const Array> grad_outputs = {},
                        std::optional<bool> retain_graph = std::nullopt, bool create_graph = false,
                        bool allow_unused = false);

}  // namespace ember::autograd
