"""ember.ml.manifold (scikit-learn's sklearn.manifold): SpectralEmbedding, spectral_embedding,
TSNE (exact gradient on the device), trustworthiness and Isomap."""

from ._isomap import Isomap
from ._spectral_embedding import SpectralEmbedding, spectral_embedding
from ._tsne import TSNE, trustworthiness

__all__ = ["Isomap", "SpectralEmbedding", "TSNE", "spectral_embedding", "trustworthiness"]
