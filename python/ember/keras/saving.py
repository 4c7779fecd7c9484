"""ember.keras.saving: load_model/save_model and registration of custom classes."""

from ._layer import register_keras_serializable
from ._saving import load_model, save_model

__all__ = ["load_model", "register_keras_serializable", "save_model"]
