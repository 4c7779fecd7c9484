"""ember.nn: neural-network modules with PyTorch's names and behaviour.

``Module`` (parameters, buffers, submodules, ``state_dict``, ``to``, ``train``/``eval``),
``Parameter``, containers, layers and losses. The math lives in ``ember.nn.functional``;
initializations in ``ember.nn.init``; gradient clipping in ``ember.nn.utils``.
"""

from . import functional, init, utils
from ._container import ModuleDict, ModuleList, Sequential
from ._layers import (
    GELU,
    BatchNorm1d,
    Bilinear,
    Dropout,
    Embedding,
    Flatten,
    Identity,
    LayerNorm,
    LeakyReLU,
    Linear,
    LogSoftmax,
    ReLU,
    RMSNorm,
    Sigmoid,
    SiLU,
    Softmax,
    Softplus,
    Tanh,
    Unflatten,
)
from ._loss import (
    BCELoss,
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    HuberLoss,
    KLDivLoss,
    L1Loss,
    MSELoss,
    NLLLoss,
    SmoothL1Loss,
)
from ._module import Module
from ._parameter import Parameter

__all__ = [
    "BCELoss",
    "BCEWithLogitsLoss",
    "BatchNorm1d",
    "Bilinear",
    "CrossEntropyLoss",
    "Dropout",
    "Embedding",
    "Flatten",
    "GELU",
    "HuberLoss",
    "Identity",
    "KLDivLoss",
    "L1Loss",
    "LayerNorm",
    "LeakyReLU",
    "Linear",
    "LogSoftmax",
    "MSELoss",
    "Module",
    "ModuleDict",
    "ModuleList",
    "NLLLoss",
    "Parameter",
    "RMSNorm",
    "ReLU",
    "SiLU",
    "Sequential",
    "Sigmoid",
    "SmoothL1Loss",
    "Softmax",
    "Softplus",
    "Tanh",
    "Unflatten",
    "functional",
    "init",
    "utils",
]
