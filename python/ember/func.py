"""ember.func: PyTorch's ``torch.func`` function transforms on ember's reverse-mode engine.

``grad``, ``grad_and_value``, ``vjp``, ``jvp``, ``jacrev``, ``jacfwd``, ``hessian``, ``vmap`` and
``functional_call`` keep torch.func's signatures, pytree handling (tuples, lists and dicts of
arrays as arguments and results) and errors. How they are computed:

- The differentiating transforms run the function once on fresh leaves (inputs that already
  require grad get a differentiable alias, so the result stays connected to them) and call
  ``autograd.grad``. They compose (``grad(grad(f))``, ``jacrev(jacrev(f))``, ``vmap(grad(f))``)
  because a transform keeps the graph of its result whenever the function's graph reaches
  arrays that require grad other than its own fresh inputs: an outer transform's, or a
  model's parameters (a gradient penalty's ``backward()`` reaches them, as with torch.func).
- ``jacfwd`` and ``jvp`` give forward-mode results through reverse mode: ``jacfwd`` is computed
  by rows (one backward pass per output element, like ``jacrev``) and ``jvp`` by the
  double-backward trick. The numbers are the forward-mode ones; the costs are reverse mode's.
- ``vmap`` is a loop, not a batching transform: it calls the function once per index of the
  mapped dimension, on slices (views) of the mapped inputs, and stacks the results along
  ``out_dims``. Everything else (in_dims per argument and nested, None for unmapped inputs,
  out_dims, randomness, the errors for mismatched sizes) is torch.func's.
"""

from __future__ import annotations

import functools
import numbers

import ember as _em

from . import _core
from . import random as _random
from ._autograd_functional import _stack, _unit
from ._core import ndarray

__all__ = [
    "functional_call",
    "grad",
    "grad_and_value",
    "hessian",
    "jacfwd",
    "jacrev",
    "jvp",
    "vjp",
    "vmap",
]


# ---- pytrees: tuples, lists and dicts of leaves ----------------------------------------------


def _flatten(tree):
    """(leaves, spec): spec rebuilds the structure from a list of leaves."""
    if isinstance(tree, tuple | list):
        specs, leaves = [], []
        for t in tree:
            lv, sp = _flatten(t)
            leaves += lv
            specs.append(sp)
        return leaves, (type(tree), specs, None)
    if isinstance(tree, dict):
        keys = list(tree)
        specs, leaves = [], []
        for k in keys:
            lv, sp = _flatten(tree[k])
            leaves += lv
            specs.append(sp)
        return leaves, (dict, specs, keys)
    return [tree], None


def _unflatten(leaves, spec):
    it = iter(leaves)

    def build(sp):
        if sp is None:
            return next(it)
        kind, specs, keys = sp
        items = [build(s) for s in specs]
        if kind is dict:
            return dict(zip(keys, items, strict=True))
        if kind is tuple or kind is list:
            return kind(items)
        return kind(*items)  # a namedtuple

    return build(spec)


def _spec_repr(spec):
    if spec is None:
        return "*"
    kind, specs, keys = spec
    inner = [_spec_repr(s) for s in specs]
    if kind is dict:
        return "{" + ", ".join(f"{k!r}: {v}" for k, v in zip(keys, inner, strict=True)) + "}"
    return ("[" if kind is list else "(") + ", ".join(inner) + ("]" if kind is list else ")")


def _broadcast_prefix(prefix, tree, fail):
    """The leaves of `prefix` (ints/None) spread over the leaves of `tree`."""
    if prefix is None or isinstance(prefix, numbers.Integral):
        return [prefix] * len(_flatten(tree)[0])
    if isinstance(prefix, tuple | list) and isinstance(tree, tuple | list):
        if len(prefix) != len(tree):
            fail()
        out = []
        for p, t in zip(prefix, tree, strict=True):
            out += _broadcast_prefix(p, t, fail)
        return out
    if isinstance(prefix, dict) and isinstance(tree, dict):
        if set(prefix) != set(tree):
            fail()
        out = []
        for k in tree:
            out += _broadcast_prefix(prefix[k], tree[k], fail)
        return out
    fail()


