"""The per-entry helpers the gate walks at every entry, rewritten for speed, give what their
plain definitions give (kept here as the reference): the document an entry's evidence is in
(`evidence_doc`), the places it names (`fresh._places`, read before any quote), the fresh-sample
guard with its evidence tokens read lazily (`fresh._near`), and the tier selection, which asks
each entry's shortfall once (`select_tiers`)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from assay.dataset import Dataset, Entry, fresh, load_dataset, select_tiers
from assay.dataset.clustering import evidence_doc
from assay.dataset.schema import Anchor, fast_entry
from assay.dataset.tiers import not_disclosed_shortfall, tier_of
from assay.errors import DataError

_chunk = st.sampled_from(["c1", "d9/3/7~ab", "a/b", "x/y/z/w", "d2/1/2"])
_anchor = st.builds(
    dict,
    doc=st.sampled_from(["d1", "d2", "d3"]),
    page=st.one_of(st.none(), st.integers(1, 3)),
    quote=st.sampled_from(["Net revenue rose 5%", "Debt: $3.1 billion", "cash"]),
    role=st.sampled_from([None, "home", "mention"]),
).map(lambda d: {k: v for k, v in d.items() if v is not None})
_alt = st.one_of(_chunk, _anchor)
_paths = st.lists(
    st.lists(st.lists(_alt, min_size=1, max_size=3), min_size=1, max_size=3), max_size=3
)


def _entry(i: int, paths: list[Any], **more: Any) -> Entry:
    row = {"id": f"q{i}", "query": f"What of item {i}?", "category": "c", **more}
    if paths:
        row["evidence_paths"] = paths
    return Entry.model_validate(row)


def _evidence_doc_reference(entry: Entry) -> str | None:
    alts = [a for path in entry.evidence_paths for piece in path for a in piece]
    anchors = [a for a in alts if isinstance(a, Anchor)]
    home = [a for a in anchors if a.role == "home"]
    if home or anchors:
        return (home or anchors)[0].doc
    for a in alts:
        if isinstance(a, str):
            return a.rsplit("/", 2)[0] if a.count("/") >= 2 else a
    return None


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(paths=_paths)
def test_evidence_doc_and_places_are_their_plain_definitions(paths: list[Any]) -> None:
    try:
        e = _entry(0, paths)
    except ValidationError:
        assume(False)  # a piece of mentions only: not an entry
        return
    assert evidence_doc(e) == _evidence_doc_reference(e)
    assert fresh._places(e) == fresh._located(fresh.evidence_tokens(e))
    # the guard's lookup: the places a sealed entry names too, no token spelt for the others
    index = {"chunk:c1": [0], "chunk:a/b": [1], "page:d1#2": [2], "doc:d3": [3], "doc:d1": [4]}
    ids = frozenset({"c1", "a/b"})
    shared = fresh._shared_places(e, ids, index)
    places = fresh._places(e)
    assert set(shared) == ({p for p in places if p in index} if places else {"\x00none"})


def _registry_with(tmp_path: Path, sealed: list[Entry]) -> sqlite3.Connection:
    """A registry holding one sealed sample of ``sealed`` (its entries' contents kept)."""
    path = tmp_path / "sample.jsonl"
    path.write_text("".join(json.dumps(e.to_json_dict()) + "\n" for e in sealed))
    fresh.seal(path)
    return sqlite3.connect(fresh.registry_path())


def test_the_guard_reads_evidence_tokens_only_where_a_place_is_shared(
    tmp_path: Path, monkeypatch: Any
) -> None:
    monkeypatch.setenv("ASSAY_FRESH_REGISTRY", str(tmp_path / "fresh.sqlite"))
    quote = {"doc": "d1", "page": 2, "quote": "Net revenue rose 5 percent in fiscal 2024"}
    sealed = [
        _entry(0, [[[quote]]]),
        _entry(1, [[["c7"], ["c8"]]]),
        Entry.model_validate({"id": "q2", "query": "No evidence here?", "category": "c"}),
    ]
    con = _registry_with(tmp_path, sealed)
    edited = _entry(0, [[[quote]]]).model_copy(update={"id": "other", "query": "What of item 0!"})
    entries = [
        *(_entry(10 + i, [[[f"c{100 + i}"]]]) for i in range(50)),  # no place in common
        _entry(99, [[["c7"]]]),  # shares a chunk, asks another question
        edited,  # a near-duplicate of sealed entry 0 under another id
    ]
    read: list[str] = []
    real = fresh.evidence_tokens

    def spy(e: Entry) -> frozenset[str]:
        read.append(e.id)
        return real(e)

    given_tokens = [real(e) for e in entries]
    monkeypatch.setattr(fresh, "evidence_tokens", spy)
    lazy = fresh._near(con, entries)
    assert lazy == fresh._near(con, entries, given_tokens)
    assert len(lazy) == 1  # the edited entry is the sealed sample's
    assert read == ["q99", "other"]  # only the entries sharing a place were read
    monkeypatch.setattr(fresh, "_places", None)  # no entry's places are spelt whole
    assert fresh._near(con, entries) == lazy
    none = Entry.model_validate({"id": "n", "query": "No evidence here!", "category": "c"})
    assert fresh._near(con, [none]) == lazy  # entries without evidence meet each other
    con.close()


LOOKUP = {"source": "facts", "searched": "revenue FY2024", "found": "nothing"}
_tiered = st.fixed_dictionaries(
    {},
    optional={
        "label_tier": st.sampled_from(["gold", "silver", "draft"]),
        "reviewed_by": st.integers(0, 3),
        "answerable": st.booleans(),
        "source": st.sampled_from(["synthetic", "human", "log"]),
        "structured_lookup": st.just(LOOKUP),
    },
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=st.lists(_tiered, min_size=1, max_size=8), asked=st.sampled_from([None, "gold,silver"]))
def test_select_tiers_reads_each_tier_as_tier_of_does(
    rows: list[dict[str, Any]], asked: str | None
) -> None:
    entries = []
    for i, more in enumerate(rows):
        paths = [[[f"c{i}"]]] if more.get("answerable", True) else []
        try:
            entries.append(_entry(i, paths, **more))
        except ValidationError:
            continue  # a combination validation refuses
    if not entries:
        return
    ds = Dataset(entries, path="x.jsonl")
    want = {"gold"} if asked is None else {"gold", "silver"}
    tiers = [tier_of(e) for e in entries]
    untiered = asked is None and all(t is None for t in tiers)
    kept = [e.id for e, t in zip(entries, tiers, strict=True) if untiered or (t or "draft") in want]
    try:
        selected, report = select_tiers(ds, asked)
    except DataError:
        assert not kept  # nothing of the tiers asked: refused
        return
    assert [e.id for e in selected.entries] == kept
    short = tuple(e.id for e in entries if not_disclosed_shortfall(e) is not None)
    assert report.short_of_gold == short
    assert selected.by_id == {e.id: e for e in selected.entries}
    assert selected.tiers is report and ds.tiers is None  # the loaded dataset is left as it was


def test_entries_read_in_one_pass_share_their_fields_set_per_row_shape(tmp_path: Path) -> None:
    rows = [
        {"id": f"q{i}", "query": "What?", "category": "c", "evidence_paths": [[[f"c{i}"]]]}
        | ({"label_tier": "gold"} if i % 2 else {})
        for i in range(6)
    ]
    path = tmp_path / "golden.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    entries = load_dataset(path).entries
    for e, row in zip(entries, rows, strict=True):
        model = Entry.model_validate(row)
        assert e == model and e.model_fields_set == model.model_fields_set
        assert e.model_dump(exclude_unset=True) == model.model_dump(exclude_unset=True)
    assert len({id(e.model_fields_set) for e in entries}) == 2  # one per row shape
    a, b = entries[0], entries[2]
    assert a.model_fields_set is b.model_fields_set
    a.reference_answer = "set on one entry"  # recorded on that entry alone
    assert "reference_answer" in a.model_fields_set
    assert "reference_answer" not in b.model_fields_set
    assert b.model_dump(exclude_unset=True) == Entry.model_validate(rows[2]).model_dump(
        exclude_unset=True
    )
    alone = [fast_entry(r) for r in rows[:2]]
    assert alone[0] is not None and alone[1] is not None
    assert alone[0].model_fields_set is not entries[0].model_fields_set  # none shared unasked


def _labels_reference(field: str, entries: list[Entry]) -> dict[str, str]:
    """`cluster_labels` by its plain definition: every entry's value read and folded."""
    from assay.dataset import clustering as cl
    from assay.dataset.grouping import _field_reader

    fold = {"doc": cl._doc, "company": cl._company}.get(field, str)
    read = (
        evidence_doc
        if field == "doc"
        else _field_reader("metadata.company" if field == "company" else field)[1]
    )
    first: dict[str, str] = {}
    out: dict[str, str] = {}
    for e in entries:
        text = cl._value(read(e))
        key = fold(text) if text else None
        out[e.id] = first.setdefault(key, f"{field}:{text}") if key else f"entry:{e.id}"
    return out


def test_cluster_labels_read_each_distinct_value_once(monkeypatch: Any) -> None:
    from assay.dataset import clustering as cl

    docs = ["AAPL_2022.pdf", "aapl_2022", "MSFT 2021", "msft  2021.PDF", "x/y/z/w"]
    companies: list[Any] = ["Apple Inc.", "APPLE INC", 60, 60.0, "60", True, 1, None, ["a"], " "]
    entries = [
        _entry(i, [[[{"doc": docs[i % 5], "quote": "cash"}]]] if i % 7 else [],
               metadata={"company": companies[i % 10]})
        for i in range(70)
    ]  # fmt: skip
    want = {f: _labels_reference(f, entries) for f in ("doc", "company")}
    read: list[Any] = []
    real = cl._value

    def counted(v: Any) -> str | None:
        read.append(v)
        return real(v)

    monkeypatch.setattr(cl, "_value", counted)
    assert cl.cluster_labels(entries, "doc") == want["doc"]
    assert len(read) == 6  # five documents and no evidence, each read once
    read.clear()
    assert cl.cluster_labels(entries, "company") == want["company"]
    # 60 and 60.0 are equal keys of another type; True and 1 too: each type read apart, and a
    # list (no key) each time it is met
    assert len(read) == 9 + 7
    assert want["company"]["q2"] == want["company"]["q3"] == want["company"]["q4"] == "company:60"
    assert want["company"]["q0"] == want["company"]["q1"] == "company:Apple Inc."
    assert want["company"]["q5"] == "company:true" and want["company"]["q6"] == "company:1"
