"""Relevance on an absolute scale, between 0 and 1: the keyword side as a share of the
query's own keyword mass, and the blend of it with the cosine (memcli.logic.search ranks
by it; docs/search.md, "What a score means")."""

from __future__ import annotations

import numpy as np

from memcli.store.config import SearchSettings


def keyword_share(keyword: np.ndarray, ideal: float | None, settings: SearchSettings) -> np.ndarray:
    """The keyword side in [0, 1]: BM25 over the query's keyword mass `ideal` (at most
    1), or bm25 / (bm25 + keyword_saturation) where the mass is not known (None)."""
    raw = np.maximum(keyword.astype(np.float64), 0.0)
    if ideal is None:
        return raw / (raw + max(settings.keyword_saturation, 1e-9))
    if ideal <= 0:
        return np.zeros_like(raw)
    return np.minimum(raw / ideal, 1.0)


def absolute_relevance(
    semantic: np.ndarray,
    share: np.ndarray,
    mode: str,
    settings: SearchSettings,
    read: np.ndarray | None = None,
) -> np.ndarray:
    """Relevance in [0, 1] from the cosine (below 0 counted as 0; times `read`, how much
    the model reads the pair) and the keyword `share` (in full from a cosine of
    keyword_cosine up where the model reads the pair): the better of the balanced blend
    (semantic_weight, keyword_weight) and the semantic-led one (semantic_lead); one side
    alone in semantic or keyword mode."""
    sem = np.clip(semantic.astype(np.float64), 0.0, 1.0)
    if settings.keyword_cosine > 0 and mode == "hybrid":
        # a word the texts share, where the model reads them as unrelated, is a
        # coincidence ("blood type" and "Types on a split keyboard"): the share counts
        # in full from a cosine of keyword_cosine up, in proportion below it
        trust = np.clip(sem / settings.keyword_cosine, 0.0, 1.0)
        share = share * (1.0 - (1.0 if read is None else read) * (1.0 - trust))
    if read is not None:
        sem = sem * read
    if mode == "semantic":
        return sem
    if mode == "keyword":
        return share
    total = settings.semantic_weight + settings.keyword_weight or 1.0
    balanced = (settings.semantic_weight * sem + settings.keyword_weight * share) / total
    lead = min(max(settings.semantic_lead, 0.0), 1.0)
    return np.maximum(balanced, lead * sem + (1.0 - lead) * share)
