"""Group window embeddings by voice: scikit-learn's agglomerative clustering on cosine distance.

Average linkage merges the two closest groups until the closest pair is further apart than the
threshold (automatic count), or until the requested number of groups is left. A count outside
``min_speakers..max_speakers`` is brought inside by clustering again to the nearest bound.
"""

from __future__ import annotations

import numpy as np


def _agglomerative(embeddings: np.ndarray, n_clusters: int | None, threshold: float | None) -> np.ndarray:
    from sklearn.cluster import AgglomerativeClustering

    model = AgglomerativeClustering(n_clusters=n_clusters, metric="cosine", linkage="average",
                                    distance_threshold=threshold)
    return model.fit_predict(embeddings)


def cluster_voices(embeddings: np.ndarray, count_range: tuple[int, int], threshold: float) -> np.ndarray:
    """A cluster index per embedding row, numbered in order of first appearance."""
    n = len(embeddings)
    if n == 0:
        return np.zeros(0, np.int64)
    lo, hi = count_range
    hi = min(hi, n)
    lo = min(lo, hi)
    if n == 1 or hi == 1:
        return np.zeros(n, np.int64)
    if lo == hi:
        labels = _agglomerative(embeddings, lo, None)
    else:
        labels = _agglomerative(embeddings, None, threshold)
        found = len(set(labels.tolist()))
        if not lo <= found <= hi:
            labels = _agglomerative(embeddings, min(max(found, lo), hi), None)
    return first_appearance_order(labels)


def first_appearance_order(labels: np.ndarray) -> np.ndarray:
    order: dict[int, int] = {}
    for label in labels.tolist():
        order.setdefault(label, len(order))
    return np.array([order[label] for label in labels.tolist()], np.int64)


def centroids(embeddings: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """[k, d] unit-length mean embedding of each cluster."""
    k = int(labels.max()) + 1 if len(labels) else 0
    out = np.stack([embeddings[labels == i].mean(0) for i in range(k)]) if k else np.zeros((0, embeddings.shape[1]))
    return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-8)
