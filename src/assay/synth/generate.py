"""Write a synthetic filings room: documents (HTML + PDF), documents.jsonl, facts, golden, manifest.

Layout of a room directory::

    docs/<doc_id>.pdf, docs/<doc_id>.html   every filing in every requested format (same pages)
    documents.jsonl                         one filing per line (the shared document metadata format)
    facts.jsonl                             every ledger fact (numeric and text) with its restatement
    xbrl/companyfacts-<TICKER>.json         SEC company-facts-shaped structured facts per company
    golden.jsonl                            the golden entries (assay entry format)
    conversations.jsonl                     multi-turn conversations (follow-ups that need an
                                            earlier turn; `assay.synth.conversations`)
    manifest.json                           seed, scale, generator version, sha256 of every file

`documents.jsonl` names one primary `file` per filing: the PDF for periodic reports (10-K, 10-Q,
10-K/A) and the HTML for current reports (8-K, earnings releases), so a pipeline run on the room
exercises both parsers; the other format sits beside it with the same stem. Gold anchors use the
1-based page numbers both renderings share (HTML pages are `<div class="page" data-page="N">`).

The same seed and scale give the same bytes: no clock is read, every iteration is sorted, the PDF
writer is deterministic. The room is built in a temporary directory and renamed into place, so a
failure leaves no partial room behind.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from assay._io import dumps_canonical, sha256_bytes
from assay.corpus import AccessLabel, read_bytes
from assay.dataset import Entry
from assay.errors import UsageError
from assay.gold.align import normalize_tokens
from assay.report import ReportMixin, Tabular
from assay.synth.conversations import build_conversations
from assay.synth.facts_ledger import CONCEPTS, Ledger, build_ledger
from assay.synth.filings import build_filings
from assay.synth.golden import ROOM_TIER, build_golden
from assay.synth.layout import Doc, paginate
from assay.synth.messy import AUTHORITY, DealBook, deal_books, render_deal_doc
from assay.synth.pdf import write_pdf
from assay.synth.render_html import render_html
from assay.synth.room_access import deal_label, label_deal_entries, policy_manifest, policy_room
from assay.synth.scan import move_box, scan_pages
from assay.synth.xbrl import company_facts, text_facts

__all__ = [
    "DEFAULT_COMPANIES",
    "DEFAULT_YEARS",
    "GENERATOR_VERSION",
    "ROOM_VERSION",
    "Room",
    "RoomSummary",
    "build_room",
    "generate_room",
]

GENERATOR_VERSION = "assay-synth/2.2"
ROOM_VERSION = 4  # 2: spreadsheets, Word, e-mail, scans, planted conflicts and decoys; 3: access
# labels on restricted documents, principals on entries, policy and injection questions; 4:
# conversations (conversations.jsonl; the golden set is unchanged)
DEFAULT_COMPANIES = 6
DEFAULT_YEARS = 3
DEFAULT_SCANS = 2  # quarterly reports rendered as scans (light, heavy, ...): OCR is slow
_FORMATS = ("html", "pdf")
_SINGLE_PAGE_FORMS = ("8-K", "EARNINGS")


@dataclass
class Room:
    """Everything a room holds, in memory (what `generate_room` writes)."""

    seed: int
    ledger: Ledger
    docs: list[Doc]
    golden: list[dict[str, Any]]
    deals: list[DealBook] = field(default_factory=list)
    conversations: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class RoomSummary(ReportMixin):
    """What `generate_room` wrote (a report: `to_dict`, `to_json`, `to_table`, `to_markdown`)."""

    out_dir: Path
    seed: int
    companies: int
    years: int
    documents: int
    pages: int
    facts: int
    entries: int
    categories: dict[str, int] = field(default_factory=dict)
    forms: dict[str, int] = field(default_factory=dict)
    room_hash: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "out_dir": str(self.out_dir),
            "seed": self.seed,
            "companies": self.companies,
            "years": self.years,
            "documents": self.documents,
            "pages": self.pages,
            "facts": self.facts,
            "entries": self.entries,
            "categories": self.categories,
            "forms": self.forms,
            "room_hash": self.room_hash,
            "generator_version": GENERATOR_VERSION,
        }

    def tabular(self) -> Tabular:
        rows = [
            ["room", str(self.out_dir)],
            ["seed", str(self.seed)],
            ["companies", str(self.companies)],
            ["years", str(self.years)],
            ["filings", str(self.documents)],
            *([f"  {k}", str(v)] for k, v in self.forms.items()),
            ["pages", str(self.pages)],
            ["ledger facts", str(self.facts)],
            ["golden entries", str(self.entries)],
            *([f"  {k}", str(v)] for k, v in self.categories.items()),
            ["room hash", self.room_hash[:16]],
        ]
        return Tabular("synthetic room", ["field", "value"], rows, emphasis=set())


def build_room(
    *,
    seed: int = 7,
    companies: int = DEFAULT_COMPANIES,
    years: int = DEFAULT_YEARS,
    last_fy: int = 2024,
) -> Room:
    """Build the ledger, lay out every filing and write the golden set, without touching disk."""
    if companies < 2:
        raise UsageError("--companies must be at least 2 (half technology companies, half banks)")
    if not 1 <= years <= 20:
        raise UsageError("--years must be between 1 and 20")
    ledger = build_ledger(seed, companies=companies, years=years, last_fy=last_fy)
    docs = build_filings(ledger)
    for d in docs:
        paginate(d, max_pages=1 if d.meta["form"] in _SINGLE_PAGE_FORMS else None)
    golden = build_golden(ledger, docs, seed=seed)
    conversations = build_conversations(ledger, docs, seed=seed) if years >= 2 else []
    return Room(seed, ledger, docs, golden, deal_books(ledger), conversations)


def _primary(form: str, formats: Sequence[str]) -> str:
    prefer = "html" if form in _SINGLE_PAGE_FORMS else "pdf"
    return prefer if prefer in formats else formats[0]


def _facts_rows(ledger: Ledger) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    tick = {c.cid: c.ticker for c in ledger.companies}
    for fid in sorted(ledger.facts):
        f = ledger.facts[fid]
        con = CONCEPTS[f.concept]
        r = ledger.restatements.get(fid)
        rows.append(
            {
                "fact_id": fid,
                "kind": "numeric",
                "ticker": tick[f.cid],
                "concept": f.concept,
                "label": con.label,
                "xbrl": con.xbrl,
                "unit": con.unit,
                "fiscal_year": f.fy,
                "fiscal_quarter": f.fq,
                "segment": f.segment,
                "period_start": f.start.isoformat() if f.start else None,
                "period_end": f.end.isoformat(),
                "value": ledger.current_value(fid),
                "original_value": r.old if r else None,
                "restated_on": r.effective.isoformat() if r else None,
                "restated_in": r.via if r else None,
                "restatement_kind": ("quiet" if r.quiet else "10-K/A") if r else None,
            }
        )
    for fid, value in sorted(text_facts(ledger).items()):
        rows.append(
            {"fact_id": fid, "kind": "text", "ticker": tick[fid.split(":")[0]], "value": value}
        )
    return rows


_MESS = ("clean", "scan-light", "scan-heavy")


def _choose_scans(room: Room, n: int, seed: int) -> dict[str, bool]:
    """`n` quarterly reports rendered as scans (seeded): doc id -> heavy (every page) or light
    (one page); alternately light and heavy."""
    tenq = sorted(d.doc_id for d in room.docs if d.meta["form"] == "10-Q")
    if n <= 0 or not tenq:
        return {}
    rng = np.random.default_rng([seed, 17])
    picked = [tenq[int(i)] for i in rng.choice(len(tenq), size=min(n, len(tenq)), replace=False)]
    return {doc: bool(k % 2) for k, doc in enumerate(picked)}


def _quote_box(quote: str, lines: list[tuple[str, tuple[float, ...]]]) -> tuple[float, ...] | None:
    """The (moved) box of the fewest consecutive lines that hold every token of `quote`."""
    want = normalize_tokens(quote)
    for span in (1, 2, 3, 4):
        for i in range(len(lines) - span + 1):
            toks = [t for text, _ in lines[i : i + span] for t in normalize_tokens(text)]
            n = len(want)
            if any(toks[j : j + n] == want for j in range(len(toks) - n + 1)):
                bs = [b for _, b in lines[i : i + span]]
                return (
                    min(b[0] for b in bs),
                    min(b[1] for b in bs),
                    max(b[2] for b in bs),
                    max(b[3] for b in bs),
                )
    return None


def _anchor_dicts(e: dict[str, Any]) -> list[dict[str, Any]]:
    out = [
        alt
        for path in e.get("evidence_paths", [])
        for piece in path
        for alt in piece
        if isinstance(alt, dict)
    ]
    for kf in e.get("key_facts", []):
        out.extend(a for a in kf.get("supporting", []) if isinstance(a, dict))
    return out


def _anchor_docs(e: dict[str, Any]) -> list[str]:
    return [
        str(alt["doc"])
        for path in e.get("evidence_paths", [])
        for piece in path
        for alt in piece
        if isinstance(alt, dict)
    ]


def _jsonl(rows: list[dict[str, Any]]) -> bytes:
    return "".join(
        json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in rows
    ).encode()


def generate_room(
    out_dir: str | Path,
    *,
    seed: int = 7,
    companies: int = DEFAULT_COMPANIES,
    years: int = DEFAULT_YEARS,
    formats: Sequence[str] = _FORMATS,
    last_fy: int = 2024,
    progress: Callable[[int, int], None] | None = None,
    scans: int = DEFAULT_SCANS,
) -> RoomSummary:
    """Generate the room into `out_dir` (replacing a previous room there; refusing other content).

    `progress(done, total)` is called as documents are rendered.
    """
    out = Path(out_dir)
    formats = tuple(dict.fromkeys(formats))
    bad = [f for f in formats if f not in _FORMATS]
    if not formats or bad:
        raise UsageError(
            f"formats must be a non-empty subset of {list(_FORMATS)}; got {list(formats)}"
        )
    if out.exists() and (
        not out.is_dir() or (any(out.iterdir()) and not (out / "manifest.json").exists())
    ):
        raise UsageError(
            f"{out} exists and is not a synthetic room (no manifest.json); "
            "choose an empty or new directory"
        )
    room = build_room(seed=seed, companies=companies, years=years, last_fy=last_fy)
    files: dict[str, bytes] = {}
    doc_rows: list[dict[str, Any]] = []
    total_pages = 0
    scanned = _choose_scans(room, scans, seed) if "pdf" in formats else {}
    scan_rng = np.random.default_rng([seed, 18])
    boxes: dict[tuple[str, int], list[tuple[str, tuple[float, ...]]]] = {}
    for i, d in enumerate(room.docs, start=1):
        lines = [[ln for b in page for ln in b.lines()] for page in d.pages]
        total_pages += len(d.pages)
        row = dict(d.meta)
        if "pdf" in formats:
            title = f"{d.meta['company']} {d.meta['form']}"
            pdf = write_pdf(lines, title=title)
            if d.doc_id in scanned:
                heavy = scanned[d.doc_id]
                pages = (
                    list(range(1, len(d.pages) + 1))
                    if heavy
                    else [int(scan_rng.integers(1, len(d.pages) + 1))]
                )
                shots = scan_pages(pdf, pages, scan_rng, heavy=heavy)
                clean = read_bytes(pdf, ".pdf", name=d.doc_id)
                for sc in shots:
                    lb = clean.line_boxes.get(sc.page, [])
                    boxes[(d.doc_id, sc.page)] = [
                        (t, move_box(b, sc.affine))
                        for t, b in zip(clean.pages[sc.page - 1].split("\n"), lb, strict=False)
                        if b is not None
                    ]
                pdf = write_pdf(
                    lines,
                    title=title,
                    images={sc.page: (sc.jpeg, sc.width, sc.height) for sc in shots},
                )
                row["metadata"] = {
                    "format": "pdf",
                    "messiness": "scan-heavy" if heavy else "scan-light",
                    "doc_type": d.meta["form"],
                    "authority": AUTHORITY.get(str(d.meta["form"]), 2),
                    "scan": [sc.to_dict() for sc in shots],
                }
            files[f"docs/{d.doc_id}.pdf"] = pdf
        if "html" in formats:
            files[f"docs/{d.doc_id}.html"] = render_html(d).encode()
        row["file"] = f"docs/{d.doc_id}.{_primary(str(d.meta['form']), formats)}"
        doc_rows.append(row)
        if progress is not None:
            progress(i, len(room.docs))
    deal_labels: dict[str, AccessLabel] = {}
    for book in room.deals:
        rendered: dict[str, bytes] = {}
        for dd in book.docs:
            data = render_deal_doc(dd, book, rendered)
            rendered[dd.doc_id] = data
            files[f"docs/{dd.doc_id}.{dd.fmt}"] = data
            c = book.c
            deal_labels[dd.doc_id] = deal_label(c, dd.kind)
            doc_rows.append(
                {
                    "doc_id": dd.doc_id,
                    "company": c.name,
                    "ticker": c.ticker,
                    "aliases": list(c.aliases),
                    "sector": c.sector,
                    "form": "OTHER",
                    "fiscal_year": book.fy,
                    "fiscal_quarter": None,
                    "period_end": c.calendar.year_end(book.fy).isoformat(),
                    "fiscal_year_end": c.calendar.fye,
                    "accepted_at": dd.accepted.isoformat(),
                    "amends": None,
                    "amended_items": [],
                    "file": f"docs/{dd.doc_id}.{dd.fmt}",
                    "version_date": dd.accepted.isoformat(),
                    "metadata": {
                        "format": dd.fmt,
                        "messiness": "clean",
                        "doc_type": dd.kind,
                        "authority": dd.authority,
                    },
                    "access": deal_labels[dd.doc_id].to_json_dict(),
                }
            )
    # the room's boundaries: the deal room's entries are asked by the deal team (or a director),
    # and the policy documents and their questions per role come after every other entry
    label_deal_entries(room.golden, deal_labels)
    bounds = policy_room(room.ledger, seed)
    for pd in bounds.docs:
        files[f"docs/{pd.doc_id}.html"] = pd.html()
        doc_rows.append(pd.row(room.ledger.last_fy))
    next_id = len(room.golden) + 1
    for i, pe in enumerate(bounds.entries, start=next_id):
        pe["id"] = f"syn-{i:04d}"
        pe["label_tier"] = ROOM_TIER  # gold by construction, as every room entry
        room.golden.append(Entry.model_validate(pe).to_json_dict())
    for row in doc_rows:
        row.setdefault(
            "metadata",
            {
                "format": str(row["file"]).rsplit(".", 1)[1],
                "messiness": "clean",
                "doc_type": row["form"],
                "authority": AUTHORITY.get(str(row["form"]), 2),
            },
        )
    doc_rows.sort(key=lambda r: str(r["doc_id"]))
    by_doc = {str(r["doc_id"]): r["metadata"] for r in doc_rows}
    turns = [t for conv in room.conversations for t in conv["turns"]]
    for e in [*room.golden, *turns]:
        for alt in _anchor_dicts(e):
            key = (str(alt["doc"]), int(alt["page"]))
            if key in boxes and by_doc[key[0]]["format"] == "pdf":
                box = _quote_box(str(alt["quote"]), boxes[key])
                if box is not None:
                    alt["box"] = [round(v, 1) for v in box]
    for e in room.golden:
        first = next(iter(_anchor_docs(e)), None)
        if first is not None and first in by_doc:
            e.setdefault("metadata", {})["format"] = by_doc[first]["format"]
            # the messiest page its gold lies on: "recall on scans" is recall on these entries
            worst = max(
                (
                    _MESS.index(by_doc[str(a["doc"])]["messiness"])
                    for a in _anchor_dicts(e)
                    if (str(a["doc"]), int(a["page"])) in boxes
                ),
                default=0,
            )
            e["metadata"]["messiness"] = _MESS[worst]
    files["documents.jsonl"] = _jsonl(doc_rows)
    room_id = f"{GENERATOR_VERSION}/seed{seed}/c{companies}y{years}"
    files["facts.jsonl"] = _jsonl([r | {"room": room_id} for r in _facts_rows(room.ledger)])
    for ticker, cf in sorted(company_facts(room.ledger, room.docs).items()):
        cf["assayRoom"] = room_id
        files[f"xbrl/companyfacts-{ticker}.json"] = (
            json.dumps(cf, indent=1, sort_keys=True) + "\n"
        ).encode()
    for e in room.golden:
        e.setdefault("metadata", {})["room"] = room_id
    files["golden.jsonl"] = _jsonl(room.golden)
    if room.conversations:
        for conv in room.conversations:
            conv["metadata"]["room"] = room_id
        files["conversations.jsonl"] = _jsonl(room.conversations)
    hashes = {name: sha256_bytes(data) for name, data in sorted(files.items())}
    room_hash = sha256_bytes(dumps_canonical(hashes).encode())
    cats = dict(sorted(Counter(str(e["category"]) for e in room.golden).items()))
    forms = dict(sorted(Counter(str(r["form"]) for r in doc_rows).items()))
    doc_formats = dict(sorted(Counter(str(r["metadata"]["format"]) for r in doc_rows).items()))
    manifest = {
        "generator": GENERATOR_VERSION,
        "room_version": ROOM_VERSION,
        "room": room_id,
        "seed": seed,
        "scale": {
            "companies": companies,
            "years": years,
            "first_fiscal_year": room.ledger.first_fy,
            "last_fiscal_year": room.ledger.last_fy,
        },
        "formats": list(formats),
        "counts": {
            "documents": len(doc_rows),
            "pages": total_pages,
            "facts": len(room.ledger.facts),
            "restated_facts": len(room.ledger.restatements),
            "entries": len(room.golden),
            "conversations": len(room.conversations),
            "categories": cats,
            "forms": forms,
            "formats": doc_formats,
        },
        "room_hash": room_hash,
        "files": hashes,
        "policy": policy_manifest(doc_rows, room.golden),
    }
    files["manifest.json"] = (json.dumps(manifest, indent=1, sort_keys=True) + "\n").encode()
    _write_tree(out, files)
    return RoomSummary(
        out,
        seed,
        companies,
        years,
        len(doc_rows),
        total_pages,
        len(room.ledger.facts),
        len(room.golden),
        cats,
        forms,
        room_hash,
    )


def _write_tree(out: Path, files: dict[str, bytes]) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent))
    try:
        for name, data in files.items():
            p = tmp / name
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(data)
        if out.exists():
            old = out.with_name(f".{out.name}.old")
            if old.exists():
                shutil.rmtree(old)
            out.rename(old)
            tmp.rename(out)
            shutil.rmtree(old)
        else:
            tmp.rename(out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
