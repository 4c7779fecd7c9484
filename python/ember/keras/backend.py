"""ember.keras.backend: the few backend queries Keras code uses (floatx, epsilon, image data
format, clear_session)."""

from ._layer import clear_session

__all__ = ["backend", "clear_session", "epsilon", "floatx", "image_data_format"]


def floatx():
    return "float32"


def epsilon():
    return 1e-7


def image_data_format():
    return "channels_last"


def backend():
    return "ember"
