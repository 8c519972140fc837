"""The three stop-word lists are built from one set of groups (`assay._stopwords`); each is
pinned here word for word, because each decides behaviour: the index's tokens (and so
retrieval), the key-fact coverage test and the concept reader of answer checks."""

from __future__ import annotations

import ast
from pathlib import Path

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


AUDIT = INDEX + " during over per those versus vs"

QUERY = "& a an and at by did does for how in is it its of on or the to was what"

FACT_QUERY = """a an and are as at did do does end fiscal for fy how in is its just latest most
much number of on q qtr quarter recent report reported s the to total was were what year"""

GLUE = "a an and by for in of on s the to"

FOLLOW_UP = (
    INDEX
    + """ about after again ago also before by calendar change changed compare
compared comparison decline declined decrease decreased differ difference down earlier figure
figures fiscal following fy give grew grow growth increase increased last later let look me move
moved much next now number numbers ok okay one over period please preceding previous prior pull
quarter quarters question report reported same sequentially show tell than thanks up versus vs
year years yoy y/y you"""
)


ASKING = """can cheers could give hello hey hi i kindly know let like me need please pls show tell
thank thanks thx to want would you"""


def test_the_readers_lists_are_pinned() -> None:
    from assay.audit import overlap
    from assay.dataset import fresh
    from assay.logs import classify

    assert frozenset(AUDIT.split()) == _stopwords.AUDIT_STOPWORDS
    assert overlap.STOPWORDS is _stopwords.AUDIT_STOPWORDS
    assert frozenset(QUERY.split()) == _stopwords.QUERY_STOPWORDS
    assert classify._STOP is _stopwords.QUERY_STOPWORDS
    assert frozenset(FACT_QUERY.split()) == _stopwords.FACT_QUERY_FILLER
    assert frozenset(GLUE.split()) == _stopwords.CONCEPT_GLUE
    assert frozenset(FOLLOW_UP.split()) == _stopwords.FOLLOW_UP_FILLER
    assert frozenset(ASKING.split()) == _stopwords.ASKING_FILLER
    assert fresh.ASKING_FILLER is _stopwords.ASKING_FILLER


def _word_sets(tree: ast.AST) -> list[tuple[int, list[str]]]:
    """(line, words) of every set written out in a module: ``{...}``, ``set([...])``,
    ``frozenset([...])`` or ``frozenset({...})`` of string constants."""
    out: list[tuple[int, list[str]]] = []
    for node in ast.walk(tree):
        elts: list[ast.expr] | None = None
        if isinstance(node, ast.Set):
            elts = node.elts
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("set", "frozenset")
            and len(node.args) == 1
            and isinstance(node.args[0], (ast.List, ast.Tuple, ast.Set))
        ):
            elts = node.args[0].elts
        if elts and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in elts):
            out.append((node.lineno, [e.value for e in elts if isinstance(e, ast.Constant)]))
    return out


def test_no_other_module_keeps_a_stop_word_set() -> None:
    """A set of words of which half or more are function words (of at least four) is a stop-word
    list: it belongs in `assay._stopwords`. The synthetic room keeps its own vocabulary."""
    function = _stopwords._FUNCTION | _stopwords._BE_FORMS
    src = Path(_stopwords.__file__).parent
    found = []
    for path in sorted(src.rglob("*.py")):
        rel = path.relative_to(src).as_posix()
        if rel == "_stopwords.py" or rel.startswith("synth/"):
            continue
        for line, words in _word_sets(ast.parse(path.read_text(encoding="utf-8"))):
            if len(words) >= 4 and 2 * sum(w in function for w in words) >= len(words):
                found.append(f"{rel}:{line}")
    assert found == []
