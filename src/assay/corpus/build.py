"""Build a corpus: filings + documents.jsonl -> pages.jsonl, chunks.jsonl, documents.jsonl,
facts.jsonl (`assay.corpus.facts`), manifest.json.

Parsing runs in worker processes and is cached per file content hash under
``OUT/.parse-cache/`` so a rebuild re-parses only files whose bytes (or the parser) changed;
chunking is cheap and always redone, so changed chunker settings always take effect. A file that
cannot be parsed (a corrupt PDF) is reported by name in `CorpusManifest.failures` and left out;
the rest of the corpus is still built.

The corpus hash (``manifest.json: corpus_hash``) is the SHA-256 of the written chunk table (whose
rows carry the filing metadata); its first 16 hex digits are the index version
(`assay.corpus.chunks.load_chunks(...).version`) every dataset and run is bound to.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from collections.abc import Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from assay._io import (
    iter_jsonl,
    json_loads,
    sha256_bytes,
    sha256_file,
    write_jsonl_atomic,
    write_text_atomic,
)
from assay.corpus.chunking import CHUNKER_NAME, ChunkSettings
from assay.corpus.chunks import table_fingerprint
from assay.corpus.documents import (
    Document,
    detect_amendment,
    enrich_from_text,
    link_amendments,
    load_documents_any,
)
from assay.corpus.facts import extract_facts
from assay.corpus.ocr import ocr_engine
from assay.corpus.parse import parser_version
from assay.corpus.readers import READ_SUFFIXES as SUPPORTED_SUFFIXES
from assay.corpus.readers import READER_REVISION, ParsedFile, chunk_parsed, read_file
from assay.errors import DataError, Problem, UsageError

__all__ = ["MANIFEST_FORMAT", "CorpusManifest", "build_corpus", "load_manifest"]

MANIFEST_FORMAT = "assay.corpus/1"
_CACHE_DIR = ".parse-cache"


@dataclass
class CorpusManifest:
    """What was built, from what, and how; `corpus_hash` identifies the chunk table."""

    corpus_hash: str
    parser: str
    chunker: str
    chunk_settings: dict[str, Any]
    files: dict[str, dict[str, Any]]  # doc_id -> {file, sha256, pages, chunks}
    n_documents: int
    n_pages: int
    n_chunks: int
    outputs: dict[str, str]  # output file name -> sha256
    failures: list[Problem] = field(default_factory=list)
    skipped: list[str] = field(
        default_factory=list
    )  # metadata records without a file, files without metadata
    parsed: list[str] = field(default_factory=list)  # doc ids parsed in this build
    reused: list[str] = field(default_factory=list)  # doc ids whose parse came from the cache
    built_at: str = ""
    path: Path | None = None
    chunks_fingerprint: str | None = None  # `ChunkTable.fingerprint` of chunks.jsonl

    @property
    def ok(self) -> bool:
        return not self.failures

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "format": MANIFEST_FORMAT,
            "corpus_hash": self.corpus_hash,
            "chunks_fingerprint": self.chunks_fingerprint,
            "parser": self.parser,
            "chunker": self.chunker,
            "chunk_settings": self.chunk_settings,
            "n_documents": self.n_documents,
            "n_pages": self.n_pages,
            "n_chunks": self.n_chunks,
            "files": self.files,
            "outputs": self.outputs,
            "failures": [{"file": p.file, "message": p.message} for p in self.failures],
            "skipped": self.skipped,
            "parsed": self.parsed,
            "reused": self.reused,
            "built_at": self.built_at,
        }


def load_manifest(path: str | Path) -> CorpusManifest:
    path = Path(path)
    if path.is_dir():
        path = path / "manifest.json"
    try:
        obj = json_loads(path.read_text(encoding="utf-8"), path)
    except FileNotFoundError:
        raise DataError("file not found", file=path) from None
    if obj.get("format") != MANIFEST_FORMAT:
        raise DataError(
            f"expected {MANIFEST_FORMAT!r}, got {obj.get('format')!r}", file=path, field="format"
        )
    return CorpusManifest(
        corpus_hash=obj["corpus_hash"],
        parser=obj["parser"],
        chunker=obj["chunker"],
        chunk_settings=obj["chunk_settings"],
        files=obj["files"],
        n_documents=obj["n_documents"],
        n_pages=obj["n_pages"],
        n_chunks=obj["n_chunks"],
        outputs=obj["outputs"],
        failures=[Problem(f["file"], None, None, f["message"]) for f in obj.get("failures", [])],
        skipped=obj.get("skipped", []),
        parsed=obj.get("parsed", []),
        reused=obj.get("reused", []),
        built_at=obj.get("built_at", ""),
        path=path,
        chunks_fingerprint=obj.get("chunks_fingerprint"),
    )


def _parse_job(path: str, ocr: str | None = None) -> tuple[str, dict[str, Any] | None, str | None]:
    """Worker: parse one file (image-only PDF pages by OCR engine `ocr`); never raises."""
    try:
        return path, read_file(path, ocr=ocr_engine(ocr)).to_dict(), None
    except DataError as exc:
        return path, None, "; ".join(p.message for p in exc.problems)
    except (
        Exception
    ) as exc:  # a worker must report, not die: any parser crash is this file's failure
        return path, None, f"{type(exc).__name__}: {exc}"


def _find_file(src: Path, doc: Document) -> Path | None:
    if doc.file:
        p = src / doc.file
        return p if p.is_file() else None
    for suffix in SUPPORTED_SUFFIXES:
        p = src / f"{doc.doc_id}{suffix}"
        if p.is_file():
            return p
    return None


def _meta_lines(meta: str | Path | Sequence[Document] | None) -> dict[str, int]:
    """doc_id -> the line of its record in the metadata file (assay's `doc_id`, FinanceBench's
    `doc_name`; empty for a list of documents)."""
    lines: dict[str, int] = {}
    if isinstance(meta, (str, Path)):
        for lineno, obj in iter_jsonl(Path(meta)):
            if isinstance(obj, dict):
                lines.setdefault(str(obj.get("doc_id") or obj.get("doc_name") or ""), lineno)
    return lines


def _escapes(name: str) -> bool:
    """A metadata `file` that names a place outside SRC_DIR by its spelling: an absolute path,
    or one whose ``..`` steps climb above the folder."""
    p = PurePosixPath(name)
    return p.is_absolute() or os.path.normpath(name).split(os.sep)[0] == ".."


def _outside(src_real: Path, path: Path) -> Path | None:
    """Where `path` really is when that is outside the (resolved) source folder: a symbolic
    link, or a link in one of its folders, leading out of it; None when it stays inside."""
    real = path.resolve()
    return None if real.is_relative_to(src_real) else real


def _out_of_place(
    src: Path,
    meta: str | Path | Sequence[Document] | None,
    jobs: Sequence[tuple[Document, Path]],
    escaped: Sequence[Document],
    extra: Sequence[Path],
) -> list[Problem]:
    """Every input that is not inside `src` (a `file` spelled outside it, a symbolic link out of
    it), by metadata file, line and field; `extra` are files read without a record (xbrl/)."""
    src_real = src.resolve()
    found = [
        (doc, f"{doc.file} is outside {src}: a `file` is relative to SRC_DIR and stays inside it")
        for doc in escaped
    ]
    for doc, f in jobs:
        real = _outside(src_real, f)
        if real is not None:
            link = f"a symbolic link to {real}, outside {src}{_FOLLOW_HINT}"
            found.append((doc, link if meta is None else f"{doc.file or f.name} is {link}"))
    problems: list[Problem] = []
    if found:
        where = str(meta) if isinstance(meta, (str, Path)) else "documents"
        lines = _meta_lines(meta)
        for doc, msg in found:
            if meta is None:  # no metadata: the file is the place
                problems.append(Problem(str(src / (doc.file or doc.doc_id)), None, None, msg))
            else:
                problems.append(
                    Problem(where, lines.get(doc.doc_id), "file", f"{doc.doc_id}: {msg}")
                )
    for f in extra:
        real = _outside(src_real, f)
        if real is not None:
            problems.append(
                Problem(
                    str(f), None, None, f"a symbolic link to {real}, outside {src}{_FOLLOW_HINT}"
                )
            )
    return problems


_FOLLOW_HINT = (
    "; not read (pass --follow-symlinks to read files outside SRC_DIR that links lead to)"
)


def _no_file_found(
    src: Path, meta: str | Path | Sequence[Document] | None, docs: Sequence[Document]
) -> list[Problem]:
    """Why a build whose metadata names no file under `src` stops before writing: the first
    records, by line, with where their `file` was looked for (and, when the metadata file's own
    folder holds it, that folder: the likely SRC_DIR)."""
    where = str(meta) if isinstance(meta, (str, Path)) else "documents"
    lines = _meta_lines(meta)
    problems: list[Problem] = []
    for doc in sorted(docs, key=lambda d: (lines.get(d.doc_id, 0), d.doc_id))[:3]:
        name = doc.file or f"{doc.doc_id}.<pdf|html|...>"
        msg = f"{doc.doc_id}: no file {name} under {src} (paths in `file` are relative to SRC_DIR)"
        if isinstance(meta, (str, Path)) and doc.file and (Path(meta).parent / doc.file).is_file():
            msg += f"; it is under {Path(meta).parent}: pass that folder as SRC_DIR"
        problems.append(Problem(where, lines.get(doc.doc_id), "file", msg))
    rest = len(docs) - len(problems)
    if rest > 0:
        problems.append(
            Problem(where, None, None, f"and {rest} more: no record names a file under {src}")
        )
    return problems


def _default_document(path: Path) -> Document:
    return Document(
        doc_id=path.stem.replace(" ", "_"), company=path.stem, form="OTHER", file=path.name
    )


def build_corpus(
    src_dir: str | Path,
    *,
    meta: str | Path | Sequence[Document] | None,
    out_dir: str | Path,
    workers: int | None = None,
    settings: ChunkSettings | None = None,
    progress: bool = False,
    enrich: bool = True,
    ocr: str | None = "auto",
    follow_symlinks: bool = False,
) -> CorpusManifest:
    """Parse, chunk and write a corpus; returns the manifest (check `.failures`).

    `meta` is a documents.jsonl in assay's or FinanceBench's format, a list of `Document`, or
    None (every supported file in `src_dir` becomes a document named by its file stem). Metadata
    records without a file (FinanceBench lists filings that are not in the folder) and files
    without a record are listed in `skipped`. With `enrich`, period ends and acceptance dates
    still marked estimated are read from the filing text where it states them, amendments are
    recognised from their cover ("FORM 10-K/A", with the items their explanatory note names) and
    linked (`amends`) to the one original of the same company, form and fiscal period.
    Image-only PDF pages (scans) are read by the OCR engine `ocr` ("auto": the installed one,
    `assay.corpus.ocr`; None: left empty); the engine is part of the parser identity, so the
    parse cache keeps OCR output by file content and engine.

    Every file read is inside `src_dir`: a metadata `file` that is absolute or climbs out of it
    (``../``) is refused, and so, unless `follow_symlinks`, is a symbolic link that leads out of
    it (a DataError naming the metadata file, line and field; nothing is written).
    """
    src = Path(src_dir)
    out = Path(out_dir)
    if not src.is_dir():
        raise UsageError(f"{src}: not a directory")
    if out.resolve() == src.resolve():
        raise UsageError(f"{out}: the output folder is the folder of filings; choose another")
    written = {(out / n).resolve() for n in (*_OUTPUTS, "manifest.json")}
    if isinstance(meta, (str, Path)) and Path(meta).resolve() in written:
        raise UsageError(f"{meta}: --meta is a file the build writes; choose another --out")
    settings = settings or ChunkSettings()
    if meta is None:
        docs = [
            _default_document(p)
            for p in sorted(src.iterdir())
            if p.is_file() and p.suffix.lower() in SUPPORTED_SUFFIXES
        ]
    elif isinstance(meta, (str, Path)):
        docs = load_documents_any(meta)
    else:
        docs = list(meta)
    skipped: list[str] = []
    jobs: list[tuple[Document, Path]] = []
    used: set[Path] = set()
    escaped: list[Document] = []
    for doc in sorted(docs, key=lambda d: d.doc_id):
        if doc.file and _escapes(doc.file):
            escaped.append(doc)
            continue
        f = _find_file(src, doc)
        if f is None:
            skipped.append(f"{doc.doc_id}: no file in {src}")
            continue
        jobs.append((doc, f))
        used.add(f.resolve())
    xbrl = sorted((src / "xbrl").glob("*.json")) if (src / "xbrl").is_dir() else []
    if escaped or not follow_symlinks:
        placed = _out_of_place(
            src, meta, [] if follow_symlinks else jobs, escaped, [] if follow_symlinks else xbrl
        )
        if placed:
            raise DataError(placed)
    if docs and not jobs:
        raise DataError(_no_file_found(src, meta, docs))
    for p in sorted(src.iterdir()):
        if p.is_file() and p.suffix.lower() in SUPPORTED_SUFFIXES and p.resolve() not in used:
            skipped.append(f"{p.name}: no metadata record")

    engine = ocr_engine(ocr)
    ocr_name = getattr(engine, "engine", None)
    pversion = f"{parser_version()} readers={READER_REVISION} ocr={ocr_name or 'none'}"
    cache = out / _CACHE_DIR
    cache.mkdir(parents=True, exist_ok=True)
    hashes: dict[str, str] = {}
    parsed_of: dict[str, ParsedFile] = {}
    to_parse: list[tuple[Document, Path]] = []
    reused: list[str] = []
    for doc, f in jobs:
        h = sha256_file(f)
        hashes[doc.doc_id] = h
        cached = _cache_path(cache, h, pversion)
        if cached.is_file():
            try:
                parsed_of[doc.doc_id] = ParsedFile.from_dict(
                    json.loads(cached.read_text(encoding="utf-8"))["parsed"]
                )
                reused.append(doc.doc_id)
                continue
            except (json.JSONDecodeError, KeyError, OSError):
                pass  # a damaged cache entry is simply re-parsed
        to_parse.append((doc, f))

    failures: list[Problem] = []
    results = _run_parse(to_parse, workers, progress, ocr_name)
    for doc, f in to_parse:
        got, err = results[str(f)]
        if got is None:
            failures.append(
                Problem(str(f), None, None, f"not parsed, left out of the corpus: {err}")
            )
            continue
        parsed_of[doc.doc_id] = ParsedFile.from_dict(got)
        write_text_atomic(
            _cache_path(cache, hashes[doc.doc_id], pversion),
            json.dumps({"parser": pversion, "file": f.name, "parsed": got}, ensure_ascii=False),
        )

    enriched: dict[str, Document] = {}
    for doc, _f in jobs:
        if doc.doc_id in parsed_of:
            pages = parsed_of[doc.doc_id].pages
            if enrich and (doc.accepted_at_estimated or doc.metadata.get("period_end_estimated")):
                doc = enrich_from_text(doc, pages)
            elif enrich:
                doc = detect_amendment(doc, pages)
            enriched[doc.doc_id] = doc
    if enrich:
        enriched = {d.doc_id: d for d in link_amendments(list(enriched.values()))}

    built_docs: list[Document] = []
    chunk_rows: list[dict[str, Any]] = []
    page_rows: list[dict[str, Any]] = []
    files: dict[str, dict[str, Any]] = {}
    for doc, f in jobs:
        if doc.doc_id not in parsed_of:
            continue
        parsed = parsed_of[doc.doc_id]
        pages = parsed.pages
        doc = enriched[doc.doc_id]
        built_docs.append(doc)
        doc_fields = doc.chunk_fields()
        chunks = chunk_parsed(doc.doc_id, parsed, settings)
        for ch in chunks:
            row = ch.to_row()
            row.update(doc_fields)
            chunk_rows.append(row)
        page_rows.extend(
            {"doc_id": doc.doc_id, "page": i, "text": t} for i, t in enumerate(pages, start=1)
        )
        files[doc.doc_id] = {
            "file": f.name,
            "sha256": hashes[doc.doc_id],
            "pages": len(pages),
            "chunks": len(chunks),
        }

    if failures and not built_docs:
        raise DataError(
            [
                *failures,
                Problem(
                    str(src), None, None, f"every file failed to parse; {out} was left as it was"
                ),
            ]
        )

    # Drop cache entries no file of this build uses (old versions of changed files, old parsers).
    keep = {_cache_path(cache, h, pversion).name for h in hashes.values()}
    for entry in cache.glob("*.json"):
        if entry.name not in keep:
            entry.unlink(missing_ok=True)

    out.mkdir(parents=True, exist_ok=True)
    write_jsonl_atomic(out / "chunks.jsonl", chunk_rows)
    write_jsonl_atomic(out / "documents.jsonl", (d.to_json_dict() for d in built_docs))
    write_jsonl_atomic(out / "pages.jsonl", page_rows)
    # figures of the statements' tables, one per year column (see assay.corpus.facts)
    page_text = {(r["doc_id"], r["page"]): r["text"] for r in page_rows}
    write_jsonl_atomic(
        out / "facts.jsonl", (f.to_dict() for f in extract_facts(chunk_rows, page_text))
    )
    # structured facts shipped with the filings (SEC company facts, as the synthetic room writes
    # them under xbrl/) travel with the corpus: the facts answerer reads them from there
    _copy_company_facts(Path(src), out)
    outputs = {name: sha256_file(out / name) for name in _OUTPUTS}
    # The chunk rows carry the document metadata the filters use, so the chunk table's hash
    # covers both; it equals `load_chunks(...).version` (its first 16 hex digits).
    corpus_hash = outputs["chunks.jsonl"]
    manifest = CorpusManifest(
        corpus_hash=corpus_hash,
        parser=pversion,
        chunker=CHUNKER_NAME,
        chunk_settings=settings.to_dict(),
        files=files,
        n_documents=len(built_docs),
        n_pages=len(page_rows),
        n_chunks=len(chunk_rows),
        outputs=outputs,
        failures=failures,
        skipped=skipped,
        parsed=[d.doc_id for d, _ in to_parse if d.doc_id in parsed_of],
        reused=reused,
        built_at=dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat(),
        path=out / "manifest.json",
        chunks_fingerprint=table_fingerprint(
            (r["chunk_id"], r["content_hash"]) for r in chunk_rows
        ),
    )
    write_text_atomic(
        out / "manifest.json",
        json.dumps(manifest.to_json_dict(), indent=2, ensure_ascii=False) + "\n",
    )
    return manifest


_OUTPUTS = ("chunks.jsonl", "documents.jsonl", "pages.jsonl", "facts.jsonl")


def _cache_path(cache: Path, file_hash: str, pversion: str) -> Path:
    return cache / f"{file_hash[:32]}-{sha256_bytes(pversion.encode())[:8]}.json"


def _run_parse(
    jobs: list[tuple[Document, Path]], workers: int | None, progress: bool, ocr: str | None = None
) -> dict[str, tuple[dict[str, Any] | None, str | None]]:
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    results: dict[str, tuple[dict[str, Any] | None, str | None]] = {}
    if not jobs:
        return results
    n_workers = max(1, min(workers or (os.cpu_count() or 1), len(jobs)))
    bar = Progress(
        TextColumn("parsing"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[name]}"),
        TimeRemainingColumn(),
        disable=not progress,
        transient=False,
    )
    # Largest files first so one big filing does not finish last on its own.
    ordered = sorted((str(f) for _, f in jobs), key=lambda p: -os.path.getsize(p))
    with bar:
        task = bar.add_task("parse", total=len(ordered), name="")
        if n_workers == 1:
            for p in ordered:
                path, pages, err = _parse_job(p, ocr)
                results[path] = (pages, err)
                bar.update(task, advance=1, name=Path(path).name)
        else:
            with ProcessPoolExecutor(max_workers=n_workers) as pool:
                futures: list[Future[tuple[str, dict[str, Any] | None, str | None]]] = [
                    pool.submit(_parse_job, p, ocr) for p in ordered
                ]
                for fut in as_completed(futures):
                    path, pages, err = fut.result()
                    results[path] = (pages, err)
                    bar.update(task, advance=1, name=Path(path).name)
    return results


def _copy_company_facts(src: Path, out: Path) -> None:
    """Copy ``src/xbrl/*.json`` (SEC company-facts JSON) to ``out/xbrl/``, replacing any left
    by an earlier build; nothing when the source has none."""
    folder = src / "xbrl"
    target = out / "xbrl"
    if not folder.is_dir():
        return
    target.mkdir(exist_ok=True)
    wanted = {p.name for p in folder.glob("*.json")}
    for old in target.glob("*.json"):
        if old.name not in wanted:
            old.unlink()
    for p in sorted(folder.glob("*.json")):
        write_text_atomic(target / p.name, p.read_text(encoding="utf-8"))
