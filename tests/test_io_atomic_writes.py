"""Atomic writes keep an existing file's mode and follow symlinks (issue 11)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from assay._io import atomic_writer, check_outputs, write_text_atomic
from assay.errors import UsageError


def test_existing_mode_is_kept(tmp_path: Path) -> None:
    p = tmp_path / "golden.jsonl"
    p.write_text("old\n")
    p.chmod(0o640)
    write_text_atomic(p, "new\n")
    assert p.read_text() == "new\n"
    assert stat.S_IMODE(p.stat().st_mode) == 0o640
    p.chmod(0o604)
    with atomic_writer(p, "wb") as fh:
        fh.write(b"bytes\n")
    assert stat.S_IMODE(p.stat().st_mode) == 0o604


def test_new_file_gets_the_umask_mode(tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        write_text_atomic(tmp_path / "new.txt", "x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == 0o640


def test_symlink_is_followed_and_kept(tmp_path: Path) -> None:
    real = tmp_path / "data" / "golden-v3.jsonl"
    real.parent.mkdir()
    real.write_text("old\n")
    real.chmod(0o600)
    link = tmp_path / "golden.jsonl"
    link.symlink_to(real)
    chain = tmp_path / "current.jsonl"
    chain.symlink_to(link)
    write_text_atomic(chain, "new\n")
    assert chain.is_symlink() and link.is_symlink()
    assert os.readlink(chain) == str(link) and os.readlink(link) == str(real)
    assert real.read_text() == "new\n"
    assert stat.S_IMODE(real.stat().st_mode) == 0o600
    assert sorted(p.name for p in real.parent.iterdir()) == ["golden-v3.jsonl"]  # no temp left


def test_a_dangling_symlink_creates_its_target(tmp_path: Path) -> None:
    link = tmp_path / "out.jsonl"
    link.symlink_to(tmp_path / "target.jsonl")
    write_text_atomic(link, "x\n")
    assert link.is_symlink() and (tmp_path / "target.jsonl").read_text() == "x\n"


def test_failed_write_leaves_the_old_file(tmp_path: Path) -> None:
    p = tmp_path / "f.txt"
    p.write_text("old")
    with pytest.raises(RuntimeError), atomic_writer(p) as fh:
        fh.write("partial")
        raise RuntimeError("boom")
    assert p.read_text() == "old" and [x.name for x in tmp_path.iterdir()] == ["f.txt"]


def test_check_outputs(tmp_path: Path) -> None:
    a = tmp_path / "a.jsonl"
    a.write_text("x")
    link = tmp_path / "link.jsonl"
    link.symlink_to(a)
    (tmp_path / "afile").write_text("x")
    check_outputs([tmp_path / "b.jsonl", tmp_path / "new" / "c.jsonl"], [a])  # fine
    with pytest.raises(UsageError, match="is an input"):
        check_outputs([a], [a])
    with pytest.raises(UsageError, match="is an input"):
        check_outputs([link], [a])  # the same file by another name
    with pytest.raises(UsageError, match="is an input"):
        check_outputs([tmp_path / "." / "a.jsonl"], [a])
    with pytest.raises(UsageError, match="two outputs"):
        check_outputs([tmp_path / "b", tmp_path / "b"])
    with pytest.raises(UsageError, match="is a directory"):
        check_outputs([tmp_path])
    with pytest.raises(UsageError, match="is a file, not a folder"):
        check_outputs([tmp_path / "afile" / "x" / "y.json"])


def test_an_unwritable_output_is_named_not_its_temporary_file(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import errno
    import tempfile

    from assay._io import write_text_atomic

    target = tmp_path / "out" / "result.json"

    def refuse(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise PermissionError(errno.EACCES, "Permission denied", str(target.parent / ".x.tmp"))

    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    with pytest.raises(PermissionError) as info:
        write_text_atomic(target, "x")
    assert info.value.filename == str(target)
    assert ".tmp" not in str(info.value)


def test_a_failed_rename_names_the_output(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import errno
    import os

    from assay._io import write_text_atomic

    target = tmp_path / "result.json"

    def refuse(src, dst):  # type: ignore[no-untyped-def]
        raise OSError(errno.EROFS, "Read-only file system", str(src))

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError) as info:
        write_text_atomic(target, "x")
    assert info.value.filename == str(target)
    assert list(tmp_path.iterdir()) == []  # no temporary file left behind