# ---- the differentiating transforms ----------------------------------------------------------


def _name(func):
    return getattr(func, "__name__", type(func).__name__)


def _argnums(argnums, nargs, who):
    if isinstance(argnums, bool) or not isinstance(argnums, int | tuple):
        raise RuntimeError(f"{who}: argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    nums = argnums if isinstance(argnums, tuple) else (argnums,)
    if not nums:
        raise RuntimeError(f"{who}: argnums must be non-empty")
    out = []
    for n in nums:
        if isinstance(n, bool) or not isinstance(n, int):
            raise RuntimeError(f"{who}: argnums must be int or Tuple[int, ...], got: {argnums}")
        if not -nargs <= n < nargs:
            raise RuntimeError(f"{who}: Got argnums={argnums}, but only {nargs} positional inputs")
        out.append(n % nargs)
    if len(set(out)) != len(out):
        raise RuntimeError(f"{who}: argnums elements must be unique, got {argnums}")
    return out


def _fresh(x, who):
    """A leaf (or, for an array that requires grad, a differentiable alias) to differentiate
    at."""
    if not isinstance(x, ndarray):
        raise RuntimeError(
            f"{who}: expected the differentiated arguments to be arrays (or pytrees of "
            f"arrays), got {type(x).__name__}"
        )
    if x.dtype.kind not in "fc" and x.dtype.name != "bfloat16":
        raise RuntimeError(
            f"{who}: only arrays of floating point or complex dtype can be differentiated, "
            f"got {x.dtype}"
        )
    if x.requires_grad:
        return x.view_as(x)
    return x.detach().requires_grad_(True)


class _Inputs:
    """The differentiated arguments of one call: fresh leaves in the arguments' structure."""

    def __init__(self, args, argnums, who):
        self.argnums = argnums
        self.args = list(args)
        self.specs, self.leaves = [], []
        for n in argnums:
            leaves, spec = _flatten(args[n])
            fresh = [_fresh(x, who) for x in leaves]
            self.args[n] = _unflatten(fresh, spec)
            self.specs.append((spec, len(fresh)))
            self.leaves += fresh

    def nodes(self):
        """The AccumulateGrad nodes of the fresh leaves."""
        return {
            id(n): n
            for n in (
                x.view_as(x).grad_fn.next_functions[0][0] for x in self.leaves if x.is_leaf
            )  # fmt: skip
        }

    def restructure(self, flat, single):
        """Per-leaf results in the differentiated arguments' structure."""
        out, i = [], 0
        for spec, count in self.specs:
            out.append(_unflatten(flat[i : i + count], spec))
            i += count
        return out[0] if single else tuple(out)


def _reaches_outside(outputs, inputs):
    """Whether the graph of `outputs` reaches a leaf that requires grad besides the fresh
    leaves of `inputs`."""
    own = inputs.nodes()
    stack, seen = [], set()
    for o in outputs:
        if not isinstance(o, ndarray) or not o.requires_grad:
            continue
        if o.grad_fn is None:  # a leaf: ours or not
            if not any(o is x for x in inputs.leaves):
                return True
            continue
        stack.append(o.grad_fn)
    keep = []
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        keep.append(node)
        if node.name() == "AccumulateGrad":
            if id(node) not in own:
                return True
            continue
        stack.extend(f for f, _ in node.next_functions if f is not None)
    return False


def _grads(outputs, cotangents, inputs, retain):
    """autograd.grad of `outputs` (weighted by `cotangents`) at `inputs.leaves`, zeros for
    unused inputs; keeps the graph when it reaches arrays outside the transform."""
    create = _reaches_outside(outputs, inputs)
    pairs = [(o, c) for o, c in zip(outputs, cotangents, strict=True) if o.requires_grad]
    if pairs:
        grads = _core._grad(
            [o for o, _ in pairs],
            list(inputs.leaves),
            [c for _, c in pairs],
            True if (retain or create) else None,
            create,
            True,
        )
    else:
        grads = (None,) * len(inputs.leaves)
    return [
        g if g is not None else _core.zeros(x.shape, dtype=x.dtype, device=x.device)
        for g, x in zip(grads, inputs.leaves, strict=True)
    ], create


def _zeros_of(x):
    return _core.zeros(x.shape, dtype=x.dtype, device=x.device)


def _plain(tree, keep):
    """The tree with its arrays detached unless `keep` (results keep their graph only when it
    reaches arrays outside the transform)."""
    if keep:
        return tree
    leaves, spec = _flatten(tree)
    return _unflatten([x.detach() if isinstance(x, ndarray) else x for x in leaves], spec)


def _call_grad(func, argnums, has_aux, args, kwargs):
    who = "grad_and_value(f)(*args)"
    nums = _argnums(argnums, len(args), who)
    with _em.enable_grad():
        inputs = _Inputs(args, nums, who)
        output = func(*inputs.args, **kwargs)
        aux = None
        if has_aux:
            if not (isinstance(output, tuple) and len(output) == 2):
                raise RuntimeError(
                    f"{who}: output of function f should be a tuple: (output, aux) if has_aux "
                    "is True"
                )
            output, aux = output
        if not isinstance(output, ndarray):
            raise RuntimeError(f"{who}: Expected f(*args) to return a Tensor, got {type(output)}")
        if output.ndim != 0:
            raise RuntimeError(
                f"{who}: Expected f(*args) to return a scalar Tensor, got tensor with "
                f"{output.ndim} dims. Maybe you wanted to use the vjp or jacrev APIs instead?"
            )
        one = _core.full((), 1.0, dtype=output.dtype, device=output.device)
        flat, keep = _grads([output], [one], inputs, retain=False)
    grads = inputs.restructure(flat, isinstance(argnums, int))
    return grads, _plain(output, keep), _plain(aux, keep)


def grad_and_value(func, argnums=0, has_aux=False):
    """A function returning ``(gradient, value)`` of a scalar-valued ``func`` (with
    ``has_aux``: func returns ``(value, aux)`` and this returns ``(gradient, (value, aux))``).
    The gradient has the structure of the argument(s) named by ``argnums`` (an int or a
    tuple of ints: then a tuple of gradients)."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, value, aux = _call_grad(func, argnums, has_aux, args, kwargs)
        return (g, (value, aux)) if has_aux else (g, value)

    return wrapper


def grad(func, argnums=0, has_aux=False):
    """A function computing the gradient of a scalar-valued ``func`` with respect to the
    argument(s) ``argnums`` (with ``has_aux``: ``(gradient, aux)``)."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, _, aux = _call_grad(func, argnums, has_aux, args, kwargs)
        return (g, aux) if has_aux else g

    return wrapper


def _split_aux(output, has_aux, who):
    if not has_aux:
        return output, None
    if not (isinstance(output, tuple) and len(output) == 2):
        raise RuntimeError(
            f"{who}: output of function f should be a tuple: (output, aux) if has_aux is True"
        )
    return output


def _check_outputs(leaves, who):
    for x in leaves:
        if not isinstance(x, ndarray):
            raise RuntimeError(
                f"{who}: Expected f to be a function that has non-empty output (pytree of "
                f"Tensors), got an output of type {type(x).__name__}"
            )


def vjp(func, *primals, has_aux=False):
    """``(output, vjp_fn)`` (with ``has_aux``: ``(output, vjp_fn, aux)``): ``vjp_fn(cotangents)``
    returns the vector-Jacobian products, a tuple with one entry per primal (each in its
    primal's structure); it can be called repeatedly."""
    who = "vjp(f, *primals)"
    with _em.enable_grad():
        inputs = _Inputs(primals, list(range(len(primals))), who)
        output = func(*inputs.args)
        output, aux = _split_aux(output, has_aux, who)
        out_leaves, out_spec = _flatten(output)
        _check_outputs(out_leaves, who)
        keep = _reaches_outside(out_leaves, inputs)

    def vjp_fn(cotangents, *, retain_graph=True, create_graph=None):
        ct_leaves, ct_spec = _flatten(cotangents)
        if _spec_repr(ct_spec) != _spec_repr(out_spec):
            raise RuntimeError(
                "Expected pytree structure of cotangents to be the same as pytree structure "
                f"of outputs to the function. cotangents: {_spec_repr(ct_spec)}, primal "
                f"output: {_spec_repr(out_spec)}"
            )
        for i, (c, o) in enumerate(zip(ct_leaves, out_leaves, strict=True)):
            if tuple(c.shape) != tuple(o.shape):
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of {c.size()} and "
                    f"output[{i}] has a shape of {o.size()}."
                )
        with _em.enable_grad():
            flat, _ = _grads(out_leaves, ct_leaves, inputs, retain=True)
        per_primal, i = [], 0
        for spec, count in inputs.specs:
            per_primal.append(_unflatten(flat[i : i + count], spec))
            i += count
        return tuple(per_primal)

    out = _plain(output, keep)
    return (out, vjp_fn, _plain(aux, keep)) if has_aux else (out, vjp_fn)


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """``(output, jvp_out)``: func's output at ``primals`` and its Jacobian-vector product with
    ``tangents`` (same structure as primals), by the double-backward trick."""
    who = "jvp(f, primals, tangents)"
    if not isinstance(primals, tuple):
        raise RuntimeError(
            f"{who}: Expected primals to be a tuple. E.g. it should be valid to call f(*primals)."
        )
    p_leaves, p_spec = _flatten(primals)
    t_leaves, t_spec = _flatten(tangents)
    if not isinstance(tangents, tuple) or _spec_repr(p_spec) != _spec_repr(t_spec):
        raise RuntimeError(
            f"{who}: Expected primals and tangents to have the same python structure. For "
            "example, if primals is a tuple of 3 tensors, tangents also must be. Got primals "
            f"with structure {_spec_repr(p_spec)} and tangents with structure "
            f"{_spec_repr(t_spec)}"
        )
    for p, t in zip(p_leaves, t_leaves, strict=True):
        if tuple(p.shape) != tuple(t.shape):
            raise RuntimeError(
                f"{who}: Expected primals and tangents to have the same shape, got "
                f"{p.size()} and {t.size()}"
            )
    with _em.enable_grad():
        inputs = _Inputs(primals, list(range(len(primals))), who)
        output = func(*inputs.args)
        output, aux = _split_aux(output, has_aux, who)
        out_leaves, out_spec = _flatten(output)
        _check_outputs(out_leaves, who)
        keep = _reaches_outside(out_leaves, inputs)
        dummies = [
            _core.zeros(o.shape, dtype=o.dtype, device=o.device).requires_grad_(True)
            for o in out_leaves
        ]
        pairs = [(o, d) for o, d in zip(out_leaves, dummies, strict=True) if o.requires_grad]
        if pairs:
            g = _core._grad([o for o, _ in pairs], inputs.leaves, [d for _, d in pairs],
                            True, True, True)  # fmt: skip
        else:
            g = (None,) * len(inputs.leaves)
        used = [(gi, t) for gi, t in zip(g, t_leaves, strict=True) if gi is not None]
        if used and any(gi.requires_grad for gi, _ in used):
            used = [(gi, t) for gi, t in used if gi.requires_grad]
            jv = _core._grad([gi for gi, _ in used], dummies, [t for _, t in used],
                             None, keep, True)  # fmt: skip
        else:
            jv = (None,) * len(dummies)
    jv = [
        j if j is not None else _core.zeros(o.shape, dtype=o.dtype, device=o.device)
        for j, o in zip(jv, out_leaves, strict=True)
    ]
    result = (_plain(output, keep), _plain(_unflatten(jv, out_spec), keep))
    return (*result, _plain(aux, keep)) if has_aux else result


