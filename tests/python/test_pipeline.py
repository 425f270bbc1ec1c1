"""Pipelines (single images and batches), I/O and info()."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import random_image, run_cli

import pixflow

TEXT = "median k=5 | gaussian sigma=2 border=wrap"


def test_pipeline_equals_the_ops_and_the_cli(cli, tmp_path) -> None:
    src = random_image(45, 38, 3, "u8", seed=21)
    p = pixflow.Pipeline(TEXT)
    assert p.ops == ["median", "gaussian"]
    got = p(src)
    steps = pixflow.gaussian(pixflow.median(src, k=5), sigma=2, border="wrap")
    assert np.array_equal(got, steps)
    assert np.array_equal(got, run_cli(cli, TEXT, src, tmp_path))


def test_pipeline_changing_format_and_out() -> None:
    src = random_image(30, 31, 3, "u8", seed=22)
    p = pixflow.Pipeline("gray | sobel dx=1 dy=0 | convert to=u8 abs=1")
    assert p.plan(src.shape, src.dtype) == ((30, 31), "uint8")
    out = np.full((30, 31), 7, np.uint8)
    assert p(src, out=out) is out
    want = pixflow.convert(pixflow.sobel(pixflow.gray(src), dx=1, dy=0), to="u8", abs=True)
    assert np.array_equal(out, want)


def test_batches() -> None:
    p = pixflow.Pipeline(TEXT)
    items = [random_image(20, 24, 3, "u8", seed=s) for s in range(5)]
    one_by_one = [p(x) for x in items]
    as_list = p(items)
    assert isinstance(as_list, list) and len(as_list) == 5
    assert all(np.array_equal(a, b) for a, b in zip(as_list, one_by_one))
    stacked = p(np.stack(items))
    assert stacked.shape == (5, 20, 24, 3)
    assert all(np.array_equal(stacked[i], one_by_one[i]) for i in range(5))
    gray = np.stack([x[:, :, 0] for x in items])  # N x H x W: batch=True says so
    got = p(gray, batch=True)
    assert got.shape == (5, 20, 24)
    assert all(np.array_equal(got[i], p(np.ascontiguousarray(gray[i]))) for i in range(5))


def test_image_files_round_trip(tmp_path) -> None:
    rgb = random_image(33, 47, 3, "u8", seed=23)
    pixflow.write_image(tmp_path / "a.png", rgb)
    back = pixflow.read_image(tmp_path / "a.png")
    assert back.dtype == np.uint8 and back.shape == (33, 47, 3)
    assert np.array_equal(back, rgb)
    g16 = random_image(10, 12, 1, "u16", seed=24)
    pixflow.write_image(str(tmp_path / "b.png"), g16)
    assert np.array_equal(pixflow.read_image(tmp_path / "b.png"), g16)
    f = random_image(9, 8, 3, "f32", seed=25)
    pixflow.write_image(tmp_path / "c.npy", f)
    assert np.array_equal(np.load(tmp_path / "c.npy"), f)
    pixflow.write_image(tmp_path / "d.jpg", rgb, quality=80)
    assert pixflow.read_image(tmp_path / "d.jpg").shape == (33, 47, 3)


def test_read_image_is_a_plain_writable_array(tmp_path) -> None:
    rgb = random_image(13, 17, 3, "u8", seed=26)
    np.save(tmp_path / "a.npy", rgb)
    back = pixflow.read_image(tmp_path / "a.npy")
    assert back.flags.c_contiguous and back.flags.writeable
    back[0, 0, 0] ^= 1  # owned by the array: writing is fine


def test_info() -> None:
    i = pixflow.info()
    assert i["version"] == pixflow.__version__
    assert "cpu" in i["backends"] and "ref" in i["backends"]
    assert i["ops"] == pixflow.ops and "median" in i["ops"]
    assert all({"location", "description"} <= d.keys() for d in i["devices"])


def test_write_image_compression_keeps_pixels_and_checks_its_range(tmp_path) -> None:
    img = (np.arange(32 * 24 * 3) % 251).astype(np.uint8).reshape(24, 32, 3)
    pixflow.write_image(tmp_path / "c0.png", img, compression=0)
    pixflow.write_image(tmp_path / "c9.png", img, compression=9)
    assert (tmp_path / "c0.png").stat().st_size > img.nbytes
    for name in ("c0.png", "c9.png"):
        assert np.array_equal(pixflow.read_image(tmp_path / name), img)
    with pytest.raises(pixflow.Error, match="compression"):
        pixflow.write_image(tmp_path / "bad.png", img, compression=10)
    assert not (tmp_path / "bad.png").exists()
