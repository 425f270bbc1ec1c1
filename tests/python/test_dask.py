"""Tiling with Dask: every window op, every border mode, tiled == whole image, bit for bit.

The recipe under test (docs/python.md, "Dask"): ``pixflow.halo`` is the overlap depth of
``dask.array.map_overlap`` and the boundary is ``"none"`` for every border mode but ``wrap``,
which takes ``"periodic"``. The chunks (37 x 53 over 150 x 170) are awkward on purpose: the last
block row is 2 pixels high, smaller than most halos, so Dask has to rechunk it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from conftest import random_image, require

import pixflow

da = require("dask.array")
import pixflow.dask  # noqa: E402

H, W = 150, 170
CHUNKS = (37, 53)
BORDERS = ["replicate", "reflect", "reflect101", "wrap", "constant"]
# dask's boundary for each pixflow border when the outer blocks are padded by dask itself
# (not the recommended recipe: see test_dask_padding_*).
DASK_PAD = {"replicate": "nearest", "reflect": "reflect", "wrap": "periodic"}

# (op, parameters, parameters for f32 where they differ). Every op whose output pixel reads a
# neighbourhood, with odd and even windows, iterations > 1 and each op's distinct parameters.
CASES: list[tuple[str, dict[str, Any], dict[str, Any] | None]] = [
    ("median", {"k": 5}, None),
    ("median", {"kw": 7, "kh": 3}, None),
    ("dilate", {"k": 3}, None),
    ("dilate", {"k": 3, "iterations": 3}, None),
    ("erode", {"kw": 4, "kh": 3}, None),
    ("erode", {"k": 5, "iterations": 2}, None),
    ("open", {"k": 5}, None),
    ("open", {"k": 3, "iterations": 2}, None),
    ("close", {"kw": 3, "kh": 5}, None),
    ("close", {"k": 3, "iterations": 2}, None),
    ("gradient", {"k": 5}, None),
    ("tophat", {"k": 5}, None),
    ("tophat", {"k": 3, "iterations": 2}, None),
    ("blackhat", {"k": 5}, None),
    ("blackhat", {"kw": 4, "kh": 3, "iterations": 2}, None),
    ("box", {"k": 5}, None),
    ("box", {"kw": 4, "kh": 7}, None),
    ("box", {"k": 3, "normalize": False}, None),
    ("gaussian", {"sigma": 2.0}, None),
    ("gaussian", {"sigma": 1.5, "sigma_y": 3.0}, None),
    ("gaussian", {"k": 5, "sigma": 0.0}, None),
    ("sobel", {"dx": 1, "dy": 0}, None),
    ("sobel", {"dx": 1, "dy": 1, "k": 5}, None),
    ("sobel", {"dx": 2, "dy": 0, "k": 7, "to": "f32"}, None),
    ("sobel", {"dx": 0, "dy": 2, "k": 1}, None),
    ("scharr", {"dx": 0, "dy": 1}, None),
    ("filter2d", {"kernel": [[1, 2, 1], [2, 4, 2], [1, 2, 1]], "delta": 3.0}, None),
    ("filter2d", {"kernel": [[1, -2, 3, 4], [0, 1, 0, -1]]}, None),
    ("epsilon", {"r": 2, "t": 20.0}, {"r": 2, "t": 0.08}),
    ("bilateral", {"d": 5, "sigma_color": 30.0, "sigma_space": 5.0},
     {"d": 5, "sigma_color": 0.3, "sigma_space": 5.0}),
    ("bilateral", {"d": 0, "sigma_space": 2.0, "sigma_color": 50.0},
     {"d": 0, "sigma_space": 2.0, "sigma_color": 0.2}),
]
WINDOW_OPS = sorted({c[0] for c in CASES})
CONSTANT = {"u8": 77, "f32": 0.25}  # a border value that is not neutral for min / max


def _id(case: tuple[str, dict[str, Any], dict[str, Any] | None]) -> str:
    op, p, _ = case
    text = ",".join(f"{k}={'x'.join(map(str, np.shape(v))) if k == 'kernel' else v}"
                    for k, v in p.items())
    return f"{op}[{text}]"


def _params(case: tuple[str, dict[str, Any], dict[str, Any] | None], depth: str,
            border: str) -> dict[str, Any]:
    op, p, pf = case
    params = dict(pf if depth == "f32" and pf is not None else p)
    params["border"] = border
    if border == "constant":
        params["value"] = CONSTANT[depth]
    return params


def _image(op: str, depth: str, channels: int, seed: int) -> np.ndarray:
    return random_image(H, W, channels, depth, seed)


def _tiled(img: np.ndarray, op: str, params: dict[str, Any], boundary: Any,
           chunks: tuple[int, int] = CHUNKS) -> np.ndarray:
    """The documented recipe, spelled out: halo -> depth, map_overlap, compute."""
    channels = img.shape[2] if img.ndim == 3 else 1
    rows, cols = pixflow.halo(op, dtype=img.dtype, channels=channels, **params)
    depth = {0: rows, 1: cols} if img.ndim == 2 else {0: rows, 1: cols, 2: 0}
    arr = da.from_array(img, chunks=chunks if img.ndim == 2 else chunks + (-1,))
    fn = getattr(pixflow, op)
    want = fn(img[:1, :1], **params)  # the result's dtype
    out = arr.map_overlap(lambda b: fn(b, **params), depth=depth, boundary=boundary,
                          dtype=want.dtype, meta=np.empty((0,) * img.ndim, want.dtype))
    return out.compute(scheduler="synchronous")


def _diff(got: np.ndarray, want: np.ndarray) -> str:
    bad = np.argwhere(got != want)
    return f"{len(bad)} pixels differ, first at {bad[:3].tolist()}"


# ---- the recipe: boundary "none" (wrap: "periodic") is exact for every op and border -------


@pytest.mark.parametrize("channels", [1, 3])
@pytest.mark.parametrize("depth", ["u8", "f32"])
@pytest.mark.parametrize("border", BORDERS)
@pytest.mark.parametrize("case", CASES, ids=_id)
def test_tiled_equals_whole(case, border: str, depth: str, channels: int) -> None:
    op = case[0]
    params = _params(case, depth, border)
    img = _image(op, depth, channels, seed=len(op) + channels)
    whole = getattr(pixflow, op)(img, **params)
    got = _tiled(img, op, params, pixflow.dask.boundary(op, border))
    assert got.dtype == whole.dtype and got.shape == whole.shape
    assert np.array_equal(got, whole), f"{op} {params} {depth} x{channels}: {_diff(got, whole)}"


@pytest.mark.parametrize("border", ["reflect101", "wrap", "constant"])
@pytest.mark.parametrize("case", CASES, ids=_id)
def test_map_op_equals_whole(case, border: str) -> None:
    """The helper makes the same call: 3 channels (chunked along C too), u8."""
    op = case[0]
    params = _params(case, "u8", border)
    img = _image(op, "u8", 3, seed=7)
    arr = da.from_array(img, chunks=(37, 53, 2))
    out = pixflow.dask.map_op(arr, op, **params)
    got = out.compute(scheduler="synchronous")
    whole = getattr(pixflow, op)(img, **params)
    assert out.shape == got.shape == whole.shape and out.dtype == whole.dtype
    assert np.array_equal(got, whole), f"{op} {params}: {_diff(got, whole)}"


def test_map_op_threaded_scheduler() -> None:
    """Blocks run concurrently (pixflow releases the GIL): still the whole image's result."""
    img = random_image(1000, 900, 3, "u8", seed=3)
    arr = da.from_array(img, chunks=(129, 211, 3))
    got = pixflow.dask.map_op(arr, "median", k=7).compute(scheduler="threads")
    assert np.array_equal(got, pixflow.median(img, k=7))