def _jacobian(func, argnums, has_aux, args, kwargs, who):
    nums = _argnums(argnums, len(args), who)
    with _em.enable_grad():
        inputs = _Inputs(args, nums, who)
        output = func(*inputs.args, **kwargs)
        output, aux = _split_aux(output, has_aux, who)
        out_leaves, out_spec = _flatten(output)
        _check_outputs(out_leaves, who)
        keep = _reaches_outside(out_leaves, inputs)
        n = len(inputs.leaves)
        result = []
        for out in out_leaves:
            rows = [[] for _ in range(n)]
            for j in range(out.size):
                if out.requires_grad:
                    gs = _core._grad([out], inputs.leaves, [_unit(out, j)], True, keep, True)
                else:
                    gs = (None,) * n
                for k, (g, x) in enumerate(zip(gs, inputs.leaves, strict=True)):
                    rows[k].append(g if g is not None else _zeros_of(x))
            blocks = []
            for k, x in enumerate(inputs.leaves):
                shape = (*out.shape, *x.shape)
                blocks.append(
                    _core.reshape(_stack(rows[k]), shape)
                    if rows[k]
                    else _core.zeros(shape, dtype=x.dtype, device=x.device)
                )
            result.append(inputs.restructure(blocks, isinstance(argnums, int)))
    jac = _plain(_unflatten(result, out_spec), keep)
    return (jac, _plain(aux, keep)) if has_aux else jac


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None):
    """A function computing the Jacobian of ``func`` with respect to the argument(s)
    ``argnums`` by reverse mode (one backward pass per output element; ``chunk_size`` is
    accepted and changes nothing). Each block has the output's shape followed by the
    input's; the result has the output's structure, each leaf holding the argument's."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return _jacobian(func, argnums, has_aux, args, kwargs, "jacrev(f, argnums)")

    return wrapper


def _check_randomness(randomness):
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(
            "Only allowed values for randomness are 'error', 'different', or 'same'. Got "
            f"{randomness}"
        )


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """The Jacobian, as :func:`jacrev`: ember has no forward-mode AD, so this computes the same
    matrix by reverse-mode rows (one backward pass per output element), not by one
    Jacobian-vector product per input element as PyTorch's does."""
    _check_randomness(randomness)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return _jacobian(func, argnums, has_aux, args, kwargs, "jacfwd(f, argnums)")

    return wrapper


