"""ember.autograd.functional: PyTorch's ``torch.autograd.functional`` (jacobian, hessian, vjp,
jvp, hvp, vhp) on ember's reverse-mode engine.

Conventions are PyTorch's: ``inputs`` is an array or a tuple of arrays and the results keep
that form (a jacobian is an array when both the inputs and the function's outputs are single
arrays, a tuple per input or per output when one of them is a tuple, a tuple of tuples
``J[i][j] = d output_i / d input_j`` when both are); each block has the output's shape
followed by the input's. Results are detached unless ``create_graph=True``; ``strict=True``
raises RuntimeError where an output does not depend on an input (otherwise zeros).

Forward-mode products (jvp, hvp) use the double-backward trick, as PyTorch does: the
gradient of a vector-Jacobian product with respect to the (dummy) vector. A jacobian takes
one backward pass per output element (``vectorize=True`` is accepted and runs the same
loop; ``strategy="forward-mode"`` gives the same numbers, through the same rows)."""

from __future__ import annotations

import sys

from . import _core, _joining
from ._core import ndarray

__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]


class _grad_mode:  # noqa: N801
    def __init__(self, mode):
        self.mode = bool(mode)

    def __enter__(self):
        self.prev = _core._is_grad_enabled()
        _core._set_grad_enabled(self.mode)

    def __exit__(self, *exc):
        _core._set_grad_enabled(self.prev)
        return False


def _as_tuple(inp, arg_name, fn_name):
    is_tuple = isinstance(inp, tuple)
    items = inp if is_tuple else (inp,)
    for i, el in enumerate(items):
        if not isinstance(el, ndarray):
            where = f"the value at index {i}" if is_tuple else f"the given {arg_name}"
            raise TypeError(
                f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of "
                f"Tensors but {where} has type {type(el)}."
            )
    return is_tuple, items


def _tuple_postprocess(res, to_unpack):
    if isinstance(to_unpack, tuple):
        if not to_unpack[1]:
            res = tuple(el[0] for el in res)
        if not to_unpack[0]:
            res = res[0]
    elif not to_unpack:
        res = res[0]
    return res


def _grad_preprocess(inputs, create_graph, need_graph):
    out = []
    for inp in inputs:
        if create_graph and inp.requires_grad:
            out.append(inp.view_as(inp))  # a differentiable alias: grads stay connected
        else:
            out.append(inp.detach().requires_grad_(need_graph))
    return tuple(out)


def _grad_postprocess(inputs, create_graph):
    if create_graph:
        return inputs
    if isinstance(inputs[0], tuple):
        return tuple(_grad_postprocess(i, create_graph) for i in inputs)
    return tuple(i.detach() if i is not None else None for i in inputs)


def _validate_v(v, other, is_other_tuple):
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(
                f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}."
            )
        raise RuntimeError("The given v should contain a single Tensor.")
    for idx, (el_v, el_other) in enumerate(zip(v, other, strict=True)):
        if tuple(el_v.shape) != tuple(el_other.shape):
            prefix = f"Entry {idx} in " if is_other_tuple else ""
            raise RuntimeError(
                f"{prefix}v has invalid size: should be {el_other.size()} but got {el_v.size()}."
            )


def _check_requires_grad(inputs, input_type, strict):
    if not strict:
        return
    for i, inp in enumerate(inputs):
        if inp is None:
            raise RuntimeError(
                f"The output of the user-provided function is independent of input {i}. This "
                "is not allowed in strict mode."
            )
        if inp.requires_grad:
            continue
        if input_type == "hessian":
            raise RuntimeError(
                f"The hessian of the user-provided function with respect to input {i} is "
                "independent of the input. This is not allowed in strict mode. You should "
                "ensure that your function is thrice differentiable and that the hessian "
                "depends on the inputs."
            )
        if input_type == "jacobian":
            raise RuntimeError(
                "While computing the hessian, found that the jacobian of the user-provided "
                f"function with respect to input {i} is independent of the input. This is not "
                "allowed in strict mode. You should ensure that your function is twice "
                "differentiable and that the jacobian depends on the inputs (this would be "
                "violated by a linear function for example)."
            )
        if input_type == "grad_inputs":
            raise RuntimeError(
                f"The gradient with respect to input {i} is independent of the inputs of the "
                "user-provided function. This is not allowed in strict mode."
            )
        raise RuntimeError(
            f"Output {i} of the user-provided function does not require gradients. The outputs "
            "must be computed in a differentiable manner from the input when running in "
            "strict mode."
        )


