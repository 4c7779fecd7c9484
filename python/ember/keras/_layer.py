"""ember.keras's Layer base class, its weights (Variable), symbolic tensors (KerasTensor, Input)
and the bookkeeping shared by every layer: unique names, the training flag of nested calls,
deferred building and the registry of classes that saved models are rebuilt from."""

from __future__ import annotations

import inspect
import re
import threading

import numpy as _np

import ember as _e

from .._array import asarray, asnumpy
from ..nn._grad_mode import no_grad
from ..nn._module import Module
from ..nn._parameter import Parameter

FLOATX = "float32"

# ---- names, registry, call context --------------------------------------------------------------

_NAME_COUNTS: dict[str, int] = {}
_REGISTRY: dict[str, type] = {}
_CONTEXT = threading.local()


def to_snake_case(name):
    """Keras's layer-name rule: ``MaxPooling2D`` -> ``max_pooling2d``."""
    name = re.sub(r"\W+", "", name)
    name = re.sub("(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub("([a-z])([A-Z])", r"\1_\2", name).lower()


def unique_name(base):
    """``base``, then ``base_1``, ``base_2`` ... (reset by ``clear_session``)."""
    n = _NAME_COUNTS.get(base, 0)
    _NAME_COUNTS[base] = n + 1
    return base if n == 0 else f"{base}_{n}"


def clear_session():
    """Resets the automatic layer names (``dense``, ``dense_1`` ...) as Keras's does."""
    _NAME_COUNTS.clear()


def register(cls):
    """Records `cls` under its class name so that ``load_model`` can rebuild it."""
    _REGISTRY[cls.__name__] = cls
    return cls


def register_keras_serializable(package="Custom", name=None):
    """Decorator registering a custom layer, model, loss or metric for ``load_model``."""

    def deco(cls):
        _REGISTRY[name or cls.__name__] = cls
        _REGISTRY[f"{package}>{name or cls.__name__}"] = cls
        return cls

    return deco


def registered(class_name, custom_objects=None, who="ember.keras.models.load_model"):
    if custom_objects and class_name in custom_objects:
        return custom_objects[class_name]
    if class_name in _REGISTRY:
        return _REGISTRY[class_name]
    raise ValueError(
        f"{who}: unknown class {class_name!r}; pass it in custom_objects or decorate it with "
        "ember.keras.saving.register_keras_serializable()"
    )


def current_training():
    """The training flag of the outermost call that set one (None outside any)."""
    return getattr(_CONTEXT, "training", None)


class _TrainingScope:
    def __init__(self, training):
        self.training = training

    def __enter__(self):
        self.saved = getattr(_CONTEXT, "training", None)
        _CONTEXT.training = self.training

    def __exit__(self, *exc):
        _CONTEXT.training = self.saved


# ---- weights ------------------------------------------------------------------------------------


class Variable(Parameter):
    """A layer weight: an ``ember.nn.Parameter`` (so every ember op and optimizer takes it) with
    Keras's ``name``, ``path``, ``trainable``, ``assign``, ``numpy()`` and ``value``."""

    def __new__(cls, data, trainable=True, name="variable", path=None):
        self = super().__new__(cls, data, requires_grad=trainable)
        self._keras_name = name
        self._keras_path = path or name
        self._keras_constraint = None
        return self

    def __init__(self, data, trainable=True, name="variable", path=None):
        pass

    @property
    def name(self):
        return self._keras_name

    @property
    def path(self):
        return self._keras_path

    @property
    def trainable(self):
        return bool(self.requires_grad)

    @trainable.setter
    def trainable(self, value):
        self.requires_grad_(bool(value))

    @property
    def value(self):
        return self.detach()

    def numpy(self):
        return asnumpy(self.detach())

    def assign(self, value):
        """Overwrites the weight in place (shape must match), on its own device."""
        src = asarray(value, dtype=self.dtype, device=self.device)
        if tuple(src.shape) != tuple(self.shape):
            raise ValueError(
                f"Variable.assign: the value's shape {tuple(src.shape)} does not match the "
                f"variable {self.path!r} of shape {tuple(self.shape)}"
            )
        with no_grad():
            self[...] = src
        return self

    def assign_add(self, value):
        return self.assign(self.detach() + asarray(value, dtype=self.dtype, device=self.device))

    def assign_sub(self, value):
        return self.assign(self.detach() - asarray(value, dtype=self.dtype, device=self.device))

    def __repr__(self):
        return (
            f"<Variable path={self.path}, shape={tuple(self.shape)}, dtype={self.dtype}, "
            f"value={asnumpy(self.detach())!r}>"
        )

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        out = Variable(self.detach().copy(), self.trainable, self.name, self.path)
        memo[id(self)] = out
        return out


# ---- symbolic tensors ---------------------------------------------------------------------------


class KerasTensor:
    """A symbolic tensor of the functional API: a shape (None for unknown sizes), a dtype and the
    layer call that produced it."""

    def __init__(self, shape, dtype=FLOATX, name=None, history=None):
        self.shape = tuple(None if s is None else int(s) for s in shape)
        self.dtype = str(dtype)
        self.name = name
        self._keras_history = history  # (layer, node_index, tensor_index)

    @property
    def ndim(self):
        return len(self.shape)

    def __repr__(self):
        return f"<KerasTensor shape={self.shape}, dtype={self.dtype}, name={self.name}>"

    def __bool__(self):
        raise TypeError("A KerasTensor is symbolic: it has no truth value")


def flatten(structure):
    """The leaves of nested lists/tuples/dicts, in order."""
    if isinstance(structure, (list, tuple)):
        return [leaf for item in structure for leaf in flatten(item)]
    if isinstance(structure, dict):
        return [leaf for k in structure for leaf in flatten(structure[k])]
    return [structure]


def map_structure(fn, structure):
    if isinstance(structure, list):
        return [map_structure(fn, s) for s in structure]
    if isinstance(structure, tuple):
        return tuple(map_structure(fn, s) for s in structure)
    if isinstance(structure, dict):
        return {k: map_structure(fn, v) for k, v in structure.items()}
    return fn(structure)


class Node:
    """One call of a layer on symbolic tensors: the arguments (with KerasTensors in them) and
    the output tensors."""

    def __init__(self, layer, args, kwargs, outputs):
        self.layer = layer
        self.args = args
        self.kwargs = kwargs
        self.outputs = outputs
        self.input_tensors = [t for t in flatten((args, kwargs)) if isinstance(t, KerasTensor)]
        self.output_tensors = flatten(outputs)

    @property
    def parent_nodes(self):
        nodes = []
        for t in self.input_tensors:
            layer, idx, _ = t._keras_history
            nodes.append(layer._inbound_nodes[idx])
        return nodes


def _shape_text(shape):
    return "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def standardize_shape(shape, who, name="shape"):
    if isinstance(shape, int):
        shape = (shape,)
    try:
        out = tuple(None if s is None else int(s) for s in shape)
    except (TypeError, ValueError):
        raise TypeError(f"{who}: {name} must be a tuple of ints or None, got {shape!r}") from None
    if any(s is not None and s < 0 for s in out):
        raise ValueError(f"{who}: {name} must have non-negative sizes, got {shape!r}")
    return out


def host_strings(x):
    """`x` as a NumPy array of strings when it is text (str, bytes, or a list/array of them),
    else None: text stays on the host (ember arrays hold numbers), as TextVectorization takes it."""
    if isinstance(x, (str, bytes)):
        return _np.asarray(x)
    if isinstance(x, _np.ndarray):
        if x.dtype.kind in "US":
            return x
        if x.dtype.kind == "O" and x.size and isinstance(x.flat[0], (str, bytes)):
            return x
        return None
    if isinstance(x, (list, tuple)) and x:
        first = x[0]
        while isinstance(first, (list, tuple)) and first:
            first = first[0]
        if isinstance(first, (str, bytes)):
            return _np.asarray(x, dtype=object if isinstance(first, bytes) else None)
    return None


def to_array(x, dtype=None, device=None):
    """An ember array from an array-like: NumPy float64 becomes float32 (Keras's floatx)."""
    if isinstance(x, _e.ndarray):
        if dtype is not None and x.dtype != dtype:
            x = x.astype(dtype)
        elif dtype is None and x.dtype == _e.float64:
            x = x.astype(_e.float32)
        return x
    a = _np.asarray(x)
    if dtype is None and a.dtype.kind == "f":
        dtype = FLOATX
    elif dtype is None and a.dtype.kind == "b":
        dtype = "bool"
    return asarray(a, dtype=dtype, device=device)


# ---- the Layer base -----------------------------------------------------------------------------


class Layer(Module):
    """Keras's ``Layer``: weights made by ``build(input_shape)`` on the first call (on the device
    of that call's input), ``call(inputs, training=...)``, ``get_config``/``from_config``.

    It is also an ``ember.nn.Module`` (its weights are ``Parameter`` s), so ``ember.optim``
    optimizers and ``state_dict`` work on it directly.
    """

    def __init__(
        self,
        *,
        activity_regularizer=None,
        trainable=True,
        dtype=None,
        autocast=True,
        name=None,
        input_shape=None,
        input_dim=None,
        batch_size=None,
        batch_input_shape=None,
        input_length=None,
        **kwargs,
    ):
        super().__init__()
        if kwargs:
            raise TypeError(
                f"Unrecognized keyword arguments passed to {type(self).__name__}: {kwargs}"
            )
        from . import regularizers

        d = self.__dict__
        if name is not None and not isinstance(name, str):
            raise TypeError(f"{type(self).__name__}: name must be a string, got {name!r}")
        d["name"] = name or unique_name(to_snake_case(type(self).__name__))
        d["built"] = False
        d["_trainable"] = bool(trainable)
        d["_tracked"] = []  # Variables in creation order
        d["_inbound_nodes"] = []
        d["_build_shapes"] = None
        d["_losses"] = []
        d["_reg_items"] = []  # (variable, regularizer)
        d["activity_regularizer"] = regularizers.get(activity_regularizer)
        from .mixed_precision import resolve

        policy = resolve(dtype)  # Keras 3's dtype policy (the global one when dtype is None)
        d["dtype_policy"] = policy
        d["dtype"] = policy.variable_dtype
        d["_compute_dtype"] = policy.compute_dtype if policy.is_mixed else None
        d["autocast"] = autocast
        if batch_input_shape is not None:
            shape = standardize_shape(batch_input_shape, type(self).__name__)
        elif input_shape is not None:
            shape = (batch_size,) + standardize_shape(input_shape, type(self).__name__)
        elif input_dim is not None:
            shape = (batch_size, int(input_dim))
            if input_length is not None:
                shape = (batch_size, int(input_length), int(input_dim))
        else:
            shape = None
        d["_batch_input_shape"] = shape
        sig = inspect.signature(self.call).parameters
        d["_call_takes_training"] = "training" in sig
        d["_call_takes_mask"] = "mask" in sig
        d["_call_params"] = list(sig)
        # Keras 3's `<input>_mask` parameters (MultiHeadAttention's query_mask, value_mask,
        # key_mask): a functional model passes the mask of the tensor given as `<input>`
        d["_call_mask_args"] = tuple(p for p in sig if p.endswith("_mask") and p[:-5] in sig)

    # ---- properties ----

    @property
    def trainable(self):
        return self._trainable

    @trainable.setter
    def trainable(self, value):
        self.__dict__["_trainable"] = bool(value)
        for layer in self._flatten_layers(include_self=False):
            layer.__dict__["_trainable"] = bool(value)

    def _flatten_layers(self, include_self=True):
        """This layer and the Keras layers nested in it (depth first, each once)."""
        seen, out = set(), []

        def visit(layer):
            if id(layer) in seen:
                return
            seen.add(id(layer))
            out.append(layer)
            for child in layer._sublayers():
                visit(child)

        if include_self:
            visit(self)
        else:
            seen.add(id(self))
            for child in self._sublayers():
                visit(child)
        return out

    def _sublayers(self):
        found = []
        for v in self.__dict__.values():
            items = (
                v if isinstance(v, (list, tuple)) else v.values() if isinstance(v, dict) else [v]
            )
            for item in items:
                if isinstance(item, Layer) and item is not self:
                    found.append(item)
        for m in self._modules.values():
            if isinstance(m, Layer) and m not in found:
                found.append(m)
        return found

    def _all_variables(self):
        out, seen = [], set()
        for layer in self._flatten_layers():
            for v in layer._tracked:
                if id(v) not in seen:
                    seen.add(id(v))
                    out.append((layer, v))
        return out

    @property
    def trainable_weights(self):
        if not self.trainable:
            return []
        return [v for layer, v in self._all_variables() if layer.trainable and v.trainable]

    @property
    def non_trainable_weights(self):
        ids = {id(v) for v in self.trainable_weights}
        return [v for _, v in self._all_variables() if id(v) not in ids]

    @property
    def weights(self):
        return self.trainable_weights + self.non_trainable_weights

    trainable_variables = trainable_weights
    non_trainable_variables = non_trainable_weights
    variables = weights

    def count_params(self):
        if not self.built:
            raise ValueError(
                f"You tried to call `count_params` on layer '{self.name}', but the layer isn't "
                "built. You can build it manually via: `layer.build(input_shape)`."
            )
        return int(sum(int(_np.prod(v.shape)) for v in self.weights))

    def get_weights(self):
        """The weights as NumPy arrays (a copy to the host), in ``weights`` order."""
        return [asnumpy(v.detach()) for v in self.weights]

    def set_weights(self, weights):
        mine = self.weights
        if len(weights) != len(mine):
            raise ValueError(
                f"Layer {self.name!r} expected {len(mine)} variables, but received "
                f"{len(weights)} variables during loading. Expected: {[v.name for v in mine]}"
            )
        for v, w in zip(mine, weights, strict=True):
            if tuple(_np.shape(w)) != tuple(v.shape):
                raise ValueError(
                    f"Layer {self.name!r} weight shape {tuple(v.shape)} is not compatible with "
                    f"provided weight shape {tuple(_np.shape(w))}."
                )
        for v, w in zip(mine, weights, strict=True):
            v.assign(w)

    @property
    def losses(self):
        """Regularization losses of this layer and its sublayers, for the latest call."""
        out = []
        for layer in self._flatten_layers():
            out.extend(layer._losses)
            for v, reg in layer._reg_items:
                out.append(reg(v))
        return out

    def add_loss(self, loss):
        self._losses.append(loss)

    # ---- building ----

    def add_weight(
        self,
        shape=None,
        initializer=None,
        dtype=None,
        trainable=True,
        autocast=True,
        regularizer=None,
        constraint=None,
        aggregation="none",
        name=None,
    ):
        """Creates a weight on the current default device (the input's device in a first call).

        `initializer` defaults to ``glorot_uniform`` for floating weights, ``zeros`` otherwise.
        """
        from . import constraints, initializers, regularizers

        shape = () if shape is None else standardize_shape(shape, "add_weight")
        if any(s is None for s in shape):
            raise ValueError(f"add_weight: shape must be fully defined, got {shape}")
        dtype = dtype or self.dtype
        if initializer is None:
            initializer = "glorot_uniform" if "float" in str(dtype) else "zeros"
        init = initializers.get(initializer)
        value = init(shape, dtype=dtype)
        name = name or f"variable_{len(self._tracked)}"
        var = Variable(value, trainable=trainable, name=name, path=f"{self.name}/{name}")
        self._tracked.append(var)
        reg = regularizers.get(regularizer)
        if reg is not None:
            self._reg_items.append((var, reg))
        var._keras_constraint = constraints.get(constraint)  # applied after optimizer steps
        return var

    def build(self, input_shape):
        self.__dict__["built"] = True

    def _maybe_build(self, shapes):
        if self.built:
            return
        self.build(shapes)
        self.__dict__["built"] = True
        self.__dict__["_build_shapes"] = shapes

    def compute_output_shape(self, input_shape):
        """By running the layer on zeros of that shape (unknown sizes as 1); layers override."""

        ws = self._tracked
        device = ws[0].device if ws else None  # where the weights are, else the default

        def dummy(s):
            shape = tuple(1 if d is None else d for d in s)
            return _e.zeros(shape, dtype=self.dtype, device=device)

        args = _map_shapes(dummy, input_shape)
        with no_grad(), _TrainingScope(False):
            out = self.call(args)
        batch = _first_batch(input_shape)
        return map_structure(lambda a: (batch,) + tuple(a.shape[1:]), out)

    def call(self, inputs, *args, **kwargs):
        return inputs

    def forward(self, *args, **kwargs):
        return self.__call__(*args, **kwargs)

    # ---- calling ----

    def __call__(self, *args, **kwargs):
        if not args:
            raise TypeError(f"{self.name}: a layer is called with its inputs")
        inputs, rest = args[0], args[1:]
        if (
            isinstance(inputs, _e.ndarray)
            and not rest
            and len(kwargs) <= 1
            and (not kwargs or "training" in kwargs)
        ):
            # the common eager call (one array, maybe training=): no structure walking
            if self.autocast and inputs.dtype == _e.float64 and self.dtype == FLOATX:
                inputs = inputs.astype(_e.float32)
        else:
            leaves = flatten((args, kwargs))
            if any(isinstance(t, KerasTensor) for t in leaves):
                return self._symbolic_call(inputs, rest, kwargs)
            inputs = map_structure(self._convert_input, inputs)
        built_by_call = False
        if not self.built and self._builds_by_calling():
            built_by_call = True
        elif not self.built:
            shapes = map_structure(lambda t: tuple(t.shape), inputs)
            first = next((t for t in flatten(inputs) if isinstance(t, _e.ndarray)), None)
            if first is not None:
                with first.device:
                    self._maybe_build(shapes)
            else:
                self._maybe_build(shapes)
        if "mask" in kwargs and not self._call_takes_mask:
            del kwargs["mask"]
        training = kwargs.pop("training", None)
        if training is None:
            training = current_training()
        if self._call_takes_training:
            kwargs["training"] = bool(training) if training is not None else False
        d = self.__dict__
        if d["_losses"]:
            d["_losses"] = []
        saved = getattr(_CONTEXT, "training", None)
        _CONTEXT.training = training
        try:
            if d["_compute_dtype"] is None:
                out = self.call(inputs, *rest, **kwargs)
            else:
                from .mixed_precision import mixed_call

                out = mixed_call(self, inputs, rest, kwargs)
        finally:
            _CONTEXT.training = saved
        if built_by_call:
            self.__dict__["built"] = True
            self.__dict__["_build_shapes"] = map_structure(
                lambda t: (None,) + tuple(t.shape[1:]), inputs
            )
        if self.activity_regularizer is not None:
            for t in flatten(out):
                self._losses.append(self.activity_regularizer(t) / t.shape[0])
        return out

    @property
    def compute_dtype(self):
        return self.dtype_policy.compute_dtype

    @property
    def variable_dtype(self):
        return self.dtype_policy.variable_dtype

    supports_masking = False

    def compute_mask(self, inputs, mask=None):
        """The mask of this layer's output: the input's, for layers that support masking
        (Keras's rule), else None."""
        return mask if self.supports_masking else None

    def _builds_by_calling(self):
        """True for models whose first call creates the weights (subclassed Model)."""
        return False

    def _convert_input(self, x):
        if isinstance(x, _e.ndarray):
            if self.autocast and x.dtype == _e.float64 and self.dtype == FLOATX:
                return x.astype(_e.float32)
            return x
        if isinstance(x, (_np.ndarray, list, float, int)):
            text = host_strings(x) if not isinstance(x, (float, int)) else None
            return text if text is not None else to_array(x)
        return x

    def _symbolic_call(self, inputs, rest, kwargs):
        shapes = map_structure(
            lambda t: tuple(t.shape) if isinstance(t, KerasTensor) else t, inputs
        )
        if not self.built:
            self._maybe_build(shapes)
        kw = {k: v for k, v in kwargs.items() if k not in ("training", "mask")}
        out_shapes = self._call_output_shapes(shapes, rest, kw)
        node_index = len(self._inbound_nodes)
        dtype = self._output_dtype(inputs)
        if _is_single_shape(out_shapes):
            outputs = KerasTensor(out_shapes, dtype, history=(self, node_index, 0))
        else:
            counter = iter(range(10**9))
            outputs = _map_shapes(  # each shape is a leaf (map_structure would walk into it)
                lambda s: KerasTensor(s, dtype, history=(self, node_index, next(counter))),
                _shapes_as_structure(out_shapes),
            )
        for i, t in enumerate(flatten(outputs)):
            t.name = f"keras_tensor_{id(t) % 100000}" if t.name is None else t.name
            t._keras_history = (self, node_index, i)
        self._inbound_nodes.append(Node(self, (inputs,) + tuple(rest), kw, outputs))
        return outputs

    def _call_output_shapes(self, shapes, rest, kwargs):
        """The output shape(s) of a symbolic call: ``compute_output_shape`` of the first input's
        shapes; a layer of several call inputs or shape-changing options (MultiHeadAttention)
        overrides this."""
        return self.compute_output_shape(shapes)

    def _output_dtype(self, inputs):
        return self._compute_dtype or self.dtype

    def _call_argument(self, name, args, kwargs):
        """The value given for `call`'s parameter `name` in a call ``(args, kwargs)``."""
        if name in kwargs:
            return kwargs[name]
        i = self._call_params.index(name) if name in self._call_params else len(args)
        return args[i] if i < len(args) else None

    # ---- config ----

    def get_config(self):
        policy = self.dtype_policy
        dtype = policy.name if policy.is_mixed else self.dtype
        config = {"name": self.name, "trainable": self.trainable, "dtype": dtype}
        if self._batch_input_shape is not None:
            config["batch_input_shape"] = list(self._batch_input_shape)
        return config

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def get_build_config(self):
        if self._build_shapes is None:
            return None
        return {"input_shape": _jsonable_shape(self._build_shapes)}

    def build_from_config(self, config):
        if config and not self.built:
            self._maybe_build(_shape_from_json(config["input_shape"]))

    @property
    def input(self):
        if not self._inbound_nodes:
            raise AttributeError(f"Layer {self.name!r} has never been called and thus has no input")
        args = self._inbound_nodes[0].args
        return args[0]

    @property
    def output(self):
        if not self._inbound_nodes:
            raise AttributeError(f"Layer {self.name!r} has no inbound nodes and thus no output")
        return self._inbound_nodes[0].outputs

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name}, built={self.built}>"


