"""ember.nn.functional: the math of the nn layers and losses as functions, in ember ops only.

Every function runs on any device and is differentiated through the ops it is written in (or
through its fused kernel's backward). Names, arguments and results follow
``torch.nn.functional``. Bad input raises ``TypeError`` (not an array, wrong dtype kind) or
``ValueError`` (shapes, arguments) naming the function and the offending value.

Fused kernels: ``softmax``, ``log_softmax``, ``cross_entropy`` with class-index targets and
``layer_norm`` run one backend kernel per row (``ember._core._softmax`` / ``_cross_entropy`` /
``_layer_norm``, src/core/rows.cpp) for real floating inputs, with fused backward kernels; the
composed versions beside them are the path for what those kernels do not take (integer or
complex inputs, probability targets, class weights that require grad or have another dtype,
affine parameters of another dtype).

The functions live in private modules by topic, re-exported here: ``_functional_activation``
(activations, softmax), ``_functional_layers`` (linear maps, dropout, embedding, one_hot),
``_functional_norm`` (normalizations), ``_functional_loss`` (losses); ``_functional_checks``
holds the argument checks they share.
"""

from __future__ import annotations

from ._functional_activation import (
    gelu,
    leaky_relu,
    log_softmax,
    logsigmoid,
    relu,
    sigmoid,
    silu,
    softmax,
    softplus,
    tanh,
)
from ._functional_attention import scaled_dot_product_attention
from ._functional_conv import (
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_max_pool2d,
    avg_pool1d,
    avg_pool2d,
    conv1d,
    conv2d,
    conv3d,
    conv_transpose1d,
    conv_transpose2d,
    fold,
    max_pool1d,
    max_pool2d,
    max_pool3d,
    pad,
    pixel_shuffle,
    unfold,
)
from ._functional_extra import (
    celu,
    cosine_embedding_loss,
    cosine_similarity,
    ctc_loss,
    elu,
    gaussian_nll_loss,
    hardsigmoid,
    hardswish,
    hardtanh,
    margin_ranking_loss,
    mish,
    normalize,
    pairwise_distance,
    poisson_nll_loss,
    prelu,
    relu6,
    selu,
    softmin,
    threshold,
    triplet_margin_loss,
)
from ._functional_image import (
    dropout2d,
    group_norm,
    instance_norm,
    interpolate,
)
from ._functional_layers import (
    bilinear,
    dropout,
    embedding,
    linear,
    one_hot,
)
from ._functional_loss import (
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    cross_entropy,
    huber_loss,
    kl_div,
    l1_loss,
    mse_loss,
    nll_loss,
    smooth_l1_loss,
)
from ._functional_mha import multi_head_attention_forward
from ._functional_norm import (
    batch_norm,
    layer_norm,
    rms_norm,
)
from ._functional_sample import affine_grid, glu, grid_sample, gumbel_softmax

__all__ = [
    "dropout2d",
    "group_norm",
    "instance_norm",
    "interpolate",
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_max_pool2d",
    "avg_pool1d",
    "avg_pool2d",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "fold",
    "max_pool1d",
    "max_pool2d",
    "max_pool3d",
    "pad",
    "pixel_shuffle",
    "unfold",
    "scaled_dot_product_attention",
    "multi_head_attention_forward",
    "affine_grid",
    "glu",
    "grid_sample",
    "gumbel_softmax",
    "celu",
    "cosine_embedding_loss",
    "cosine_similarity",
    "ctc_loss",
    "elu",
    "gaussian_nll_loss",
    "hardsigmoid",
    "hardswish",
    "hardtanh",
    "margin_ranking_loss",
    "mish",
    "normalize",
    "pairwise_distance",
    "poisson_nll_loss",
    "prelu",
    "relu6",
    "selu",
    "softmin",
    "threshold",
    "triplet_margin_loss",
    "batch_norm",
    "bilinear",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "cross_entropy",
    "dropout",
    "embedding",
    "gelu",
    "huber_loss",
    "kl_div",
    "l1_loss",
    "layer_norm",
    "leaky_relu",
    "linear",
    "log_softmax",
    "logsigmoid",
    "mse_loss",
    "nll_loss",
    "one_hot",
    "relu",
    "rms_norm",
    "sigmoid",
    "silu",
    "smooth_l1_loss",
    "softmax",
    "softplus",
    "tanh",
]