# ---- blocks smaller than the halo -------------------------------------------------------


@pytest.mark.parametrize("chunks", [(1, 1), (3, 4), (7, 7), (37, 53)])
@pytest.mark.parametrize("border", BORDERS)
def test_blocks_smaller_than_halo(chunks: tuple[int, int], border: str) -> None:
    """A halo of 7 over chunks of 1..7 pixels: Dask merges the small chunks (allow_rechunk)."""
    img = random_image(60, 71, 1, "u8", seed=11)  # smaller: 1 x 1 chunks are 4260 tasks
    params = {"k": 15, "border": border}
    got = _tiled(img, "median", params, pixflow.dask.boundary("median", border), chunks)
    assert np.array_equal(got, pixflow.median(img, **params))


def test_blocks_smaller_than_halo_without_rechunk_raise() -> None:
    """With allow_rechunk=False Dask refuses rather than trimming wrong."""
    arr = da.from_array(random_image(H, W, 1, "u8"), chunks=CHUNKS)  # last row block: 2
    with pytest.raises(ValueError, match="depth is larger than smallest chunk"):
        arr.map_overlap(lambda b: pixflow.median(b, k=15), depth=7, boundary="none",
                        allow_rechunk=False, dtype=np.uint8)


@pytest.mark.parametrize("border", BORDERS)
def test_map_op_image_smaller_than_halo(border: str) -> None:
    """An axis shorter than the halo (Dask would raise) is merged into one block."""
    img = random_image(6, 40, 3, "f32", seed=5)
    arr = da.from_array(img, chunks=(4, 9, 3))
    params = {"k": 15, "border": border}
    out = pixflow.dask.map_op(arr, "dilate", **params)
    got = out.compute(scheduler="synchronous")
    assert np.array_equal(got, pixflow.dilate(img, **params))
    with pytest.raises(ValueError):  # what the helper avoids
        arr.map_overlap(lambda b: pixflow.dilate(b, **params), depth={0: 7, 1: 7, 2: 0},
                        boundary="none", dtype=np.float32).compute(scheduler="synchronous")