def hessian(func, argnums=0):
    """The Hessian of a scalar-valued ``func``: ``jacfwd(jacrev(func, argnums), argnums)``."""
    return jacfwd(jacrev(func, argnums), argnums)


# ---- vmap ------------------------------------------------------------------------------------


def _check_dims(dims, what, name):
    leaves = _flatten(dims)[0] if isinstance(dims, tuple | list | dict) else [dims]
    for d in leaves:
        if d is not None and (isinstance(d, bool) or not isinstance(d, numbers.Integral)):
            raise ValueError(
                f"vmap({name}, ...): `{what}` must be an int, None or a python collection of "
                f"ints representing where in the {'inputs' if what == 'in_dims' else 'outputs'}"
                " the vmapped dimension should appear."
            )


def _select(x, dim, i):
    return x[(slice(None),) * dim + (i,)]


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """``func`` mapped over a dimension of its inputs: ``in_dims`` says which dimension of
    each argument (an int for all, None for an argument passed whole to every call, a tuple
    with one entry per argument, nested like the arguments), ``out_dims`` where the mapped
    dimension goes in each output. ``randomness``: "error" (a random draw inside raises),
    "different" (each call draws its own) or "same" (every call sees the same draws).

    A loop, not a batching transform: func runs once per index, on views of the inputs, and
    the results are stacked (so it works for any func ember can run, at a loop's speed)."""
    _check_randomness(randomness)
    name = _name(func)
    if not (in_dims is None or isinstance(in_dims, numbers.Integral | tuple)):
        raise ValueError(
            f"vmap({name}, in_dims={in_dims}, ...): expected `in_dims` to be int or a "
            f"(potentially nested) tuple matching the structure of inputs, got: {type(in_dims)}."
        )
    _check_dims(in_dims, "in_dims", name)
    _check_dims(out_dims, "out_dims", name)

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        return _vmap_call(func, name, in_dims, out_dims, randomness, args, kwargs)

    return wrapped


