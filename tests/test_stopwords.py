"""The three stop-word lists are built from one set of groups (`assay._stopwords`); each is
pinned here word for word, because each decides behaviour: the index's tokens (and so
retrieval), the key-fact coverage test and the concept reader of answer checks."""

from __future__ import annotations

from assay import _stopwords
from assay._stopwords import CONCEPT_STOPWORDS, FACT_STOPWORDS, STOPWORDS

INDEX = """a all an and any are as at be been but by can could did do does for from had has
have how if in into is it its may might of on or our should than that the their them then there
these they this to was were what when where whether which while who why will with would"""

FACT = """a an and are as at be been by fy for from her his how in into is it its of on or over
per so such than that the their then this to under was were what when where which who whom
with"""

CONCEPT = """a about all also an and any approximately around as at be both by can could do each
end ended fiscal for from fy have her here his how i if in into it its just may might my nearly
of on only or our over per period roughly s shall should so some such than that the their them
then there these they this those to under us very we what when where whether which while who
whom whose will with would year you your"""


def test_each_list_is_pinned() -> None:
    assert frozenset(INDEX.split()) == STOPWORDS
    assert frozenset(FACT.split()) == FACT_STOPWORDS
    assert frozenset(CONCEPT.split()) == CONCEPT_STOPWORDS


def test_the_readers_use_the_shared_lists() -> None:
    from assay.audit import overlap
    from assay.judge import meaning, numeric

    assert numeric._STOP is FACT_STOPWORDS
    assert meaning._STOP is CONCEPT_STOPWORDS
    assert overlap.STOPWORDS > STOPWORDS


def test_the_groups_do_not_overlap() -> None:
    """A word stands in one group, so a list's membership is read from the groups it joins."""
    groups = [
        v for k, v in vars(_stopwords).items() if k.startswith("_") and isinstance(v, frozenset)
    ]
    assert len(groups) == 6
    assert sum(len(g) for g in groups) == len(frozenset().union(*groups))
