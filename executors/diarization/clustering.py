"""Which local speakers of which chunks are the same person: clustering of their voice prints.

scikit-learn's agglomerative clustering (average linkage, cosine distance) groups the voice prints
made from enough clean speech, until the closest two groups are further apart than the threshold
(automatic count) or the requested number is left; a group with less than ``min_speaker_s`` of
speech is folded into the nearest one, and a count outside ``min..max_speakers`` is clustered
again to the nearest bound. With the count left open, two more steps count the voices of the whole
recording (both chosen on the speech-dev conversations and the meetings of bench/diarize.py):
groups whose mean voice prints are alike are merged (one voice heard in another room or through
another microphone is split by average linkage, whose pairwise distances its noisy prints inflate),
and the short voice prints unlike every group found become new voices when together they hold enough
speech (someone who only says a few words never has a voice print from a second of clean speech).
Then, chunk by chunk, local speakers go to the voices they sound most like, with the Hungarian method
(scipy) where stretches of different local speakers of one chunk overlap in time, so two people
talking at once never become one.
"""

from __future__ import annotations

import numpy as np

from .voiceprints import VoicePrints

MIN_TRAIN_S = 1.0   # voice prints from less clean speech than this are assigned, not clustered
MERGE_SIMILARITY = 0.5       # groups whose mean voice prints are this alike (cosine) are one voice
NEW_VOICE_SIMILARITY = 0.3   # a short voice print less like every voice than this may be someone new...
NEW_VOICE_S = 0.6            # ...when such prints alike hold this much clean speech together
MIN_NEW_PRINT_S = 0.3        # shorter voice prints are too unsteady to suggest a new voice


def _agglomerative(vectors: np.ndarray, n_clusters: int | None, threshold: float | None) -> np.ndarray:
    from sklearn.cluster import AgglomerativeClustering

    model = AgglomerativeClustering(n_clusters=n_clusters, metric="cosine", linkage="average",
                                    distance_threshold=threshold)
    return model.fit_predict(vectors)


def centroids(vectors: np.ndarray, labels: np.ndarray, k: int | None = None) -> np.ndarray:
    """[k, d] unit-length mean vector of each label 0..k-1 (k: the labels' own count by default); a label
    without vectors gets zeros."""
    k = (int(labels.max()) + 1 if len(labels) else 0) if k is None else k
    sums = np.zeros((k, vectors.shape[1]), np.float64)
    np.add.at(sums, labels, vectors)
    return (sums / np.maximum(np.linalg.norm(sums, axis=1, keepdims=True), 1e-8)).astype(vectors.dtype)


def _dense(labels: np.ndarray) -> np.ndarray:
    return np.unique(labels, return_inverse=True)[1].astype(np.int64)


def _fold_small(vectors: np.ndarray, labels: np.ndarray, sizes_s: np.ndarray, min_s: float,
                keep_at_least: int) -> np.ndarray:
    totals = np.bincount(labels, weights=sizes_s)
    big = np.flatnonzero(totals >= min_s)
    if len(big) < max(keep_at_least, 1):
        big = np.argsort(-totals, kind="stable")[:max(keep_at_least, 1)]
    if len(big) == len(totals):
        return labels
    small = ~np.isin(labels, big)
    out = labels.copy()
    out[small] = big[np.argmax(vectors[small] @ centroids(vectors, labels)[big].T, axis=1)]
    return _dense(out)


def voice_groups(vectors: np.ndarray, speech_s: np.ndarray, count_range: tuple[int, int], threshold: float,
                 min_speaker_s: float) -> np.ndarray:
    """A group (0..k-1) per voice print: the clustering step on its own."""
    n = len(vectors)
    lo, hi = count_range
    hi = min(hi, n)
    lo = min(lo, hi)
    if n <= 1 or hi <= 1:
        return np.zeros(n, np.int64)
    if lo == hi:
        return _dense(_agglomerative(vectors, lo, None))
    labels = _fold_small(vectors, _dense(_agglomerative(vectors, None, threshold)), speech_s, min_speaker_s, lo)
    found = int(labels.max()) + 1
    if not lo <= found <= hi:
        return _dense(_agglomerative(vectors, min(max(found, lo), hi), None))
    return merge_alike(vectors, labels, MERGE_SIMILARITY, lo)


