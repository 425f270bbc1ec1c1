"""Every op of the schema through the Python package, against the C++ library.

The package is the C++ library, not a second implementation: each op's result on the cpu
backend must equal the reference backend bit for bit (every example parameter set of the
schema, every depth the op takes, 1 and 3 channels, awkward sizes, ROI views), and equal the
CLI's result for the same stage text.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest
from conftest import random_image, run_cli

import pixflow

SCHEMA = {o["name"]: o for o in pixflow._SCHEMA}


def typed(op: str, text: str, src: np.ndarray) -> dict:
    """An example's KEY=VALUE text as Python keyword arguments of the op's function."""
    params = {p["name"]: p for p in SCHEMA[op]["params"]}
    kwargs = {}
    for word in text.split():
        key, value = word.split("=", 1)
        kind = params[key]["kind"]
        if kind == "integer":
            v = int(value)
        elif kind == "number":
            v = float(value)
        elif kind == "boolean":
            v = bool(int(value))
        elif kind == "image":
            v = random_image(*src.shape[:2], src.shape[2] if src.ndim == 3 else 1,
                             DEPTH[src.dtype.name], seed=7)
        else:
            v = value
        kwargs[pixflow._py_name(key)] = v
    if op == "remap":  # maps: f32 source coordinates a little beyond the edges
        rng = np.random.default_rng(3)
        h, w = src.shape[:2]
        kwargs["map_x"] = rng.uniform(-2, w + 2, size=(h - 3, w + 5)).astype(np.float32)
        kwargs["map_y"] = rng.uniform(-2, h + 2, size=(h - 3, w + 5)).astype(np.float32)
    return kwargs


DEPTH = {"uint8": "u8", "uint16": "u16", "int16": "s16", "int32": "s32", "float32": "f32"}

CASES = [
    pytest.param(o["name"], ex, d, c, id=f"{o['name']}-{ex or 'none'}-{d}x{c}")
    for o in pixflow._SCHEMA
    for ex in o["examples"]
    for d in o["depths"]
    for c in (1, 3)
    if c in o["channels"]
]


@pytest.mark.parametrize("op,example,depth,channels", CASES)
def test_cpu_equals_reference(op: str, example: str, depth: str, channels: int) -> None:
    src = random_image(23, 41, channels, depth, seed=zlib.crc32(f"{op} {example}".encode()))
    kwargs = typed(op, example, src)
    fn = getattr(pixflow, op)
    want = fn(src, **kwargs, backend="ref")
    # Poisoned output: every pixel must be written.
    out = np.full_like(want, np.nan if want.dtype == np.float32 else 0xA5)
    got = fn(src, **kwargs, backend="cpu", out=out)
    assert got is out
    assert np.array_equal(got, want)
    # And allocated by the package, in the expected layout.
    assert np.array_equal(fn(src, **kwargs), want)


@pytest.mark.parametrize("op", [o["name"] for o in pixflow._SCHEMA if o["name"] != "remap"])
def test_equals_cli(op: str, tmp_path) -> None:
    """The first example of every op, u8 (or the op's first depth), 3 channels where taken."""
    o = SCHEMA[op]
    example = o["examples"][0]
    depth = "u8" if "u8" in o["depths"] else o["depths"][0]
    channels = 3 if 3 in o["channels"] else o["channels"][0]
    src = random_image(29, 37, channels, depth, seed=11)
    kwargs = typed(op, example, src)
    stage = f"{op} {example}".strip()
    if "with" in kwargs or "with_" in kwargs:
        np.save(tmp_path / "with.npy", kwargs["with_"])
        stage = stage.replace("with=like_src", f"with={tmp_path / 'with.npy'}")
    got = getattr(pixflow, op)(src, **kwargs)
    want = run_cli(cli_path(), stage, src, tmp_path)
    assert np.array_equal(got.reshape(want.shape), want)


def cli_path() -> str:
    import os
    import shutil

    exe = os.environ.get("PIXFLOW_CLI") or shutil.which("pixflow")
    assert exe, "set PIXFLOW_CLI"
    return exe


def test_roi_views_are_read_in_place() -> None:
    """A slice of rows and columns is a view with a row stride: no copy, same result."""
    big = random_image(60, 70, 3, "u8", seed=5)
    roi = big[7:50, 3:61]
    assert not roi.flags.c_contiguous
    got = pixflow.median(roi, k=5, border="reflect")
    want = pixflow.median(np.ascontiguousarray(roi), k=5, border="reflect")
    assert np.array_equal(got, want)


def test_out_is_written_and_returned() -> None:
    src = random_image(31, 33, 1, "f32", seed=2)
    out = np.full((31, 33), np.nan, np.float32)
    res = pixflow.gaussian(src, sigma=1.5, out=out)
    assert res is out
    assert np.array_equal(out, pixflow.gaussian(src, sigma=1.5, backend="ref"))


def test_out_may_be_a_view_of_a_larger_array() -> None:
    src = random_image(20, 30, 3, "u8", seed=4)
    canvas = np.zeros((40, 50, 3), np.uint8)
    pixflow.dilate(src, k=3, out=canvas[5:25, 10:40])
    assert np.array_equal(canvas[5:25, 10:40], pixflow.dilate(src, k=3))
    assert not canvas[:5].any() and not canvas[25:].any()


def test_layouts() -> None:
    """H x W in, H x W out; H x W x 1 keeps its axis; gray of H x W x 3 is H x W (as cv2)."""
    a = random_image(17, 19, 1, "u8")
    assert pixflow.box(a, k=3).shape == (17, 19)
    assert pixflow.box(a[:, :, None], k=3).shape == (17, 19, 1)
    rgb = random_image(17, 19, 3, "u8")
    assert pixflow.gray(rgb).shape == (17, 19)
    assert pixflow.transpose(rgb).shape == (19, 17, 3)
    assert pixflow.sobel(a, dx=1, dy=0).dtype == np.int16
    assert pixflow.sobel(a, dx=1, dy=0, to="f32").dtype == np.float32
    assert pixflow.convert(a, to=np.float32, scale=1 / 255).dtype == np.float32


def test_keyword_named_parameters() -> None:
    """`with` and `from` are Python keywords: with_ and from_ (or positional for images)."""
    a = random_image(9, 11, 3, "u8", seed=1)
    b = random_image(9, 11, 3, "u8", seed=2)
    assert np.array_equal(pixflow.add(a, b), pixflow.add(a, with_=b))
    want = np.minimum(a.astype(np.int32) + b, 255).astype(np.uint8)
    assert np.array_equal(pixflow.add(a, b), want)
    assert np.array_equal(pixflow.gray(a, from_="bgr"), pixflow.gray(a[:, :, ::-1].copy()))


def test_filter2d_kernel_as_array() -> None:
    a = random_image(21, 22, 1, "f32", seed=8)
    k = np.array([[0, -1, 0], [-1, 5, -1], [0, -1, 0]], np.float32)
    assert np.array_equal(pixflow.filter2d(a, kernel=k),
                          pixflow.filter2d(a, kernel="0,-1,0;-1,5,-1;0,-1,0"))


def test_read_only_source_is_fine() -> None:
    a = random_image(12, 13, 1, "u16", seed=9)
    a.flags.writeable = False
    assert np.array_equal(pixflow.median(a), pixflow.median(a.copy()))


def test_threads_give_the_same_result() -> None:
    """Calls from several Python threads at once (the GIL is released while an op runs)."""
    from concurrent.futures import ThreadPoolExecutor

    srcs = [random_image(64, 80, 3, "u8", seed=s) for s in range(8)]
    want = [pixflow.bilateral(s, d=5, backend="ref") for s in srcs]
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda s: pixflow.bilateral(s, d=5), srcs))
    assert all(np.array_equal(g, w) for g, w in zip(got, want))


