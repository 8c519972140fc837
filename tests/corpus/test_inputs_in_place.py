"""`corpus build` reads only inside its source folder: a `--meta` record whose `file` is absolute
or climbs out with ``../`` is refused, and so is a symbolic link that leads out of the folder
(unless --follow-symlinks), with the metadata file, line and field named, exit 2, nothing
written. Attack: `/etc/passwd` ended up in a corpus, exit 0."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import assay.cli.corpus_cmds  # noqa: F401  (registers the commands)
from assay.cli import app
from assay.corpus import build_corpus, load_chunks
from assay.errors import DataError

SECRET = "The acquisition price is 41 dollars a share"


def _room(tmp_path: Path) -> tuple[Path, Path]:
    """SRC_DIR with one filing, and a secret file beside it (outside SRC_DIR)."""
    src = tmp_path / "filings"
    src.mkdir()
    (src / "a.html").write_text("<p>Revenue was $5 million.</p>", encoding="utf-8")
    secret = tmp_path / "private" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text(SECRET + ".\n", encoding="utf-8")
    return src, secret


def _meta(tmp_path: Path, files: list[str]) -> Path:
    meta = tmp_path / "documents.jsonl"
    meta.write_text(
        "".join(
            json.dumps({"doc_id": f"d{i}", "company": "Acme", "form": "8-K", "file": f}) + "\n"
            for i, f in enumerate(files)
        ),
        encoding="utf-8",
    )
    return meta


def _cli(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(app, ["corpus", "build", *args, "--no-progress"])
    return res.exit_code, res.output


@pytest.mark.parametrize(
    "spelling", ["absolute", "../private/secret.txt", "./sub/../../private/secret.txt"]
)
def test_a_meta_file_outside_src_dir_is_refused(tmp_path: Path, spelling: str) -> None:
    src, secret = _room(tmp_path)
    name = str(secret) if spelling == "absolute" else spelling
    meta = _meta(tmp_path, ["a.html", name])
    out = tmp_path / "corpus"
    with pytest.raises(DataError) as err:
        build_corpus(src, meta=meta, out_dir=out, workers=1)
    (p,) = err.value.problems
    assert (p.file, p.line, p.field) == (str(meta), 2, "file")
    assert f"d1: {name} is outside {src}" in p.message
    assert not out.exists()
    code, output = _cli(str(src), "--meta", str(meta), "--out", str(out), "--follow-symlinks")
    assert code == 2, output
    assert f"{meta}:2: file: d1:" in output and "outside" in output
    assert not out.exists()


@pytest.mark.parametrize("how", ["file link", "folder link"])
def test_a_symlink_out_of_src_dir_is_not_followed_unless_asked(tmp_path: Path, how: str) -> None:
    src, secret = _room(tmp_path)
    if how == "file link":
        (src / "notes.txt").symlink_to(secret)
        name = "notes.txt"
    else:
        (src / "shared").symlink_to(secret.parent, target_is_directory=True)
        name = "shared/secret.txt"
    meta = _meta(tmp_path, ["a.html", name])
    out = tmp_path / "corpus"
    with pytest.raises(DataError) as err:
        build_corpus(src, meta=meta, out_dir=out, workers=1)
    (p,) = err.value.problems
    assert (p.file, p.line, p.field) == (str(meta), 2, "file")
    assert f"symbolic link to {secret}" in p.message and "--follow-symlinks" in p.message
    assert not out.exists()
    code, output = _cli(str(src), "--meta", str(meta), "--out", str(out))
    assert code == 2 and f"{meta}:2: file: d1:" in output, output
    assert not out.exists()
    # asked for: the link is read
    code, output = _cli(str(src), "--meta", str(meta), "--out", str(out), "--follow-symlinks")
    assert code == 0, output
    texts = [c.text for c in load_chunks(out / "chunks.jsonl").chunks]
    assert any(SECRET in t for t in texts)


def test_without_meta_a_symlink_out_is_refused_and_one_inside_is_read(tmp_path: Path) -> None:
    src, secret = _room(tmp_path)
    (src / "passwd.txt").symlink_to(secret)
    out = tmp_path / "corpus"
    code, output = _cli(str(src), "--out", str(out))
    assert code == 2, output
    assert f"{src / 'passwd.txt'}: a symbolic link to {secret}" in output
    assert not out.exists()
    (src / "passwd.txt").unlink()
    (src / "alias.html").symlink_to(src / "a.html")  # a link that stays inside is fine
    manifest = build_corpus(src, meta=None, out_dir=out, workers=1)
    assert manifest.n_documents == 2 and not manifest.failures
    texts = [c.text for c in load_chunks(out / "chunks.jsonl").chunks]
    assert not any(SECRET in t for t in texts)


def test_company_facts_linked_from_outside_are_refused(tmp_path: Path) -> None:
    src, _secret = _room(tmp_path)
    outside = tmp_path / "private" / "facts.json"
    outside.write_text(json.dumps({"cik": 1, "facts": {}}), encoding="utf-8")
    (src / "xbrl").mkdir()
    (src / "xbrl" / "ACME.json").symlink_to(outside)
    out = tmp_path / "corpus"
    with pytest.raises(DataError, match=r"symbolic link to .*facts\.json, outside"):
        build_corpus(src, meta=None, out_dir=out, workers=1)
    assert not out.exists()
    build_corpus(src, meta=None, out_dir=out, workers=1, follow_symlinks=True)
    assert (out / "xbrl" / "ACME.json").is_file()


def test_financebench_metadata_names_the_line_of_the_linked_filing(tmp_path: Path) -> None:
    """FinanceBench's documents.jsonl (doc_name, no file): the record's line is named too."""
    src, secret = _room(tmp_path)
    (src / "ACME_2023_10K.pdf").symlink_to(secret)
    meta = tmp_path / "fb_documents.jsonl"
    rows = [
        {"doc_name": "OTHER_2022_10K", "company": "Other", "doc_type": "10k",
         "doc_period": 2022, "pdf_in_corpus": False},
        {"doc_name": "ACME_2023_10K", "company": "Acme", "doc_type": "10k",
         "doc_period": 2023, "pdf_in_corpus": True},
    ]  # fmt: skip
    meta.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with pytest.raises(DataError) as err:
        build_corpus(src, meta=meta, out_dir=tmp_path / "corpus", workers=1)
    (p,) = err.value.problems
    assert (p.file, p.line, p.field) == (str(meta), 2, "file")
    assert "ACME_2023_10K.pdf is a symbolic link" in p.message
