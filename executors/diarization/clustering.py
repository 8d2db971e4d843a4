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


def cluster_voices(embeddings: np.ndarray, count_range: tuple[int, int], threshold: float,
                   min_size: int = 1, weights: np.ndarray | None = None) -> np.ndarray:
    """A cluster index per embedding row, numbered in order of first appearance.

    With an automatic count, clusters of fewer than ``min_size`` rows are folded into the nearest
    bigger one (size = sum of ``weights``, one per row by default): windows that straddle a change of speaker sound like neither and would otherwise
    surface as extra "speakers". Every row then goes to its nearest centroid once.
    """
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
        labels = _fold_small(embeddings, labels, min_size, lo, weights)
        found = len(set(labels.tolist()))
        if not lo <= found <= hi:
            labels = _agglomerative(embeddings, min(max(found, lo), hi), None)
    return first_appearance_order(_nearest_centroid(embeddings, labels))


def _fold_small(embeddings: np.ndarray, labels: np.ndarray, min_size: int, keep_at_least: int,
                weights: np.ndarray | None) -> np.ndarray:
    labels = first_appearance_order(labels)
    sizes = np.bincount(labels, weights=weights)
    big = np.flatnonzero(sizes >= min_size)
    if len(big) < max(keep_at_least, 1):
        big = np.argsort(-sizes, kind="stable")[:max(keep_at_least, 1)]
    if len(big) == len(sizes):
        return labels
    cents = centroids(embeddings, labels)[big]
    small = ~np.isin(labels, big)
    out = labels.copy()
    out[small] = big[np.argmax(embeddings[small] @ cents.T, axis=1)]
    return out


def _nearest_centroid(embeddings: np.ndarray, labels: np.ndarray) -> np.ndarray:
    labels = first_appearance_order(labels)
    moved = np.argmax(embeddings @ centroids(embeddings, labels).T, axis=1)
    return moved if len(set(moved.tolist())) == len(set(labels.tolist())) else labels


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


def unit_ids(centers: np.ndarray, span_ends: np.ndarray, max_unit_s: float) -> np.ndarray:
    """Group windows into units: runs inside one speech span, cut every ``max_unit_s`` seconds.

    Within one stretch of speech between pauses the voice rarely changes, so a unit's mean
    embedding is a steadier voice print than any single 1.6 s window.
    """
    span = np.searchsorted(span_ends, centers, side="right")
    span_start = np.concatenate([[0.0], span_ends])[np.minimum(span, len(span_ends))]
    piece = np.floor((centers - span_start) / max_unit_s).astype(np.int64)
    keys = span * 100_000 + piece
    _, ids = np.unique(keys, return_inverse=True)
    return ids


def cluster_units(embeddings: np.ndarray, units: np.ndarray, count_range: tuple[int, int], threshold: float,
                  min_size: int) -> np.ndarray:
    """Cluster the units' mean embeddings, then label each window by its nearest voice centroid."""
    n_units = int(units.max()) + 1 if len(units) else 0
    if n_units == 0:
        return np.zeros(0, np.int64)
    means = np.stack([embeddings[units == u].mean(0) for u in range(n_units)])
    means /= np.maximum(np.linalg.norm(means, axis=1, keepdims=True), 1e-8)
    weights = np.bincount(units, minlength=n_units)
    unit_labels = cluster_voices(means, count_range, threshold, min_size, weights)
    window_labels = unit_labels[units]
    cents = centroids(embeddings, window_labels)
    return first_appearance_order(np.argmax(embeddings @ cents.T, axis=1))
