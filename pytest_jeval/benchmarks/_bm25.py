"""Okapi BM25 ranking, as upstream benchmarks rank with the ``rank_bm25`` package's ``BM25Okapi`` (DeepPlanning's
``search_products``, AMA-Bench's BM25 memory): k1 = 1.5, b = 0.75, and a term in more than half the documents,
whose idf would be negative, given 0.25 times the mean idf instead. Written here so no extra package is needed."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence


class BM25:
    """BM25 scores of a query against a fixed corpus of tokenized documents."""

    def __init__(self, corpus: Sequence[Sequence[str]], k1: float = 1.5, b: float = 0.75,
                 epsilon: float = 0.25) -> None:
        self.k1, self.b = k1, b
        self.freqs = [Counter(doc) for doc in corpus]
        self.lengths = [len(doc) for doc in corpus]
        count = len(corpus)
        self.mean_length = sum(self.lengths) / count if count else 0.0
        containing: Counter[str] = Counter()
        for freq in self.freqs:
            containing.update(freq.keys())
        self.idf = {word: math.log(count - n + 0.5) - math.log(n + 0.5) for word, n in containing.items()}
        mean_idf = sum(self.idf.values()) / len(self.idf) if self.idf else 0.0
        for word, value in self.idf.items():
            if value < 0:
                self.idf[word] = epsilon * mean_idf

    def scores(self, query: Sequence[str]) -> list[float]:
        """The score of every document, in corpus order (a repeated query term counts each time)."""
        out = [0.0] * len(self.freqs)
        for term in query:
            idf = self.idf.get(term, 0.0)
            for i, freq in enumerate(self.freqs):
                tf = freq.get(term, 0)
                if tf:
                    norm = 1 - self.b + self.b * self.lengths[i] / self.mean_length
                    out[i] += idf * tf * (self.k1 + 1) / (tf + self.k1 * norm)
        return out
