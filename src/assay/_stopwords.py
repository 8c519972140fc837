"""The English function words that assay's text tools leave out, kept in one place.

Three lists are built here from shared groups, each for the way its user reads text:

* `STOPWORDS`: the filings pipeline's lexical index drops these before stemming
  (`assay.systems.filings.index`); the leakage audit (`assay.audit.overlap`) never counts an
  n-gram made only of function words as evidence of copying, and adds a few comparison words
  that its n-grams must also skip. Changing this list changes the index's tokens, and so
  retrieval results: re-measure the pipeline.
* `FACT_STOPWORDS`: the words that `assay.judge.numeric.fact_present` leaves out before it asks
  whether 80% of a key fact's words are in the answer. It compares surface words (no lemmas),
  so the forms of "be" are listed; modal verbs, quantifiers and pronouns ("will", "may",
  "all", "they") stay in as content, so "sales will fall" is not covered by "sales fall".
* `CONCEPT_STOPWORDS`: the words `assay.judge.meaning` finds no concept in, and that never
  start a proper name. It compares lemmas, so "is", "was" and "did" reach it as "be" and "do",
  and "but" is a clause break before it is a word; it leaves out hedges ("approximately"),
  modals, pronouns and the words of a period ("fiscal year ended"), which its period reading
  handles.

The judge's two lists decide verdicts, and the index's decides retrieval: a word moved from one
group to another changes behaviour (`tests/test_stopwords.py` pins all three).
"""

from __future__ import annotations

__all__ = ["CONCEPT_STOPWORDS", "FACT_STOPWORDS", "STOPWORDS"]

_FUNCTION = frozenset(["a", "an", "and", "as", "at", "be", "by", "for", "from", "how", "in",
                       "into", "it", "its", "of", "on", "or", "than", "that", "the", "their",
                       "then", "this", "to", "what", "when", "where", "which", "who", "with"])  # fmt: skip
"""Articles, prepositions, conjunctions and wh-words: left out by every list."""

_BE_FORMS = frozenset(["are", "been", "is", "was", "were"])
"""The inflected forms of "be" (the concept reader meets them as the lemma "be")."""

_CLAUSE = frozenset(["all", "any", "can", "could", "do", "have", "if", "may", "might", "our",
                     "should", "them", "there", "these", "they", "whether", "while", "will",
                     "would"])  # fmt: skip
"""Modal and auxiliary verbs, quantifiers, pronouns and clause openers: function words to the
index and to the concept reader, content to the key-fact word test."""

_INDEX_ONLY = frozenset(["but", "did", "does", "had", "has", "why"])
"""Function words to the index; the concept reader meets them as a clause break ("but") or as
lemmas ("do", "have")."""

_JUDGE = frozenset(["fy", "her", "his", "over", "per", "so", "such", "under", "whom"])
"""Function words to both answer readers that the index keeps."""

_CONCEPT_ONLY = frozenset(["about", "also", "approximately", "around", "both", "each", "end",
                           "ended", "fiscal", "here", "i", "just", "my", "nearly", "only",
                           "period", "roughly", "s", "shall", "some", "those", "us", "very",
                           "we", "whose", "year", "you", "your"])  # fmt: skip
"""Hedges, pronouns and period words that carry no concept of an answer."""

STOPWORDS = _FUNCTION | _BE_FORMS | _CLAUSE | _INDEX_ONLY
"""The index's and the leakage audit's function words."""

FACT_STOPWORDS = _FUNCTION | _BE_FORMS | _JUDGE
"""The words a key fact's word-coverage test leaves out (`assay.judge.numeric`)."""

CONCEPT_STOPWORDS = _FUNCTION | _CLAUSE | _JUDGE | _CONCEPT_ONLY
"""The words in which the concept reader finds no concept (`assay.judge.meaning`)."""
