"""ember.keras.layers: Keras's layers (channels_last images, Keras's weight layouts)."""

from ._layer import Input, InputLayer, Layer
from ._layers_act import (
    ELU,
    ActivityRegularization,
    GaussianDropout,
    GaussianNoise,
    LeakyReLU,
    PReLU,
    ReLU,
    Softmax,
    SpectralNormalization,
    UnitNormalization,
)
from ._layers_attention import MultiHeadAttention
from ._layers_attention2 import AdditiveAttention, Attention
from ._layers_augment import (
    RandomBrightness,
    RandomContrast,
    RandomCrop,
    RandomFlip,
    RandomRotation,
    RandomTranslation,
    RandomZoom,
)
from ._layers_conv import (
    AveragePooling1D,
    AveragePooling2D,
    AveragePooling3D,
    AvgPool1D,
    AvgPool2D,
    BatchNormalization,
    Conv1D,
    Conv2D,
    Conv3D,
    GlobalAveragePooling1D,
    GlobalAveragePooling2D,
    GlobalAveragePooling3D,
    GlobalMaxPooling1D,
    GlobalMaxPooling2D,
    GlobalMaxPooling3D,
    LayerNormalization,
    MaxPool1D,
    MaxPool2D,
    MaxPooling1D,
    MaxPooling2D,
    MaxPooling3D,
    ZeroPadding1D,
    ZeroPadding2D,
)
from ._layers_convt import (
    Conv1DTranspose,
    Conv2DTranspose,
    DepthwiseConv1D,
    DepthwiseConv2D,
    SeparableConv1D,
    SeparableConv2D,
)
from ._layers_core import (
    Activation,
    Add,
    Average,
    Concatenate,
    Dense,
    Dropout,
    Embedding,
    Flatten,
    Lambda,
    Maximum,
    Minimum,
    Multiply,
    Permute,
    RepeatVector,
    Rescaling,
    Reshape,
    Subtract,
)
from ._layers_image import (
    CenterCrop,
    Cropping1D,
    Cropping2D,
    Resizing,
    UpSampling1D,
    UpSampling2D,
)
from ._layers_preproc import IntegerLookup, StringLookup
from ._layers_preproc2 import CategoryEncoding, Discretization, Hashing
from ._layers_rnn import GRU, LSTM, SimpleRNN
from ._layers_text import TextVectorization
from ._layers_wrap import Bidirectional, Normalization, TimeDistributed

__all__ = [
    "ELU",
    "ActivityRegularization",
    "GaussianDropout",
    "GaussianNoise",
    "LeakyReLU",
    "PReLU",
    "ReLU",
    "Softmax",
    "SpectralNormalization",
    "UnitNormalization",
    "RandomBrightness",
    "RandomContrast",
    "RandomCrop",
    "RandomFlip",
    "RandomRotation",
    "RandomTranslation",
    "RandomZoom",
    "Conv1DTranspose",
    "Conv2DTranspose",
    "DepthwiseConv1D",
    "DepthwiseConv2D",
    "SeparableConv1D",
    "SeparableConv2D",
    "CenterCrop",
    "Cropping1D",
    "Cropping2D",
    "Resizing",
    "UpSampling1D",
    "UpSampling2D",
    "Convolution1DTranspose",
    "Convolution2DTranspose",
    "SeparableConvolution1D",
    "SeparableConvolution2D",
    "AveragePooling1D",
    "AveragePooling2D",
    "AvgPool1D",
    "AvgPool2D",
    "BatchNormalization",
    "Bidirectional",
    "Conv1D",
    "Conv2D",
    "Conv3D",
    "AveragePooling3D",
    "MaxPooling3D",
    "GlobalAveragePooling3D",
    "GlobalMaxPooling3D",
    "MaxPool3D",
    "AvgPool3D",
    "Convolution1D",
    "Convolution2D",
    "Convolution3D",
    "concatenate",
    "add",
    "subtract",
    "multiply",
    "average",
    "maximum",
    "minimum",
    "GRU",
    "GlobalAveragePooling1D",
    "GlobalAveragePooling2D",
    "GlobalMaxPooling1D",
    "GlobalMaxPooling2D",
    "LSTM",
    "LayerNormalization",
    "MaxPool1D",
    "MultiHeadAttention",
    "Attention",
    "AdditiveAttention",
    "Normalization",
    "TimeDistributed",
    "MaxPool2D",
    "MaxPooling1D",
    "MaxPooling2D",
    "SimpleRNN",
    "TextVectorization",
    "StringLookup",
    "IntegerLookup",
    "CategoryEncoding",
    "Discretization",
    "Hashing",
    "ZeroPadding1D",
    "ZeroPadding2D",
    "Activation",
    "Add",
    "Average",
    "Concatenate",
    "Dense",
    "Dropout",
    "Embedding",
    "Flatten",
    "Input",
    "InputLayer",
    "Lambda",
    "Layer",
    "Maximum",
    "Minimum",
    "Multiply",
    "Permute",
    "RepeatVector",
    "Rescaling",
    "Reshape",
    "Subtract",
]

# Keras's aliases
Convolution1DTranspose = Conv1DTranspose
Convolution2DTranspose = Conv2DTranspose
SeparableConvolution1D = SeparableConv1D
SeparableConvolution2D = SeparableConv2D
MaxPool3D = MaxPooling3D
AvgPool3D = AveragePooling3D
Convolution1D = Conv1D
Convolution2D = Conv2D
Convolution3D = Conv3D


# Keras's functional forms of the merge layers: ``layers.concatenate([a, b], axis=-1)``
def concatenate(inputs, axis=-1, **kwargs):
    """``Concatenate(axis=axis, **kwargs)(inputs)``."""
    return Concatenate(axis=axis, **kwargs)(inputs)


def add(inputs, **kwargs):
    """``Add(**kwargs)(inputs)``."""
    return Add(**kwargs)(inputs)


def subtract(inputs, **kwargs):
    """``Subtract(**kwargs)(inputs)``."""
    return Subtract(**kwargs)(inputs)


def multiply(inputs, **kwargs):
    """``Multiply(**kwargs)(inputs)``."""
    return Multiply(**kwargs)(inputs)


def average(inputs, **kwargs):
    """``Average(**kwargs)(inputs)``."""
    return Average(**kwargs)(inputs)


def maximum(inputs, **kwargs):
    """``Maximum(**kwargs)(inputs)``."""
    return Maximum(**kwargs)(inputs)


def minimum(inputs, **kwargs):
    """``Minimum(**kwargs)(inputs)``."""
    return Minimum(**kwargs)(inputs)
