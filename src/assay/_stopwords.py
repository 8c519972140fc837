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

Six more lists, each a small word set for one reader, live here too (so no other module keeps
a stop-word set; `tests/test_stopwords.py` checks that):

* `AUDIT_STOPWORDS`: the leakage audit's (`assay.audit.overlap`): `STOPWORDS` and the
  comparison words an n-gram made only of function words must also skip;
* `QUERY_STOPWORDS`: the words production-log query matching drops before it compares token
  sets (`assay.logs.classify.tokens`);
* `FACT_QUERY_FILLER`: the words (after stemming) the filings pipeline's facts context ignores
  when it matches a question to a financial concept (`assay.systems.filings.facts_context`);
* `CONCEPT_GLUE`: the words a facts-table search ignores in a concept's name
  (`assay.corpus.factsearch`);
* `FOLLOW_UP_FILLER`: the words of a follow-up question that name no measure (the asking, the
  period, the comparison: "and what about the same figure the year before"), which the filings
  pipeline sets aside to tell whether a follow-up names its own measure
  (`assay.systems.filings.history`);
* `ASKING_FILLER`: the words that only ask or thank ("please tell me", "thanks"), set aside
  from both queries when a sealed fresh sample looks for a near-duplicate of its entries
  (`assay.dataset.fresh`).

The judge's two lists decide verdicts, and the index's decides retrieval: a word moved from one
group to another changes behaviour (`tests/test_stopwords.py` pins every list).
"""

from __future__ import annotations

__all__ = [
    "ASKING_FILLER",
    "AUDIT_STOPWORDS",
    "CONCEPT_GLUE",
    "CONCEPT_STOPWORDS",
    "FACT_QUERY_FILLER",
    "FACT_STOPWORDS",
    "FOLLOW_UP_FILLER",
    "QUERY_STOPWORDS",
    "STOPWORDS",
]

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

AUDIT_STOPWORDS = STOPWORDS | frozenset(["during", "over", "per", "those", "versus", "vs"])
"""The leakage audit's: an n-gram made only of these is never evidence of copying."""

QUERY_STOPWORDS = frozenset(["&", "a", "an", "and", "at", "by", "did", "does", "for", "how", "in",
                             "is", "it", "its", "of", "on", "or", "the", "to", "was", "what"])  # fmt: skip
"""Dropped from a logged query's tokens before their sets are compared (few, so that two
questions that differ by "which" or "with" stay apart)."""

FACT_QUERY_FILLER = frozenset(["a", "an", "and", "are", "as", "at", "did", "do", "does", "end",
                               "fiscal", "for", "fy", "how", "in", "is", "its", "just", "latest",
                               "most", "much", "number", "of", "on", "q", "qtr", "quarter",
                               "recent", "report", "reported", "s", "the", "to", "total", "was",
                               "were", "what", "year"])  # fmt: skip
"""Words of a question that name no financial concept (the asking, the period, the report)."""

CONCEPT_GLUE = frozenset(["a", "an", "and", "by", "for", "in", "of", "on", "s", "the", "to"])
"""The joining words of a concept's name ("cost of goods sold")."""

FOLLOW_UP_FILLER = (
    _FUNCTION
    | _BE_FORMS
    | _CLAUSE
    | _INDEX_ONLY
    | frozenset(["about", "again", "after", "ago", "also", "before", "by", "calendar", "change",
                 "changed", "compare", "compared", "comparison", "decline", "declined",
                 "decrease", "decreased", "differ", "difference", "down", "earlier", "figure",
                 "figures", "fiscal", "following", "fy", "give", "grew", "grow", "growth",
                 "increase", "increased", "last", "later", "let", "look", "me", "move", "moved",
                 "much", "next", "now", "number", "numbers", "ok", "okay", "one", "over",
                 "period", "please", "preceding", "previous", "prior", "pull", "quarter",
                 "quarters", "question", "report", "reported", "same", "sequentially", "show",
                 "tell", "than", "thanks", "up", "versus", "vs", "year", "years", "yoy", "y/y",
                 "you"])
)  # fmt: skip
"""Words of a follow-up question that name no measure (`assay.systems.filings.history`)."""

ASKING_FILLER = frozenset(["can", "cheers", "could", "give", "hello", "hey", "hi", "i", "kindly",
                           "know", "let", "like", "me", "need", "please", "pls", "show", "tell",
                           "thank", "thanks", "thx", "to", "want", "would", "you"])  # fmt: skip
"""Words that only ask or thank ("Please tell me: ... Thanks"), which a sealed fresh sample's
near-duplicate rule sets aside from both queries (`assay.dataset.fresh`)."""