def _vmap_call(func, name, in_dims, out_dims, randomness, args, kwargs):
    head = f"vmap({name}, in_dims={in_dims}, ...)(<inputs>)"
    if not args:
        raise ValueError(
            f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you "
            "are trying to vmap over a function with no inputs. The latter is unsupported."
        )
    flat_args, args_spec = _flatten(args)
    dims_tree = in_dims if isinstance(in_dims, tuple) else (in_dims,) * len(args)

    def mismatch():
        raise ValueError(
            f"{head}: in_dims is not compatible with the structure of `inputs`. in_dims has "
            f"structure {_spec_repr(_flatten(in_dims)[1])} but inputs has structure "
            f"{_spec_repr(args_spec)}."
        )

    flat_dims = _broadcast_prefix(dims_tree, args, mismatch)
    sizes, norm = [], []
    for x, d in zip(flat_args, flat_dims, strict=True):
        if d is None:
            norm.append(None)
            continue
        if not isinstance(x, ndarray):
            raise ValueError(
                f"{head}: Got in_dim={d} for an input but the input is of type {type(x)}. We "
                "cannot vmap over non-Tensor arguments, please use None as the respective in_dim"
            )
        if not -x.ndim <= d < x.ndim:
            raise ValueError(
                f"{head}: Got in_dim={d} for some input, but that input is a Tensor of "
                f"dimensionality {x.ndim} so expected in_dim to satisfy -{x.ndim} <= in_dim < "
                f"{x.ndim}."
            )
        norm.append(d % x.ndim)
        sizes.append(x.shape[d % x.ndim])
    if not sizes:
        raise ValueError(
            f"{head}: at least one input must be mapped (an array with an int in_dim), got "
            f"in_dims={in_dims}"
        )
    if len(set(sizes)) != 1:
        raise ValueError(
            "vmap: Expected all tensors to have the same size in the mapped dimension, got "
            f"sizes {sizes} for the mapped dimension"
        )
    size = sizes[0]
    gen_state = _random._global.state
    results = []
    for i in range(max(size, 1)):
        if size == 0:  # one call on zeros learns the outputs' structure and shapes
            leaves = [
                x
                if d is None
                else _core.zeros(
                    x.shape[:d] + x.shape[d + 1 :], dtype=x.dtype, device=x.device
                )  # fmt: skip
                for x, d in zip(flat_args, norm, strict=True)
            ]
        else:
            leaves = [
                x if d is None else _select(x, d, i) for x, d in zip(flat_args, norm, strict=True)
            ]
        if randomness == "same":
            _random._global.state = gen_state
        draws = _core._random.draw_count()
        out = func(*_unflatten(leaves, args_spec), **kwargs)
        if randomness == "error" and _core._random.draw_count() != draws:
            raise RuntimeError(
                "vmap: called random operation while in randomness error mode. Please either "
                "use the 'same' or 'different' randomness flags on vmap or perform the "
                "randomness operation out of vmap"
            )
        results.append(out)
    return _stack_outputs(results, size, out_dims, name)