# ---- dask padding the outer blocks itself: which border modes map, and where it breaks --------

COMPOSITES = ("open", "close", "tophat", "blackhat")

def _symmetric(case: tuple[str, dict[str, Any], dict[str, Any] | None]) -> bool:
    p = case[1]
    return all(p.get(k, p.get("k", 3)) % 2 == 1 for k in ("kw", "kh"))


PADDING_CASES = [pytest.param(c, b, id=f"{_id(c)}-{b}") for c in CASES for b in BORDERS
                 if b != "reflect101" and (c[0] not in COMPOSITES or b == "wrap"
                                           or (b == "reflect" and _symmetric(c)))]


@pytest.mark.parametrize("depth", ["u8", "f32"])
@pytest.mark.parametrize("case, border", PADDING_CASES)
def test_dask_padding(case, border: str, depth: str) -> None:
    """replicate = 'nearest', reflect = 'reflect', wrap = 'periodic', constant v = v: exact
    for every op that reads the source once (the pad then is the border rule itself); for the
    two-pass ops (open, ...) only the periodic pad and the mirror pad of an odd window: their
    erode / dilate of the pad is again the periodic / mirror extension of the intermediate."""
    op = case[0]
    params = _params(case, depth, border)
    img = _image(op, depth, 1, seed=2)
    pad = DASK_PAD.get(border, params.get("value"))
    got = _tiled(img, op, params, pad)
    whole = getattr(pixflow, op)(img, **params)
    assert np.array_equal(got, whole), f"{op} {params} {depth}: {_diff(got, whole)}"


@pytest.mark.parametrize("border, window", [("replicate", {"k": 5}), ("constant", {"k": 5}),
                                            ("reflect", {"kw": 4, "kh": 3})])
@pytest.mark.parametrize("op", ["open", "close", "tophat", "blackhat"])
def test_dask_padding_differs_for_composites(op: str, border: str, window: dict) -> None:
    """open = dilate(erode(src)) applies the border to the intermediate erode result too; a
    padded source gives erode(padding) there instead (replicate: min over the edge pixels'
    neighbours, constant: min(v, ...); reflect with an even window, whose anchor is off
    centre: the erode of a mirror is not a mirror). So these pads are not exact for the
    two-pass ops, and the recipe lets pixflow handle the edges ('none')."""
    params = {**window, "border": border}
    if border == "constant":
        params["value"] = 77
    img = random_image(H, W, 1, "u8", seed=4)
    whole = getattr(pixflow, op)(img, **params)
    padded = _tiled(img, op, params, DASK_PAD.get(border, 77))
    assert not np.array_equal(padded, whole)
    edge = np.ones(whole.shape, bool)
    edge[5:-5, 5:-5] = False  # the differences are all at the image's edges
    assert np.array_equal(padded[~edge], whole[~edge])
    assert np.array_equal(_tiled(img, op, params, "none"), whole)


@pytest.mark.parametrize("pad", ["nearest", "reflect", "periodic", 0, "none"])
def test_reflect101_has_no_dask_padding(pad: Any) -> None:
    """No dask boundary is reflect101 (dcb|abcd): 'reflect' is pixflow's reflect (cba|abcd).
    Only 'none' (pixflow's own rule at the edges) is exact."""
    img = random_image(H, W, 1, "u8", seed=6)
    params = {"k": 5, "border": "reflect101"}
    got = _tiled(img, "median", params, pad)
    assert np.array_equal(got, pixflow.median(img, **params)) == (pad == "none")


