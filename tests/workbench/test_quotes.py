"""A text that quotes a restricted chunk without citing it is hidden like one that cites it (issue
40): the quote detector (`assay.workbench.service.quotes`) on the next ring of spellings (case,
full-width forms, line breaks, thousands separators, currency written either way, a partial
quote, a quote split across two sentences), what it must not hide (text that shares common
phrases with the memo, or what public chunks say too), and the store: a run's answer, a draft, a
critique and a flag note that quote the data room without citing it, walked as each clearance."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from assay.workbench import service as svc
from assay.workbench.auth import create_user
from assay.workbench.db import Database
from assay.workbench.models import Task, User
from assay.workbench.service.quotes import REDACTED, QuoteIndex, redact, tokens

from .access_room import plant_room
from .conftest import JUDGE_PASS, login_client

TERMS = (
    "Term sheet, Project Falcon. Northwind will acquire Acme Target for USD 41.25 per share in "
    "cash, a total equity value of $1,250 million, subject to regulatory approval and a "
    "termination fee of 3.5% payable by Acme Target."
)
MEMO = "Project Falcon: the acquisition price for Acme Target is $412 million."
PUBLIC = [
    "Northwind Bancorp reported net income of $512 million; no acquisition.",
    "The merger is subject to regulatory approval and customary closing conditions.",
]


@pytest.fixture(scope="module")
def index() -> QuoteIndex:
    return QuoteIndex.build([("ts#1", TERMS), ("memo#1", MEMO)], PUBLIC)


@pytest.mark.parametrize(
    "text",
    [
        # the quote as written, then the next ring of spellings
        "Northwind will acquire Acme Target for USD 41.25 per share in cash.",
        "NORTHWIND WILL ACQUIRE ACME TARGET FOR USD 41.25 PER SHARE IN CASH",
        "Ｎｏｒｔｈｗｉｎｄ ｗｉｌｌ ａｃｑｕｉｒｅ Ａｃｍｅ Ｔａｒｇｅｔ for ＵＳＤ ４１．２５",
        "Northwind will\nacquire Acme\r\nTarget  for USD\t41.25 per share",
        "a total equity value of $1250 million",
        "a total equity value of 1,250.00 million dollars",
        "they pay 41.25 dollars a share",
        "they pay $41.25/share",
        # partial: eight words from the middle
        "as I read it, a total equity value of USD 1,250",
        # split across two sentences, reordered
        "The figure is $412m. It is the acquisition price for Acme Target.",
        "Acme Target. The price: 412 million dollars.",
    ],
)
def test_a_quote_is_found_however_it_is_spelled(index: QuoteIndex, text: str) -> None:
    assert index.quoted(text), text


@pytest.mark.parametrize(
    "text",
    [
        "Northwind reported net income of $512 million.",
        "The merger is subject to regulatory approval and customary closing conditions.",
        "What price is Northwind paying for Acme Target?",
        "The acquisition price for the target is not disclosed in the filings.",
        "Revenue grew 41 percent in 2024, per the 10-K.",
        "In fiscal 2023 Acme Target reported revenue of $1,100 million.",
        "The filings do not say.",
    ],
)
def test_ordinary_text_is_not_a_quote(index: QuoteIndex, text: str) -> None:
    assert not index.quoted(text), text


@pytest.mark.parametrize(
    "figure",
    [
        "$412 million",
        "$412,000,000",
        "$412000000",
        "$0.412 billion",
        "$.412bn",
        "USD 412m",
        "$412 mn",
        "$412,000 thousand",
        "$412,000k",
        "412 million dollars",
    ],
)
def test_a_figure_restated_at_another_scale_is_found(index: QuoteIndex, figure: str) -> None:
    # the memo's "$412 million" in any scale word or digit grouping, with its words
    text = f"Acme Target's acquisition price: {figure}."
    assert index.quoted(text) == {"memo#1"}, figure
    out = redact(text, index.find(text))
    assert REDACTED in out and "412" not in out, (figure, out)


@pytest.mark.parametrize(
    "figure",
    [
        "$412 billion",
        "$412 thousand",
        "$412k",
        "$412bn",
        "$0.412 million",
        "412,000 million dollars",
    ],
)
def test_the_same_digits_at_another_scale_are_not_the_figure(
    index: QuoteIndex, figure: str
) -> None:
    # the memo's "$412 million": the digits match, the value does not
    text = f"Acme Target's acquisition price: {figure}."
    assert index.quoted(text) == set(), figure


def test_a_bare_figure_of_a_table_is_found_with_a_scale_word() -> None:
    # a table's scale is in its header ("in millions"): a bare figure may be of any scale
    index = QuoteIndex.build([("t#1", "Falcon escrow holdback reserve (in millions): 9,876")])
    assert index.quoted("The Falcon escrow holdback is $9,876 million.") == {"t#1"}


@pytest.mark.parametrize(
    "text",
    [
        "the total equity value was $1,250,000,000",  # the term sheet's "$1,250 million"
        "the total equity value was $1.25 billion",
        "the total equity value was $1,250,000 thousand",
    ],
)
def test_a_restricted_chunk_written_with_a_scale_is_found_in_full_digits(
    index: QuoteIndex, text: str
) -> None:
    assert index.quoted(text) == {"ts#1"}, text


def test_a_chunk_written_in_full_digits_is_found_with_a_scale_word() -> None:
    ix = QuoteIndex.build([("hr#1", "The CFO's retention bonus is $3,415,000 in cash.")], [])
    for said in ("$3.415 million", "$3.415m", "$3,415 thousand", "$3,415k", "$3,415,000"):
        assert ix.quoted(f"the CFO got a retention bonus of {said}") == {"hr#1"}, said


def test_another_scale_is_not_another_figure_nor_a_bare_match() -> None:
    ix = QuoteIndex.build([("memo#1", MEMO)], [])
    # the same digits at a different magnitude (as whole values), or without the words, are not
    # the figure (the digits as written still match: "$412 billion" is the memo's 412, misread)
    for text in (
        "Acme Target's acquisition price: $412,000.",
        "Acme Target's acquisition price: $412,000,000,000.",
        "Acme Target's acquisition price: $41.2 million.",
        "Revenue was $412,000,000 in 2024.",
        "Acme Target was founded in 1998; its acquisition price is not public.",
    ):
        assert not ix.quoted(text), text
    # a year the chunk shares with a public answer is no figure of it, at any scale
    dated = QuoteIndex.build([("m#1", "In 2024 Acme Target agreed a price of $412 million.")], [])
    for text in (
        "In 2024 Acme Target agreed to be acquired; the price was not disclosed.",
        "Acme Target agreed a deal in 2,024 thousand ways in 2024.",
    ):
        assert not dated.quoted(text), text
    # and what a public chunk says at one scale is public at every scale
    public = QuoteIndex.build([("memo#1", MEMO)], ["Acme Target's acquisition price: $0.412bn."])
    assert not public.quoted("Acme Target's acquisition price: $412,000,000.")


def test_what_public_chunks_say_is_not_indexed() -> None:
    """A figure, and a sentence, that a public chunk also states are public: not a quote."""
    figure = "Acme Target: 412 million dollars, the acquisition price."
    sentence = "the acquisition price for Acme Target is $412 million"
    alone = QuoteIndex.build([("memo#1", MEMO)], [])
    assert alone.quoted(figure) == alone.quoted(sentence) == {"memo#1"}
    ix = QuoteIndex.build([("memo#1", MEMO)], ["Acme Target's acquisition price: $412 million."])
    assert not ix.quoted(figure) and ix.quoted(sentence) == {"memo#1"}
    ix = QuoteIndex.build([("memo#1", MEMO)], [f"The 8-K says: {MEMO}"])
    assert not ix.quoted(figure) and not ix.quoted(sentence)


def test_redaction_replaces_only_the_quoted_spans(index: QuoteIndex) -> None:
    text = "Summary. Northwind will acquire Acme Target for USD 41.25 per share in cash. Done."
    out = redact(text, index.find(text))
    assert "41.25" not in out and REDACTED in out
    assert out.startswith("Summary. ") and out.endswith(" Done.")
    full = "Ｔｈｅ price is ＵＳＤ ４１．２５ a share."  # offsets map back through NFKC
    out = redact(full, index.find(full))
    assert "４１" not in out and out.startswith("Ｔｈｅ price is ") and out.endswith(" a share.")


def test_tokens_normalise_numbers_and_units() -> None:
    got = [t.value for t in tokens("US$1,250.50m, ＵＳＤ 41.250 / 3.50%")]
    assert got == ["us", "usd", "1250.5", "million", "usd", "41.25", "3.5"]


def test_a_check_is_fast(index: QuoteIndex) -> None:
    """The per-request check of a 2,000-character answer: about 0.6 ms on an idle core; the bound
    leaves room for a loaded test machine (load 16 on 2 cores measured 5 ms)."""
    text = " ".join(PUBLIC * 15)[:2000]
    t0 = time.perf_counter()
    for _ in range(200):
        index.quoted(text)
    per = (time.perf_counter() - t0) / 200
    assert per < 0.05, per


# -- the store -------------------------------------------------------------------------------

QUOTE = "the acquisition price for Acme Target is $412 million"  # the room memo, uncited
PW = "tulip-basin-4821"


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _users(db: Database) -> dict[str, User]:
    with db.read() as s:
        return {u.username: u for u in s.scalars(select(User))}


def _public_question(db: Database, tmp_path: Path) -> None:
    """The access room, a public question 'pub-q' (public gold) with a reference task, and
    cleared users ben (annotator) and carl (adjudicator)."""
    plant_room(db, tmp_path)
    entry = {
        "id": "pub-q",
        "query": "Who is buying Acme Target?",
        "category": "deal",
        "metadata": {"domain": "Falcon"},
        "reference_answer": "Northwind.",
        "evidence_paths": [[["nwb-2023-10k#p1"]]],
    }
    svc.import_entries(db, _jsonl(tmp_path / "q.jsonl", [entry]), kinds=("reference",))
    svc.set_user_access(db, "ben", groups=["deal:ACME"], clearance="insider")
    create_user(db, "carl", PW, "adjudicator", groups=["deal:ACME"], clearance="insider")


def _task_ids(db: Database) -> dict[str, int]:
    with db.read() as s:
        return {t.kind: t.id for t in s.scalars(select(Task).where(Task.item_id == "pub-q"))}


@pytest.fixture
def quoting(db: Database, tmp_path: Path) -> dict[str, int]:
    """`_public_question` and a run whose answer on it quotes the data room memo in another
    spelling without retrieving or citing anything."""
    _public_question(db, tmp_path)
    out = [{"id": "pub-q", "answer": f"Northwind. By the way, {QUOTE.upper()}.", "retrieved": []}]
    svc.import_run(db, _jsonl(tmp_path / "quoter.jsonl", out), run_name="quoter")
    return _task_ids(db)


def test_an_uncited_quote_hides_the_judging_task_and_the_draft(
    db: Database, app: Any, quoting: dict[str, int]
) -> None:
    u = _users(db)
    judge = quoting["judge"]
    # the judging task of the quoting answer is served only to the cleared
    for name in ("ana", "adjudicator"):
        with pytest.raises(svc.NotFound):
            svc.task_view(db, u[name], judge)
    while (tid := svc.claim_next(db, u["ana"], "judge")) is not None:
        assert tid != judge
        svc.submit_label(db, u["ana"], tid, JUDGE_PASS, client_id=f"a{tid}")
    while (tid := svc.claim_next(db, u["ben"], "judge")) != judge:
        assert tid is not None, "the cleared annotator is served the task"
        svc.submit_label(db, u["ben"], tid, JUDGE_PASS, client_id=f"b{tid}")
    assert "412" in svc.task_view(db, u["ben"], judge).output.answer  # type: ignore[union-attr]
    # the reference task: the draft quoting the memo is not offered to the uncleared
    ref = quoting["reference"]
    for name in ("ana", "ben"):
        while (tid := svc.claim_next(db, u[name], "reference")) != ref:
            assert tid is not None
            svc.submit_label(db, u[name], tid, {"reference_answer": "x", "answerable": True},
                             client_id=f"{name}{tid}")  # fmt: skip
    assert svc.task_view(db, u["ana"], ref).draft is None
    ana, _ = login_client(app, "ana")
    for path in (f"/api/tasks/{ref}", f"/task/{ref}", f"/api/tasks/{judge}"):
        assert "412" not in ana.get(path).text
    got = svc.task_view(db, u["ben"], ref).draft
    assert got is not None and "412" in got["reference_answer"]


def test_free_text_quoting_the_room_is_hidden_from_the_uncleared(
    db: Database, app: Any, tmp_path: Path
) -> None:
    """No run quotes anything: the public reference task is open to all. Two cleared experts
    answer it and disagree, one quoting the memo (uncited) in the reference answer, and flag it
    with a note quoting it. The uncleared adjudicator sees neither the quoting label nor the
    note; the cleared one does."""
    _public_question(db, tmp_path)
    ref = _task_ids(db)["reference"]
    create_user(db, "cleo", PW, "annotator", groups=["deal:ACME"], clearance="insider")
    u = _users(db)
    labels = {}
    for name, text in (("ben", f"Northwind; {QUOTE}."), ("cleo", "Northwind.")):
        while (tid := svc.claim_next(db, u[name], "reference")) != ref:
            assert tid is not None
            svc.submit_label(db, u[name], tid, {"reference_answer": "x", "answerable": True},
                             client_id=f"{name}{tid}")  # fmt: skip
        payload: dict[str, Any] = {"reference_answer": text, "answerable": name == "ben"}
        if name == "cleo":
            payload["structured_lookup"] = {"searched": "facts table: Acme", "found": "nothing"}
        labels[name] = svc.submit_label(db, u[name], ref, payload, client_id=name).label_id
    svc.add_flag(db, u["ben"], "pub-q", "ambiguous_question", f"note: {QUOTE}")
    assert ref in {r.task_id for r in svc.adjudication_queue(db, u["carl"])}
    assert ref not in {r.task_id for r in svc.adjudication_queue(db, u["adjudicator"])}
    for name in ("adjudicator", "ana"):
        assert labels["ben"] not in {lab.id for lab in svc.list_labels(db, u[name], ref)}
        client, _ = login_client(app, name)
        for path in (f"/api/labels/{labels['ben']}", f"/api/tasks/{ref}/labels",
                     f"/adjudicate/{ref}", "/api/adjudication-queue"):  # fmt: skip
            r = client.get(path)
            assert r.status_code < 500 and "412" not in r.text, (name, path)
    carl, _ = login_client(app, "carl", PW)
    assert "412" in carl.get(f"/api/labels/{labels['ben']}").text
    page = carl.get(f"/adjudicate/{ref}").text
    assert page.count("412") >= 2  # the label and the flag note


# -- redaction, an option --------------------------------------------------------------------


def _claim_to(db: Database, user: User, kind: str, target: int) -> None:
    while (tid := svc.claim_next(db, user, kind)) != target:
        assert tid is not None, f"task {target} never served to {user.username}"
        svc.submit_label(db, user, tid, {"reference_answer": "x", "answerable": True},
                         client_id=f"{user.username}{tid}")  # fmt: skip


def test_redaction_shows_the_draft_with_the_quote_replaced(
    db: Database, app: Any, quoting: dict[str, int]
) -> None:
    """With redaction on, the uncleared annotator is offered the quoting run's draft with the
    quoted memo replaced by "[restricted]" (the rest shown); the cleared one reads it whole."""
    svc.set_redacting(db, True)
    u = _users(db)
    ref = quoting["reference"]
    for name in ("ana", "ben"):
        _claim_to(db, u[name], "reference", ref)
    draft = svc.task_view(db, u["ana"], ref).draft
    assert draft is not None and draft["redacted"] is True
    assert "412" not in draft["reference_answer"] and REDACTED in draft["reference_answer"]
    assert draft["reference_answer"].startswith("Northwind. By the way,")
    ana, _ = login_client(app, "ana")
    for path in (f"/api/tasks/{ref}", f"/task/{ref}"):
        r = ana.get(path)
        assert r.status_code == 200 and "412" not in r.text and "[restricted]" in r.text
    full = svc.task_view(db, u["ben"], ref).draft
    assert full is not None and "412" in full["reference_answer"] and "redacted" not in full
    # the judging task of the quoting answer stays hidden: a redacted answer is not judged
    with pytest.raises(svc.NotFound):
        svc.task_view(db, u["ana"], quoting["judge"])
    # off again: hidden whole
    svc.set_redacting(db, False)
    assert svc.task_view(db, u["ana"], ref).draft is None


def test_redaction_of_labels_and_notes_as_each_clearance(
    db: Database, app: Any, tmp_path: Path
) -> None:
    """Two cleared experts disagree on a public question, one quoting the memo; a flag note
    quotes it too. Redacting, the uncleared adjudicator opens the task with the quote replaced in
    the label and the note; the cleared adjudicator reads them whole; the author reads their own."""
    _public_question(db, tmp_path)
    ref = _task_ids(db)["reference"]
    create_user(db, "cleo", PW, "annotator", groups=["deal:ACME"], clearance="insider")
    u = _users(db)
    ids = {}
    for name in ("ben", "cleo"):
        _claim_to(db, u[name], "reference", ref)
        payload: dict[str, Any] = {
            "reference_answer": f"Northwind; {QUOTE}." if name == "ben" else "Northwind.",
            "answerable": name == "ben",
        }
        if name == "cleo":
            payload["structured_lookup"] = {"searched": "facts table: Acme", "found": "nothing"}
        ids[name] = svc.submit_label(db, u[name], ref, payload, client_id=name).label_id
    svc.add_flag(db, u["ben"], "pub-q", "ambiguous_question", f"note: {QUOTE}")
    svc.set_redacting(db, True)
    assert ref in {r.task_id for r in svc.adjudication_queue(db, u["adjudicator"])}
    view = svc.adjudication_view(db, u["adjudicator"], ref)
    text = json.dumps(view.to_dict()) if hasattr(view, "to_dict") else repr(view)
    assert "412" not in text and text.count(REDACTED) >= 2
    got = {lab.id: lab for lab in svc.list_labels(db, u["adjudicator"], ref)}
    assert REDACTED in got[ids["ben"]].payload["reference_answer"]
    assert got[ids["ben"]].payload["reference_answer"].startswith("Northwind; ")
    adj, _ = login_client(app, "adjudicator")
    for path in (f"/adjudicate/{ref}", f"/api/labels/{ids['ben']}", f"/api/tasks/{ref}/labels"):
        r = adj.get(path)
        assert r.status_code == 200 and "412" not in r.text and "[restricted]" in r.text, path
    carl, _ = login_client(app, "carl", PW)
    page = carl.get(f"/adjudicate/{ref}").text
    assert page.count("412") >= 2 and "[restricted]" not in page
    ben, _ = login_client(app, "ben")
    assert "412" in ben.get(f"/api/labels/{ids['ben']}").text


def test_the_index_is_built_once_per_corpus_revision(db: Database, tmp_path: Path) -> None:
    """Checks reuse the store's index; importing chunks renews the revision, and the next check
    reads the new restricted chunk (a text that quoted nothing now quotes it)."""
    from assay.workbench.service.quotes import quote_index

    plant_room(db, tmp_path)
    with db.read() as s:
        first = quote_index(s)
        assert quote_index(s) is first and first.quoted(QUOTE) == {"acme-room-memo#1"}
    secret = "Project Heron: Northwind will sell its card unit to Bluefin Capital for $318 million."
    text = "they sell the card unit to Bluefin Capital for 318 million dollars"
    assert not first.quoted(text)
    docs = [{"doc_id": "heron-memo", "company": "Northwind Bancorp", "form": "OTHER",
             "access": {"groups": ["deal:HERON"], "label": "Heron deal team"}}]  # fmt: skip
    chunks = [{"chunk_id": "heron-memo#1", "doc_id": "heron-memo", "page": 1, "text": secret}]
    svc.import_corpus(db, _jsonl(tmp_path / "c.jsonl", chunks), _jsonl(tmp_path / "d.jsonl", docs))
    with db.read() as s:
        second = quote_index(s)
    assert second is not first and second.quoted(text) == {"heron-memo#1"}


def test_serve_redact_option_is_kept_in_the_store(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    import assay.cli._register  # noqa: F401  (registers every command)
    from assay.cli import app as cli
    from assay.cli import workbench_cmds
    from assay.workbench.service.access import redacting

    monkeypatch.setattr(workbench_cmds, "_serve", lambda *a, **k: None)
    runner = CliRunner()
    for flag, want in (("--redact", True), ("--hide-quoted", False)):
        res = runner.invoke(cli, ["workbench", "serve", "--db", db.url, flag])
        assert res.exit_code == 0, res.output
        with db.read() as s:
            assert redacting(s) is want


def test_guidelines_quoting_the_room_as_each_clearance(
    db: Database, app: Any, tmp_path: Path
) -> None:
    """A cleared adjudicator's guideline example quotes the memo: the guidelines page shows the
    version to the uncleared with the text withheld ("[restricted]"), or with the quote redacted
    in a store that redacts; the cleared read it whole."""
    _public_question(db, tmp_path)
    u = _users(db)
    text = f"Example of a leak to refuse: {QUOTE}. Keep answers to the filings."
    svc.edit_guidelines(db, u["carl"], text, "a leak example")
    carl, _ = login_client(app, "carl", PW)
    assert "412" in carl.get("/guidelines").text
    ana, _ = login_client(app, "ana")
    page = ana.get("/guidelines").text
    assert "412" not in page and "[restricted]" in page and "Keep answers" not in page
    svc.set_redacting(db, True)
    page = ana.get("/guidelines").text
    assert "412" not in page and "[restricted]" in page and "Keep answers to the filings" in page
    assert "412" in carl.get("/guidelines").text
