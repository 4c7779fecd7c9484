// The nodes of linear algebra: matmul (batched, with 1-d operands), and the factorizations,
// recorded without a formula yet (backward raises naming the function).
#include <memory>

#include "autograd/internal.hpp"
#include "ember/error.hpp"
#include "ember/ops.hpp"

namespace ember::autograd {

namespace {

// ---- matmul -----------------------------------------------------------------------------------

class MatmulNode final : public Node {
public:
    MatmulNode(bool a1, bool b1) : a1_(a1), b1_(b1) {}
    std::string name() const override { return "MatmulBackward"; }
    std::string op_name() const override { return "ember.matmul"; }
    std::vector<Array> apply(std::vector<Array>&& grads) override {
        const Array& g = grads[0];
        // The gradient with the dimensions NumPy dropped for 1-D operands put back.
        Array g2 = g;
        if (a1_ && b1_)
            g2 = g.reshape({1, 1});
        else if (a1_)
            g2 = g.expand_dims(g.ndim() - 1);
        else if (b1_)
            g2 = g.expand_dims(g.ndim());
        std::vector<Array> r(2);
        if (next[0].valid()) {
            const Array bv = b.unpack(*this);
            Array ga = ember::matmul(g2, mh(b1_ ? bv.expand_dims(1) : bv));
            r[0] = a1_ ? ga.squeeze({int64_t(ga.ndim() - 2)}) : ga;
        }
        if (next[1].valid()) {
            const Array av = a.unpack(*this);
            Array gb = ember::matmul(mh(a1_ ? av.expand_dims(0) : av), g2);
            r[1] = b1_ ? gb.squeeze({int64_t(gb.ndim() - 1)}) : gb;
        }
        return r;
    }
    void release_saved() override {
        if (a.defined() || b.defined()) freed = true;
        a.reset();
        b.reset();
    }
    SavedArray a, b;

private:
    bool a1_, b1_;
};

}  // namespace

namespace detail {

Array matmul(const Array& a, const Array& b) {
    Array r;
    {
        NoGradGuard ng;
        r = ember::matmul(a, b);
    }
    if (!is_inexact(r.dtype())) return r;
    auto node = std::make_shared<MatmulNode>(a.ndim() == 1, b.ndim() == 1);
    if (b.requires_grad()) node->a = SavedArray(a, false);
    if (a.requires_grad()) node->b = SavedArray(b, false);
    const Array* ins[2] = {&a, &b};
    collect_next_edges(*node, ptrs(ins));
    attach(node, r);
    return r;
}

linalg::Factors factorize(linalg::Factorization kind, const Array& a, const Array* b,
                          const Array* ipiv, const Array* tau, bool vectors, bool full) {
    linalg::Factors f;
    {
        NoGradGuard ng;
        f = linalg::factorize(kind, a, b, ipiv, tau, vectors, full);
    }
    static const char* names[] = {
        "ember.linalg.lu",   "ember.linalg.lu_solve", "ember.linalg.cholesky", "ember.linalg.qr",
        "ember.linalg.qr_q", "ember.linalg.eigh",     "ember.linalg.svd",      "ember.linalg.eig"};
    const Array* ins[3] = {&a, b, tau};
    Array* outs[5] = {&f.a, &f.tau, &f.w, &f.u, &f.vt};
    not_implemented(names[int(kind)], ins, outs);
    return f;
}

}  // namespace detail

}  // namespace ember::autograd