def merge_alike(vectors: np.ndarray, labels: np.ndarray, similarity: float, keep_at_least: int) -> np.ndarray:
    """Merge the two groups with the most alike mean voice prints while they are at least ``similarity``
    alike and more than ``keep_at_least`` groups are left."""
    labels = labels.copy()
    while int(labels.max()) + 1 > max(keep_at_least, 1):
        means = centroids(vectors, labels)
        alike = means @ means.T
        np.fill_diagonal(alike, -2.0)
        i, j = np.unravel_index(int(np.argmax(alike)), alike.shape)
        if alike[i, j] < similarity:
            break
        labels = _dense(np.where(labels == max(i, j), min(i, j), labels))
    return labels


def new_voices(vectors: np.ndarray, speech_s: np.ndarray, voices: np.ndarray, threshold: float,
               room: int) -> np.ndarray:
    """Up to ``room`` mean voice prints of groups of short prints unlike all of ``voices``, loudest first."""
    far = np.flatnonzero((speech_s >= MIN_NEW_PRINT_S) & ((vectors @ voices.T).max(1) < NEW_VOICE_SIMILARITY))
    if room < 1 or not len(far):
        return np.zeros((0, vectors.shape[1]), vectors.dtype)
    groups = _dense(_agglomerative(vectors[far], None, threshold)) if len(far) > 1 else np.zeros(1, np.int64)
    totals = np.bincount(groups, weights=speech_s[far])
    keep = [k for k in np.argsort(-totals, kind="stable") if totals[k] >= NEW_VOICE_S][:room]
    return centroids(vectors[far], groups)[keep]


def _overlapping_groups(ranges: np.ndarray) -> list[np.ndarray]:
    """Indices of ``ranges`` ([n, 2] frames) grouped into runs that overlap in time."""
    order = np.argsort(ranges[:, 0], kind="stable")
    groups: list[list[int]] = []
    end = -1
    for i in order.tolist():
        if groups and ranges[i, 0] < end:
            groups[-1].append(i)
        else:
            groups.append([i])
        end = max(end, int(ranges[i, 1])) if len(groups[-1]) > 1 else int(ranges[i, 1])
    return [np.array(g) for g in groups]


def assign_voices(prints: VoicePrints, voices: np.ndarray) -> np.ndarray:
    """The voice of each voice print; stretches of one chunk that overlap in time get different voices."""
    from scipy.optimize import linear_sum_assignment

    if not len(voices):
        return np.full(len(prints), -1, np.int64)
    similarity = prints.vectors @ voices.T
    out = np.argmax(similarity, axis=1)
    for chunk in np.unique(prints.chunk):
        rows = np.flatnonzero(prints.chunk == chunk)
        for group in _overlapping_groups(prints.frames[rows]):
            if len(group) > 1 and len(set(prints.speaker[rows[group]].tolist())) > 1:
                taken, cols = linear_sum_assignment(similarity[rows[group]], maximize=True)
                out[rows[group[taken]]] = cols  # beyond the number of voices, the rest keep their best
    return out


def cluster_speakers(prints: VoicePrints, count_range: tuple[int, int], threshold: float,
                     min_speaker_s: float) -> np.ndarray:
    """The global speaker (0..k-1) of every voice print."""
    if not len(prints):
        return np.zeros(0, np.int64)
    train = prints.clean_s >= MIN_TRAIN_S
    if train.sum() < 2:
        train = np.ones(len(prints), bool)
    labels = voice_groups(prints.vectors[train], prints.clean_s[train], count_range, threshold, min_speaker_s)
    voices = centroids(prints.vectors[train], labels)
    lo, hi = count_range
    if lo != hi:
        voices = np.vstack([voices, new_voices(prints.vectors[~train], prints.clean_s[~train], voices, threshold,
                                               hi - len(voices))])
    return assign_voices(prints, voices)