def _autograd_grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None):
    """autograd.grad over the outputs that require grad (None for every input when none do)."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    outs, gouts = [], []
    for out, g in zip(outputs, grad_outputs, strict=True):
        if out is not None and out.requires_grad:
            outs.append(out)
            gouts.append(g if g is not None else _core.full(out.shape, 1.0, dtype=out.dtype,
                                                            device=out.device))  # fmt: skip
    if not outs:
        return (None,) * len(inputs)
    return _core._grad(outs, list(inputs), gouts, retain_graph, bool(create_graph), True)


_FILL_MESSAGES = {
    "back": "The output of the user-provided function is independent of input {i}. This is not "
    "allowed in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the "
    "grad_outputs when using the double backward trick to compute forward mode gradients. This "
    "is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. "
    "This is not allowed in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry "
    "{i} in the grad_jacobian. This is not allowed in strict mode as it prevents from using the "
    "double backward trick to replace forward mode AD.",
}


def _zeros_like(a):
    return _core.zeros(a.shape, dtype=a.dtype, device=a.device)


def _fill_in_zeros(grads, refs, strict, create_graph, stage):
    res = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_FILL_MESSAGES[stage].format(i=i))
            g = _zeros_like(refs[i])
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(
                f"The {what} of the user-provided function is independent of input {i}. This "
                "is not allowed in strict mode when create_graph=True."
            )
        res.append(g)
    return tuple(res)


def _v_or_none(v, ref, create_graph, fn_name, is_ref_tuple, none_message):
    if v is not None:
        _, v = _as_tuple(v, "v", fn_name)
        v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
        _validate_v(v, ref, is_ref_tuple)
        return v
    if len(ref) != 1 or ref[0].size != 1:
        raise RuntimeError(none_message)
    return None


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J): the vector-Jacobian product at ``inputs``; ``v`` may be None
    when func returns a single one-element array."""
    with _grad_mode(True):
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _grad_preprocess(inputs, create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(
            outputs, "outputs of the user-provided function", "vjp"
        )
        _check_requires_grad(outputs, "outputs", strict)
        v = _v_or_none(
            v, outputs, create_graph, "vjp", is_outputs_tuple,
            "The vector v can only be None if the user-provided function returns a single "
            "Tensor with a single element.",
        )  # fmt: skip
    return _last_backward(
        outputs, inputs, v, inputs, outputs, strict, create_graph, "back",
        is_outputs_tuple, is_inputs_tuple
    )  # fmt: skip


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v): the Jacobian-vector product at ``inputs`` (double-backward
    trick); ``v`` may be None when the input is a single one-element array."""
    with _grad_mode(True):
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _grad_preprocess(inputs, create_graph, need_graph=True)
        v = _v_or_none(
            v, inputs, create_graph, "jvp", is_inputs_tuple,
            "The vector v can only be None if the input to the user-provided function is a "
            "single Tensor with a single element.",
        )  # fmt: skip
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(
            outputs, "outputs of the user-provided function", "jvp"
        )
        _check_requires_grad(outputs, "outputs", strict)
        # the backward is linear in grad_outputs, so their value does not matter
        grad_outputs = tuple(_zeros_like(out).requires_grad_(True) for out in outputs)
        grad_inputs = _autograd_grad(outputs, inputs, grad_outputs, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict)
    return _last_backward(
        grad_inputs, grad_outputs, v, outputs, outputs, strict, create_graph, "back_trick",
        is_outputs_tuple, is_outputs_tuple
    )  # fmt: skip


def _unit(out, j):
    e = _core.zeros((out.size,), dtype=out.dtype, device=out.device)
    e[j] = 1.0
    return _core.reshape(e, out.shape)


def jacobian(
    func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"
):
    """The Jacobian of ``func`` at ``inputs`` (one backward pass per output element; see
    the module docstring for the forms of the result)."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise ValueError(
            'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
            'function has a scalar output, "reverse-mode" is usually more efficient.'
        )
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                "ember.autograd.functional.jacobian: `create_graph=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please either '
                'set `create_graph=False` or `strategy="reverse-mode"`.'
            )
        if not vectorize:
            raise NotImplementedError(
                "Computing Jacobian using forward-AD or forward-over-reverse Hessian is only "
                "implemented for `vectorize=True`."
            )
    with _grad_mode(True):
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _grad_preprocess(inputs, create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(
            outputs, "outputs of the user-provided function", "jacobian"
        )
        _check_requires_grad(outputs, "outputs", strict)
        jac = []
        for i, out in enumerate(outputs):
            rows = [[] for _ in inputs]
            for j in range(out.size):
                if out.requires_grad:
                    vj = _core._grad([out], list(inputs), [_unit(out, j)], True, create_graph, True)
                else:
                    vj = (None,) * len(inputs)
                for k, (vj_el, inp) in enumerate(zip(vj, inputs, strict=True)):
                    if vj_el is None:
                        if strict:
                            raise RuntimeError(
                                f"Output {i} of the user-provided function is independent of "
                                f"input {k}. This is not allowed in strict mode."
                            )
                        vj_el = _zeros_like(inp)
                    elif strict and create_graph and not vj_el.requires_grad:
                        raise RuntimeError(
                            f"The jacobian of the user-provided function is independent of "
                            f"input {i}. This is not allowed in strict mode when "
                            "create_graph=True."
                        )
                    rows[k].append(vj_el)
            blocks = []
            for k, inp in enumerate(inputs):
                shape = (*out.shape, *inp.shape)
                if rows[k]:
                    block = _core.reshape(_stack(rows[k]), shape)
                else:
                    block = _core.zeros(shape, dtype=inp.dtype, device=inp.device)
                blocks.append(block)
            jac.append(tuple(blocks))
        jac = tuple(jac)
        jac = _grad_postprocess(jac, create_graph)
        return _tuple_postprocess(jac, (is_outputs_tuple, is_inputs_tuple))


def _stack(arrays):
    return _joining.stack([_core.reshape(a, (-1,)) for a in arrays], axis=0)


def hessian(
    func,
    inputs,
    create_graph=False,
    strict=False,
    vectorize=False,
    outer_jacobian_strategy="reverse-mode",
):
    """The Hessian of a function returning one element (an array for a single input, else a
    tuple of tuples H[i][j])."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise ValueError(
            'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
            'function has a scalar output, "reverse-mode" is usually more efficient.'
        )

    def ensure_single_output_function(*inp):
        out = func(*inp)
        is_out_tuple, t_out = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(t_out, "outputs", strict)
        if is_out_tuple or not isinstance(out, ndarray):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.size != 1:
            raise RuntimeError(
                "The Tensor returned by the function given to hessian should contain a single "
                "element"
            )
        return _core.reshape(out, ())

    def jac_func(*inp):
        jac = jacobian(ensure_single_output_function, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        return jac

    res = jacobian(
        jac_func,
        inputs,
        create_graph=create_graph,
        strict=strict,
        vectorize=vectorize,
        strategy=outer_jacobian_strategy if vectorize else "reverse-mode",
    )
    return _tuple_postprocess(res, (is_inputs_tuple, is_inputs_tuple))


def _scalar_function_outputs(func, inputs, fn_name, strict):
    outputs = func(*inputs)
    is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", fn_name)
    _check_requires_grad(outputs, "outputs", strict)
    if is_outputs_tuple or not isinstance(outputs[0], ndarray):
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].size != 1:
        raise RuntimeError(
            f"The Tensor returned by the function given to {fn_name} should contain a single "
            "element"
        )
    return is_outputs_tuple, outputs


_V_NONE_INPUT = (
    "The vector v can only be None if the input to the user-provided function is a single "
    "Tensor with a single element."
)


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H): the vector-Hessian product of a one-element function."""
    with _grad_mode(True):
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vhp")
        inputs = _grad_preprocess(inputs, create_graph, need_graph=True)
        v = _v_or_none(v, inputs, create_graph, "vhp", is_inputs_tuple, _V_NONE_INPUT)
        is_outputs_tuple, outputs = _scalar_function_outputs(func, inputs, "vhp", strict)
        jac = _autograd_grad(outputs, inputs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
    return _last_backward(
        jac, inputs, v, inputs, outputs, strict, create_graph, "double_back",
        is_outputs_tuple, is_inputs_tuple
    )  # fmt: skip


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v): the Hessian-vector product of a one-element function (the
    double-backward trick; equal to vhp for twice-differentiable functions)."""
    with _grad_mode(True):
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hvp")
        inputs = _grad_preprocess(inputs, create_graph, need_graph=True)
        v = _v_or_none(v, inputs, create_graph, "hvp", is_inputs_tuple, _V_NONE_INPUT)
        is_outputs_tuple, outputs = _scalar_function_outputs(func, inputs, "hvp", strict)
        jac = _autograd_grad(outputs, inputs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        grad_jac = tuple(_zeros_like(inp).requires_grad_(True) for inp in inputs)
        double_back = _autograd_grad(jac, inputs, grad_jac, create_graph=True)
        _check_requires_grad(jac, "hessian", strict)
    return _last_backward(
        double_back, grad_jac, v, inputs, outputs, strict, create_graph, "double_back_trick",
        is_outputs_tuple, is_inputs_tuple
    )  # fmt: skip


# ``ember.autograd`` is a module, not a package: registering this one under the submodule's
# name makes ``import ember.autograd.functional`` and ``from ember.autograd.functional import
# jacobian`` work as they do for torch.
sys.modules.setdefault(__name__.rsplit(".", 1)[0] + ".autograd.functional", sys.modules[__name__])


def _last_backward(ys, xs, v, like, outputs, strict, create_graph, stage, out_tuple, res_tuple):
    """The closing step that vjp, jvp, hvp and vhp share: the gradient of `ys` with respect to
    `xs` weighted by `v` (zeros where `like` gets none), then PyTorch's post-processing of
    the (outputs, result) pair."""
    with _grad_mode(True if create_graph else _core._is_grad_enabled()):
        grad_res = _autograd_grad(ys, xs, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, like, strict, create_graph, stage)
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return _tuple_postprocess(outputs, out_tuple), _tuple_postprocess(result, res_tuple)
