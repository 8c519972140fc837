"""Render PDF pages as scans: rasterise, skew, rotate, blur and add noise, recording the transform.

`scan_pages(pdf, pages, rng, heavy=...)` rasterises the chosen pages of a text PDF with pypdfium2,
moves each by a seeded affine transform (a small rotation about the page centre plus a shift:
what a sheet fed slightly askew looks like), blurs it and adds Gaussian noise with PIL and the
given `numpy.random.Generator`, and returns JPEG images with the transform as a 2x3 matrix in
PDF points (origin bottom-left): a point (x, y) of the clean page lands on (a x + b y + c,
d x + e y + f) of the scan. `move_box` applies it to a gold box (the bounding box of the moved
corners), so gold recorded on the clean page is still where the scan shows it.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass

import numpy as np

__all__ = ["DPI", "Scan", "move_box", "scan_pages"]

DPI = 200
Affine = tuple[float, float, float, float, float, float]


@dataclass(frozen=True, slots=True)
class Scan:
    page: int  # 1-based
    jpeg: bytes
    width: int  # pixels
    height: int
    affine: Affine  # clean page points -> scan points
    angle: float  # degrees, counter-clockwise
    blur: float
    noise: float

    def to_dict(self) -> dict[str, object]:
        return {
            "page": self.page,
            "affine": [round(v, 6) for v in self.affine],
            "angle": round(self.angle, 4),
            "blur": self.blur,
            "noise": self.noise,
            "dpi": DPI,
        }


def move_box(box: tuple[float, float, float, float], m: Affine) -> tuple[float, ...]:
    """The bounding box of `box`'s corners moved by the affine `m`."""
    a, b, c, d, e, f = m
    xs, ys = [], []
    for x in (box[0], box[2]):
        for y in (box[1], box[3]):
            xs.append(a * x + b * y + c)
            ys.append(d * x + e * y + f)
    return (min(xs), min(ys), max(xs), max(ys))


def _affine(angle_deg: float, shift: tuple[float, float], size: tuple[float, float]) -> Affine:
    """Rotation by `angle_deg` (counter-clockwise, y up) about the page centre, then `shift`."""
    t = math.radians(angle_deg)
    cx, cy = size[0] / 2, size[1] / 2
    cos, sin = math.cos(t), math.sin(t)
    return (
        cos,
        -sin,
        cx - cos * cx + sin * cy + shift[0],
        sin,
        cos,
        cy - sin * cx - cos * cy + shift[1],
    )


def scan_pages(
    pdf: bytes, pages: list[int], rng: np.random.Generator, *, heavy: bool = False
) -> list[Scan]:
    """Scans of the 1-based `pages` of `pdf` (light: under a degree and a little noise; heavy:
    up to two and a half degrees, more blur and noise)."""
    import pypdfium2
    from PIL import Image, ImageFilter

    doc = pypdfium2.PdfDocument(pdf)
    out: list[Scan] = []
    scale = DPI / 72
    try:
        for pno in pages:
            page = doc[pno - 1]
            w_pt, h_pt = page.get_size()
            img = page.render(scale=scale, grayscale=True).to_pil().convert("L")
            page.close()
            lim = 2.5 if heavy else 0.9
            angle = float(rng.uniform(-lim, lim))
            shift = (float(rng.uniform(-6, 6)), float(rng.uniform(-6, 6)))
            blur = 1.0 if heavy else 0.4
            noise = 14.0 if heavy else 6.0
            m = _affine(angle, shift, (w_pt, h_pt))
            # PIL maps each output pixel back to an input pixel: the inverse, in pixels.
            inv = np.linalg.inv(_pixel_matrix(m, scale, h_pt))
            moved = img.transform(
                img.size,
                Image.Transform.AFFINE,
                tuple(float(v) for v in inv[:2].reshape(-1)),
                resample=Image.Resampling.BICUBIC,
                fillcolor=255,
            )
            if blur:
                moved = moved.filter(ImageFilter.GaussianBlur(blur))
            arr = np.asarray(moved, dtype=np.float64)
            arr = arr + rng.normal(0.0, noise, size=arr.shape)
            noisy = Image.fromarray(np.clip(arr, 0, 255).astype(np.uint8), mode="L")
            buf = io.BytesIO()
            noisy.save(buf, format="JPEG", quality=80, optimize=False)
            out.append(Scan(pno, buf.getvalue(), noisy.width, noisy.height, m, angle, blur, noise))
    finally:
        doc.close()
    return out


def _pixel_matrix(m: Affine, s: float, h_pt: float) -> np.ndarray:
    """The points affine `m` as a 3x3 matrix on pixel coordinates (origin top-left, y down)."""
    to_pt = np.array([[1 / s, 0, 0], [0, -1 / s, h_pt], [0, 0, 1.0]])
    to_px = np.array([[s, 0, 0], [0, -s, s * h_pt], [0, 0, 1.0]])
    a, b, c, d, e, f = m
    pts = np.array([[a, b, c], [d, e, f], [0, 0, 1.0]])
    result: np.ndarray = to_px @ pts @ to_pt
    return result