def test_descriptor_tuples() -> None:
    """The native side also takes (data_ptr, shape, element strides, depth, device) tuples
    (what the package passes for torch tensors): same result as the array itself, ROIs too."""
    big = random_image(40, 50, 3, "u16", seed=12)
    roi = big[5:35, 7:47]
    bound = pixflow._bind("median", {"k": 3}, {})

    def desc(a: np.ndarray, in_bytes: bool = False):
        strides = a.strides if in_bytes else tuple(s // a.itemsize for s in a.strides)
        return (a.ctypes.data, a.shape, strides, {"uint16": "u16", "uint8": "u8"}[a.dtype.name],
                -1, in_bytes)

    assert bound.result(desc(roi)) == ((30, 40, 3), "uint16")
    out = np.zeros((30, 40, 3), np.uint16)
    bound.run(desc(roi), desc(out), "", 0, 0)
    assert np.array_equal(out, pixflow.median(roi, k=3))
    out2 = np.zeros_like(out)
    bound.run(desc(roi, True), desc(out2, True), "", 0, 0)  # byte strides (CuPy's)
    assert np.array_equal(out2, out)
    with pytest.raises(pixflow.InvalidArgumentError, match="median: src must have its channels"):
        bad = (roi.ctypes.data, roi.shape, (roi.strides[0] + 1,) + roi.strides[1:], "u16", -1,
               True)  # a row stride of an odd byte count: no whole u16 samples
        bound.run(bad, desc(out2, True), "", 0, 0)
    with pytest.raises(pixflow.InvalidArgumentError, match="median: out must be a uint16"):
        bound.run(desc(roi), desc(np.zeros((30, 40), np.uint16)), "", 0, 0)


def test_convert_scale_auto() -> None:
    """scale="auto" (a word the number parameter also takes) scales by the depths' ranges."""
    u16 = np.array([[0, 257 * 100, 65535, 128]], np.uint16)
    assert pixflow.convert(u16, to="u8", scale="auto").tolist() == [[0, 100, 255, 0]]
    u8 = np.array([[0, 51, 255]], np.uint8)
    assert np.array_equal(pixflow.convert(u8, to="f32", scale="auto"),
                          pixflow.convert(u8, to="f32", scale=1 / 255))
    with pytest.raises(pixflow.InvalidArgumentError, match="scale=auto is defined between"):
        pixflow.convert(u16.astype(np.int16), to="u8", scale="auto")
    with pytest.raises(pixflow.InvalidArgumentError, match="scale must be a number"):
        pixflow.convert(u8, to="u8", scale="half")