def _is_single_shape(s):
    return isinstance(s, tuple) and all(d is None or isinstance(d, int) for d in s)


def _map_shapes(fn, s):
    """`fn` of each shape in a shape or a list/tuple/dict of shapes."""
    if _is_single_shape(s):
        return fn(s)
    if isinstance(s, (list, tuple)):
        return [_map_shapes(fn, x) for x in s]
    if isinstance(s, dict):
        return {k: _map_shapes(fn, v) for k, v in s.items()}
    raise TypeError(f"expected a shape tuple or a list/dict of them, got {s!r}")


def _shapes_as_structure(s):
    if _is_single_shape(s):
        return s
    if isinstance(s, (list, tuple)):
        return [_shapes_as_structure(x) for x in s]
    if isinstance(s, dict):
        return {k: _shapes_as_structure(v) for k, v in s.items()}
    raise TypeError(f"compute_output_shape must return shapes, got {s!r}")


def _first_batch(shapes):
    if _is_single_shape(shapes):
        return shapes[0] if shapes else None
    for s in flatten(shapes) if not isinstance(shapes, tuple) else shapes:
        if _is_single_shape(s):
            return s[0]
    return None


def _jsonable_shape(s):
    if _is_single_shape(s):
        return list(s)
    if isinstance(s, (list, tuple)):
        return [_jsonable_shape(x) for x in s]
    if isinstance(s, dict):
        return {k: _jsonable_shape(v) for k, v in s.items()}
    return s