def _stack_outputs(results, size, out_dims, name):
    out_leaves, out_spec = _flatten(results[0])
    per_call = [_flatten(r)[0] for r in results]

    def mismatch():
        raise ValueError(
            f"vmap({name}, ...): out_dims is not compatible with the structure of `outputs`. "
            f"out_dims has structure {_spec_repr(_flatten(out_dims)[1])} but outputs has "
            f"structure {_spec_repr(out_spec)}."
        )

    if isinstance(out_dims, tuple) and not isinstance(results[0], tuple):
        dims = _broadcast_prefix(out_dims, (results[0],), mismatch)
    else:
        dims = _broadcast_prefix(out_dims, results[0], mismatch)
    stacked = []
    for k, d in enumerate(dims):
        column = [leaves[k] for leaves in per_call]
        if d is None:
            stacked.append(column[0])
            continue
        if not isinstance(column[0], ndarray):
            raise ValueError(
                f"vmap({name}, ...): `{name}` must only return Tensors, got type "
                f"{type(column[0])}. Did you mean to set out_dims= to None for output?"
            )
        nd = column[0].ndim + 1
        if not -nd <= d < nd:
            raise IndexError(
                f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got "
                f"{d})"
            )
        if size == 0:
            shape = list(column[0].shape)
            shape.insert(d % nd, 0)
            x = column[0]
            stacked.append(_core.zeros(tuple(shape), dtype=x.dtype, device=x.device))
        else:
            stacked.append(_em.stack(column, axis=d % nd))
    return _unflatten(stacked, out_spec)


