from __future__ import annotations

import subprocess
import sys

import assay


def test_every_public_name_resolves() -> None:
    for name in assay.__all__:
        assert getattr(assay, name) is not None, name


def test_importing_assay_is_light() -> None:
    """The command line starts fast: importing assay pulls in neither scipy nor pydantic."""
    code = "import sys, assay, assay.cli._register; print(sorted(m for m in ('scipy', 'pydantic', 'torch', 'fastapi') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_verbs_are_namespaced() -> None:
    """``assay.fresh.seal``, not a bare ``assay.seal``; namespaces resolve to their packages."""
    from assay.dataset import fresh

    assert assay.fresh is fresh and assay.fresh.seal is fresh.seal
    for bare in ("seal", "retire", "record_use"):
        assert bare not in assay.__all__ and not hasattr(assay, bare)
    assert assay.metrics.parse("hit@5").binary