def _shape_from_json(s):
    if isinstance(s, list) and all(d is None or isinstance(d, int) for d in s):
        return tuple(s)
    if isinstance(s, list):
        return [_shape_from_json(x) for x in s]
    if isinstance(s, dict):
        return {k: _shape_from_json(v) for k, v in s.items()}
    return s


@register
class InputLayer(Layer):
    """The layer behind ``keras.Input``: it holds the input's shape and dtype."""

    def __init__(self, shape=None, batch_size=None, dtype=None, name=None, batch_shape=None, **kw):
        kw.pop("sparse", None)
        kw.pop("ragged", None)
        if "input_shape" in kw:
            shape = kw.pop("input_shape")
        if "batch_input_shape" in kw:
            batch_shape = kw.pop("batch_input_shape")
        super().__init__(name=name or unique_name("input_layer"), dtype=dtype, **kw)
        if batch_shape is None:
            if shape is None:
                raise ValueError("InputLayer: you must pass a `shape` argument")
            batch_shape = (batch_size,) + standardize_shape(shape, "keras.Input")
        self.__dict__["batch_shape"] = standardize_shape(batch_shape, "keras.Input")
        self.__dict__["built"] = True
        out = KerasTensor(self.batch_shape, self.dtype, name=self.name, history=(self, 0, 0))
        self._inbound_nodes.append(Node(self, (), {}, out))
        self.__dict__["_input_tensor"] = out

    def get_config(self):
        return {"batch_shape": list(self.batch_shape), "dtype": self.dtype, "name": self.name}


def Input(shape=None, batch_size=None, dtype=None, name=None, batch_shape=None, **kwargs):  # noqa: N802
    """A symbolic input of the functional API: ``keras.Input(shape=(784,))``."""
    layer = InputLayer(
        shape=shape,
        batch_size=batch_size,
        dtype=dtype,
        name=name,
        batch_shape=batch_shape,
        **kwargs,
    )
    return layer._input_tensor