# ---- functional_call -------------------------------------------------------------------------


def _merge_dicts(dicts):
    if isinstance(dicts, dict):
        return dict(dicts)
    if not isinstance(dicts, tuple | list) or not all(isinstance(d, dict) for d in dicts):
        raise ValueError(
            "Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but "
            f"got {type(dicts)}"
        )
    merged, seen = {}, set()
    dupes = []
    for d in dicts:
        for k, v in d.items():
            if k in seen:
                dupes.append(k)
            seen.add(k)
            merged[k] = v
    if dupes:
        raise ValueError(
            f"{', '.join(sorted(set(dupes)))} appeared in multiple dictionaries; behavior of "
            "functional call is ambiguous"
        )
    return merged


def _owner(module, name):
    prefix, _, attr = name.rpartition(".")
    return (module.get_submodule(prefix) if prefix else module), attr


def functional_call(
    module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True, strict=False
):
    """Calls ``module(*args, **kwargs)`` with the parameters and buffers named in the dict(s)
    replaced by the given arrays for the call only (the module is unchanged afterwards).
    Names the module does not have are set as attributes for the call; ``strict=True``
    requires exactly the module's parameters and buffers. With ``tie_weights``, a parameter
    shared under several names is replaced under all of them."""
    values = _merge_dicts(parameter_and_buffer_dicts)
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    kwargs = {} if kwargs is None else kwargs
    named = dict(module.named_parameters(remove_duplicate=False))
    named.update(dict(module.named_buffers(remove_duplicate=False)))
    if strict:
        missing = [k for k in named if k not in values]
        unexpected = [k for k in values if k not in named]
        if missing or unexpected:
            msgs = []
            if unexpected:
                msgs.append("Unexpected key(s): " + ", ".join(f"'{k}'" for k in unexpected) + ".")
            if missing:
                msgs.append("Missing key(s): " + ", ".join(f"'{k}'" for k in missing) + ".")
            raise RuntimeError(
                f"Error(s) in reparametrizing for {module._get_name()}:\n\t" + "\n\t".join(msgs)
            )
    if tie_weights:
        by_id = {}
        for k, t in named.items():
            by_id.setdefault(id(t), []).append(k)
        for names in by_id.values():
            given = [k for k in names if k in values]
            if len(given) > 1 and any(values[k] is not values[given[0]] for k in given):
                raise ValueError(
                    f"functional_call got multiple values for keys {given}, which are tied. "
                    "Consider using tie_weights=False"
                )
            if given:
                for k in names:
                    values.setdefault(k, values[given[0]])
    saved = []
    try:
        for name, value in values.items():
            owner, attr = _owner(module, name)
            for store in ("_parameters", "_buffers"):
                table = owner.__dict__.get(store)
                if table is not None and attr in table:
                    saved.append((table, attr, table[attr]))
                    table[attr] = value
                    break
            else:
                had = attr in owner.__dict__
                saved.append((owner, attr, owner.__dict__[attr] if had else _MISSING))
                object.__setattr__(owner, attr, value)
        return module(*args, **kwargs)
    finally:
        for holder, attr, old in reversed(saved):
            if isinstance(holder, dict):
                holder[attr] = old
            elif old is _MISSING:
                object.__delattr__(holder, attr)
            else:
                object.__setattr__(holder, attr, old)


_MISSING = object()
