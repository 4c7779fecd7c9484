"""``export_text``: the rules of a fitted decision tree as indented text (scikit-learn's
format, character for character). The flat tree arrays are read to the host once."""

from __future__ import annotations

from numbers import Integral

import numpy as np

import ember

from ..base import check_is_fitted, is_classifier
from ..exceptions import InvalidParameterError, sklearn_compatible

__all__ = ["export_text"]


def _np(v):
    return ember.asnumpy(v) if isinstance(v, ember.ndarray) else np.asarray(v)


def _check_int(name, value, low):
    if isinstance(value, bool) or not isinstance(value, Integral) or value < low:
        raise sklearn_compatible(InvalidParameterError)(
            f"The '{name}' parameter of export_text must be an int in the range [{low}, inf). "
            f"Got {value!r} instead."
        )


def export_text(
    decision_tree,
    *,
    feature_names=None,
    class_names=None,
    max_depth=10,
    spacing=3,
    decimals=2,
    show_weights=False,
):
    """A text report of the decision rules of ``decision_tree`` (a fitted tree estimator)."""
    _check_int("max_depth", max_depth, 0)
    _check_int("spacing", spacing, 1)
    _check_int("decimals", decimals, 0)
    check_is_fitted(decision_tree)
    tree = decision_tree.tree_
    # scikit-learn's own trees carry no _estimator_type any more: classes_ tells them apart
    clf = is_classifier(decision_tree) or hasattr(decision_tree, "classes_")
    if clf:
        if class_names is None:
            class_names = _np(decision_tree.classes_)
        elif len(class_names) != len(decision_tree.classes_):
            raise ValueError(
                "When `class_names` is an array, it should contain as many items as "
                f"`decision_tree.classes_`. Got {len(class_names)} while the tree was fitted "
                f"with {len(decision_tree.classes_)} classes."
            )
    if feature_names is not None and len(feature_names) != tree.n_features:
        raise ValueError(
            f"feature_names must contain {tree.n_features} elements, got {len(feature_names)}"
        )
    feature = _np(tree.feature)
    threshold = _np(tree.threshold)
    left, right = _np(tree.children_left), _np(tree.children_right)
    values = _np(tree.value)
    weights = _np(tree.weighted_n_node_samples)
    n_classes = np.atleast_1d(_np(tree.n_classes))
    if feature_names is not None:
        names = [feature_names[i] if i >= 0 else None for i in feature]
    else:
        names = [f"feature_{i}" for i in feature]
    value_fmt = (
        ("{}{} weights: {}\n" if show_weights else "{}{}{}\n") if clf else "{}{} value: {}\n"
    )
    lines = []

    def depth_of(node):
        if left[node] == -1:
            return 1
        return 1 + max(depth_of(left[node]), depth_of(right[node]))

    def leaf(value, w, class_name, indent):
        if clf:
            val = ""
            if show_weights:
                val = "[" + ", ".join(f"{v * w:.{decimals}f}" for v in value) + "]"
            val += " class: " + str(class_name)
        else:
            val = "[" + ", ".join(f"{v:.{decimals}f}" for v in value) + "]"
        lines.append(value_fmt.format(indent, "", val))

    def walk(node, depth):
        indent = ("|" + " " * spacing) * depth
        indent = indent[:-spacing] + "-" * spacing
        value = values[node][0] if tree.n_outputs == 1 else values[node].T[0]
        class_name = int(np.argmax(value))
        if n_classes[0] != 1 and tree.n_outputs == 1:
            class_name = class_names[class_name]
        if depth <= max_depth + 1:
            if left[node] != -1:
                name = names[node]
                thr = f"{threshold[node]:.{decimals}f}"
                lines.append(f"{indent} {name} <= {thr}\n")
                walk(left[node], depth + 1)
                lines.append(f"{indent} {name} >  {thr}\n")
                walk(right[node], depth + 1)
            else:
                leaf(value, weights[node], class_name, indent)
        else:
            sub = depth_of(node)
            if sub == 1:
                leaf(value, weights[node], class_name, indent)
            else:
                lines.append(f"{indent} truncated branch of depth {sub}\n")

    walk(0, 1)
    return "".join(lines)
