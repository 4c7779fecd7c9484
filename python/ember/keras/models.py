"""ember.keras.models: Sequential, Model and load_model."""

from ._model import Functional, Model
from ._saving import load_model, save_model
from ._sequential import Sequential


def clone_model(model, input_tensors=None, clone_function=None):
    """A new model with the same architecture (fresh weights), from the model's config."""
    from ._saving import deserialize_layer, serialize_layer

    if input_tensors is not None or clone_function is not None:
        raise ValueError(
            "ember.keras.models.clone_model: input_tensors and clone_function are not supported"
        )
    conf = serialize_layer(model)
    conf.pop("build_config", None)
    return deserialize_layer(conf)


def model_from_json(json_string, custom_objects=None):
    """The model (fresh weights) that ``model.to_json()`` describes."""
    import json

    from ._saving import deserialize_layer

    return deserialize_layer(json.loads(json_string), custom_objects)


__all__ = [
    "Functional",
    "Model",
    "Sequential",
    "clone_model",
    "load_model",
    "model_from_json",
    "save_model",
]
