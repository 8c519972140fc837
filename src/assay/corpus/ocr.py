"""OCR of image-only PDF pages: Tesseract (through pytesseract) or RapidOCR (onnxruntime).

`ocr_engine(name)` returns a function from a pypdfium2 page to (lines, boxes): the page is
rendered at `OCR_DPI`, read by the engine, and the words are grouped into lines (top to bottom,
left to right) with one box per line in PDF points (origin bottom-left), the same coordinates the
text layer's line boxes use, so box gold aligns on OCR output as on text. `"auto"` picks the
engine the project recommends if it is installed (see docs/synth.md for the comparison), else
the other, else None. `available()` lists the installed engines.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from functools import lru_cache
from typing import Any

__all__ = ["ENGINES", "OCR_DPI", "OcrFn", "available", "ocr_engine", "ocr_image"]

OCR_DPI = 150
ENGINES = ("tesseract", "rapidocr")
Box = tuple[float, float, float, float]
OcrFn = Callable[[Any], tuple[list[str], list[Box | None]]]


def available() -> list[str]:
    out = []
    try:
        import pytesseract  # noqa: F401

        if shutil.which("tesseract"):
            out.append("tesseract")
    except ImportError:
        pass
    try:
        import rapidocr_onnxruntime  # noqa: F401

        out.append("rapidocr")
    except ImportError:
        pass
    return out


@lru_cache(maxsize=1)
def _rapid() -> Any:
    from rapidocr_onnxruntime import RapidOCR

    return RapidOCR()


def _group_lines(words: list[tuple[str, float, float, float, float]]) -> list[tuple[str, Box]]:
    """Segments (text, x0, top, x1, bottom in pixels) -> lines: a segment joins a line when it
    overlaps the line's last segment vertically by most of its height and lies to its right."""
    words = sorted(words, key=lambda w: (w[2], w[1]))
    lines: list[list[tuple[str, float, float, float, float]]] = []
    for w in words:
        for ln in lines:
            last = ln[-1]
            overlap = min(last[4], w[4]) - max(last[2], w[2])
            if overlap > 0.6 * min(last[4] - last[2], w[4] - w[2]) and w[1] >= last[3] - 2:
                ln.append(w)
                break
        else:
            lines.append([w])
    out = []
    for ln in lines:
        ln.sort(key=lambda w: w[1])
        text = " ".join(w[0] for w in ln)
        box = (
            min(w[1] for w in ln),
            min(w[2] for w in ln),
            max(w[3] for w in ln),
            max(w[4] for w in ln),
        )
        out.append((text, box))
    return out


def ocr_image(img: Any, engine: str) -> list[tuple[str, Box]]:
    """Lines of text with pixel boxes (x0, top, x1, bottom) from a PIL image."""
    words: list[tuple[str, float, float, float, float]] = []
    if engine == "tesseract":
        import os

        import pytesseract

        # one thread per page: parsing already runs a process per core
        os.environ.setdefault("OMP_THREAD_LIMIT", "1")

        d = pytesseract.image_to_data(img, output_type=pytesseract.Output.DICT, config="--psm 4")
        groups: dict[tuple[int, int, int], list[int]] = {}
        for i, t in enumerate(d["text"]):
            if str(t).strip():
                groups.setdefault(
                    (d["block_num"][i], d["par_num"][i], d["line_num"][i]), []
                ).append(i)
        for idx in groups.values():
            text = " ".join(str(d["text"][i]).strip() for i in idx)
            x0 = min(d["left"][i] for i in idx)
            y0 = min(d["top"][i] for i in idx)
            x1 = max(d["left"][i] + d["width"][i] for i in idx)
            y1 = max(d["top"][i] + d["height"][i] for i in idx)
            words.append((text, float(x0), float(y0), float(x1), float(y1)))
        words.sort(key=lambda w: (w[2], w[1]))  # Tesseract's own lines follow the skew
        return [(w[0], (w[1], w[2], w[3], w[4])) for w in words]
    elif engine == "rapidocr":
        import numpy as np

        result, _ = _rapid()(np.asarray(img.convert("RGB")))
        for quad, text, _score in result or []:
            xs = [float(p[0]) for p in quad]
            ys = [float(p[1]) for p in quad]
            words.append((str(text), min(xs), min(ys), max(xs), max(ys)))
    else:
        raise ValueError(f"unknown OCR engine {engine!r}; expected one of {', '.join(ENGINES)}")
    return _group_lines(words)


def ocr_engine(name: str | None) -> OcrFn | None:
    """The page reader of engine `name` ("auto", "tesseract", "rapidocr"; None or "none": off)."""
    if name in (None, "none"):
        return None
    have = available()
    if name == "auto":
        if not have:
            return None
        name = "tesseract" if "tesseract" in have else have[0]
    if name not in ENGINES:
        raise ValueError(f"unknown OCR engine {name!r}; expected auto, none, {', '.join(ENGINES)}")
    engine = name

    def read(page: Any) -> tuple[list[str], list[Box | None]]:
        scale = OCR_DPI / 72
        _, h_pt = page.get_size()
        img = page.render(scale=scale, grayscale=True).to_pil()
        lines: list[str] = []
        boxes: list[Box | None] = []
        for text, (x0, top, x1, bottom) in ocr_image(img, engine):
            clean = " ".join(text.split())
            if not clean:
                continue
            lines.append(clean)
            boxes.append(
                (
                    round(x0 / scale, 1),
                    round(h_pt - bottom / scale, 1),
                    round(x1 / scale, 1),
                    round(h_pt - top / scale, 1),
                )
            )
        return lines, boxes

    read.engine = engine  # type: ignore[attr-defined]
    return read
