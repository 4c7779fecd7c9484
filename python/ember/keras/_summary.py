"""Model.summary(): Keras 3's table (layer name and type, output shape, parameter count, and
for functional models what each layer is connected to), then the parameter totals with their
memory size."""

from __future__ import annotations

import math

from ._layer import InputLayer, _shape_text


def readable_memory_size(n):
    for unit in ["B", "KB", "MB", "GB", "TB"]:
        if n / 1024 < 1:
            return f"{n:.2f} {unit}"
        n /= 1024
    return f"{n:.2f} PB"


def _params(vs):
    count = sum(math.prod(v.shape) for v in vs)
    size = sum(math.prod(v.shape) * v.dtype.itemsize for v in vs)
    return count, size


def _shape_str(shape):
    if shape is None:
        return "?"
    if isinstance(shape, tuple) and all(d is None or isinstance(d, int) for d in shape):
        return _shape_text(shape)
    if isinstance(shape, dict):
        return "{" + ", ".join(f"{k}: {_shape_str(v)}" for k, v in shape.items()) + "}"
    return "[" + ", ".join(_shape_str(s) for s in shape) + "]"


def _rows(model):
    from ._model import Functional
    from ._sequential import Sequential

    rows = []
    if isinstance(model, Sequential):
        shapes = model._shapes or [None] * len(model.layers)
        for layer, shape in zip(model.layers, shapes, strict=True):
            rows.append(
                [f"{layer.name} ({type(layer).__name__})", _shape_str(shape), _count(layer), None]
            )
        return rows, False
    if isinstance(model, Functional):
        for layer in model.layers:
            nodes = [n for n in layer._inbound_nodes if n in model._nodes]
            for node in nodes or [None]:
                if node is None:
                    shape, links = None, []
                else:
                    shape = _out_shape(node.outputs)
                    links = []
                    for t in node.input_tensors:
                        src, ni, ti = t._keras_history
                        links.append(f"{src.name}[{ni}][{ti}]")
                rows.append(
                    [
                        f"{layer.name} ({type(layer).__name__})",
                        _shape_str(shape),
                        _count(layer),
                        ", ".join(links) if links else "-",
                    ]
                )
        return rows, True
    for layer in model.layers:
        rows.append(
            [
                f"{layer.name} ({type(layer).__name__})",
                "?" if not layer.built else _shape_str(_guess_shape(layer)),
                _count(layer),
                None,
            ]
        )
    return rows, False


def _guess_shape(layer):
    if layer._build_shapes is None:
        return None
    try:
        return layer.compute_output_shape(layer._build_shapes)
    except Exception:  # a custom layer without compute_output_shape: show '?'
        return None


def _out_shape(outputs):
    from ._layer import map_structure

    return map_structure(lambda t: t.shape, outputs)


def _count(layer):
    if not layer.built and not isinstance(layer, InputLayer):
        return "0 (unbuilt)"
    return f"{_params(layer.weights)[0]:,}"


def print_summary(model, line_length=None, print_fn=None):
    out = print_fn or print
    rows, functional = _rows(model)
    headers = ["Layer (type)", "Output Shape", "Param #"] + (["Connected to"] if functional else [])
    widths = [29, 26, 13, 24] if functional else [33, 24, 15]
    for r in rows:
        for i in range(len(headers)):
            text = r[i] or ""
            widths[i] = max(widths[i], len(text) + 2)
    right = {2}

    def line(cells, sep, left, end):
        parts = []
        for i, w in enumerate(widths):
            text = cells[i] if cells[i] is not None else ""
            parts.append(" " + (text.rjust(w - 2) if i in right else text.ljust(w - 2)) + " ")
        return left + sep.join(parts) + end

    def rule(fill, left, mid, end):
        return left + mid.join(fill * w for w in widths) + end

    lines = [f'Model: "{model.name}"']
    lines.append(rule("━", "┏", "┳", "┓"))
    lines.append(line(headers, "┃", "┃", "┃"))
    lines.append(rule("━", "┡", "╇", "┩"))
    for i, r in enumerate(rows):
        lines.append(line(r, "│", "│", "│"))
        if i < len(rows) - 1:
            lines.append(rule("─", "├", "┼", "┤"))
    lines.append(rule("─", "└", "┴", "┘"))
    if model.built:
        total = _params(model.weights)
        train = _params(model.trainable_weights)
        non = _params(model.non_trainable_weights)
        lines.append(f" Total params: {total[0]:,} ({readable_memory_size(total[1])})")
        lines.append(f" Trainable params: {train[0]:,} ({readable_memory_size(train[1])})")
        lines.append(f" Non-trainable params: {non[0]:,} ({readable_memory_size(non[1])})")
    else:
        lines.append(" Total params: 0 (unbuilt)")
        lines.append(" Trainable params: 0 (unbuilt)")
        lines.append(" Non-trainable params: 0 (unbuilt)")
    out("\n".join(lines))
