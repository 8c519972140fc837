"""The one list of English function words that assay's text tools leave out.

The filings pipeline's lexical index drops these before stemming (`assay.systems.filings.index`);
the leakage audit (`assay.audit.overlap`) never counts an n-gram made only of function words as
evidence of copying, and adds a few comparison words that its n-grams must also skip. Changing
this list changes the index's tokens, and so retrieval results: re-measure the pipeline.
"""

from __future__ import annotations

__all__ = ["STOPWORDS"]

STOPWORDS = frozenset(
    [
        "a",
        "all",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "been",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "how",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "may",
        "might",
        "of",
        "on",
        "or",
        "our",
        "should",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "was",
        "were",
        "what",
        "when",
        "where",
        "whether",
        "which",
        "while",
        "who",
        "why",
        "will",
        "with",
        "would",
    ]
)