def test_wrap_needs_periodic() -> None:
    """With 'none' an edge block has no pixels of the opposite edge: wrap is not exact."""
    img = random_image(H, W, 1, "u8", seed=8)
    params = {"k": 5, "border": "wrap"}
    whole = pixflow.median(img, **params)
    assert not np.array_equal(_tiled(img, "median", params, "none"), whole)
    assert np.array_equal(_tiled(img, "median", params, "periodic"), whole)


# ---- ops that cannot be tiled ------------------------------------------------------------


@pytest.mark.parametrize("op, params", [
    ("gaussian_iir", {"sigma": 2.0}),
    ("transpose", {}),
    ("flip", {"mode": "v"}),
    ("rotate", {"angle": 180}),
    ("crop", {"x": 1, "y": 1, "w": 2, "h": 2}),
    ("pad", {"top": 1, "border": "wrap"}),
    ("remap", {"map_x": np.zeros((4, 4), np.float32), "map_y": np.zeros((4, 4), np.float32)}),
])
def test_halo_raises_for_whole_image_ops(op: str, params: dict[str, Any]) -> None:
    with pytest.raises(pixflow.InvalidArgumentError, match=f"^{op}: .*no finite halo"):
        pixflow.halo(op, **params)
    arr = da.zeros((64, 64), dtype=np.float32, chunks=32)
    with pytest.raises(pixflow.InvalidArgumentError, match=f"^{op}: "):
        pixflow.dask.map_op(arr, op, **params)


def test_gaussian_iir_reach_is_unbounded() -> None:
    """The recursion carries an impulse until f32 underflows: 70+ sigma, not a few sigma; so a
    tiled gaussian_iir with a generous 10-sigma halo is not bit-identical (wrap: any pixel)."""
    sigma = 2.0
    x = np.zeros((401, 401), np.float32)
    x[200, 200] = 1.0
    y = pixflow.gaussian_iir(x, sigma=sigma, border="replicate")
    reach = np.abs(np.argwhere(y != 0) - 200).max()
    assert reach > 70 * sigma
    img = random_image(H, W, 1, "f32", seed=9)
    fn = lambda b: pixflow.gaussian_iir(b, sigma=sigma, border="replicate")  # noqa: E731
    tiled = da.from_array(img, chunks=CHUNKS).map_overlap(
        fn, depth=int(10 * sigma), boundary="none", dtype=np.float32)
    assert not np.array_equal(tiled.compute(scheduler="synchronous"), fn(img))


def test_halo_values() -> None:
    """The halo is each side's reach: window // 2, morphology's passes x iterations."""
    assert pixflow.halo("median", k=5) == (2, 2)
    assert pixflow.halo("median", kw=7, kh=3) == (1, 3)
    assert pixflow.halo("open", k=3, iterations=2) == (4, 4)
    assert pixflow.halo("gaussian", sigma=2.0, dtype=np.uint8) == (6, 6)
    assert pixflow.halo("gaussian", sigma=2.0, dtype=np.float32) == (8, 8)
    assert pixflow.halo("sobel", dx=1, dy=0, k=1) == (1, 1)
    assert pixflow.halo("gray", from_="rgb", channels=3) == (0, 0)


# ---- the helper on ops without a halo and on bad input -------------------------------------


@pytest.mark.parametrize("op, params, channels", [
    ("gray", {}, 3),
    ("threshold", {"t": 100.0}, 3),
    ("convert", {"to": "f32", "scale": 0.5}, 1),
    ("add", {"value": 9.0}, 4),
])
def test_map_op_pointwise(op: str, params: dict[str, Any], channels: int) -> None:
    img = random_image(H, W, channels, "u8", seed=1)
    arr = da.from_array(img, chunks=CHUNKS + (2,) if channels > 1 else CHUNKS)
    got = pixflow.dask.map_op(arr, op, **params).compute(scheduler="synchronous")
    want = getattr(pixflow, op)(img, **params)
    assert got.dtype == want.dtype and np.array_equal(got, want)


def test_map_op_rejects() -> None:
    img = random_image(32, 32, 1, "u8")
    with pytest.raises(pixflow.InvalidArgumentError, match="dask.array.Array"):
        pixflow.dask.map_op(img, "median", k=3)
    with pytest.raises(pixflow.InvalidArgumentError, match="unknown op"):
        pixflow.dask.map_op(da.from_array(img), "mediann")
    with pytest.raises(pixflow.InvalidArgumentError, match="image parameters"):
        pixflow.dask.map_op(da.from_array(img), "add", with_=img)
    with pytest.raises(pixflow.InvalidArgumentError, match="^median: k must be odd"):
        pixflow.dask.map_op(da.from_array(img), "median", k=4)
