"""Bad input from Python: a clear exception naming the op and the argument, never a crash,
with the CLI's message for bad parameters."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest
from conftest import random_image

import pixflow


def cli_message(cli: str, stage: str, tmp_path) -> str:
    src = tmp_path / "in.npy"
    np.save(src, random_image(8, 8, 1, "u8"))
    r = subprocess.run([cli, "run", stage, str(src), "-o", str(tmp_path / "o.npy")],
                       capture_output=True, text=True)
    assert r.returncode == 2, r.stderr
    assert not (tmp_path / "o.npy").exists()
    return r.stderr


@pytest.mark.parametrize("kwargs,stage,fragment", [
    ({"k": 4}, "median k=4", "median: k must be odd and in [1, 255] (got 4)"),
    ({"k": 301}, "median k=301", "median: k must be an integer in [1, 255] (got '301')"),
    ({"border": "mirror"}, "median border=mirror", "median: border must be one of"),
])
def test_bad_parameters_are_value_errors_with_the_cli_message(kwargs, stage, fragment, cli,
                                                              tmp_path) -> None:
    a = random_image(8, 8, 1, "u8")
    with pytest.raises(ValueError) as e:
        pixflow.median(a, **kwargs)
    assert isinstance(e.value, pixflow.InvalidArgumentError)
    assert isinstance(e.value, pixflow.Error)
    assert fragment in str(e.value)
    assert str(e.value) in cli_message(cli, stage, tmp_path)


def test_cross_field_rule() -> None:
    a = random_image(8, 8, 1, "u8")
    with pytest.raises(pixflow.InvalidArgumentError, match="add: .*with.*value"):
        pixflow.add(a)


def test_unknown_parameter_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="sigma"):
        pixflow.median(random_image(8, 8, 1, "u8"), sigma=2)


def test_wrong_python_types() -> None:
    a = random_image(8, 8, 1, "u8")
    with pytest.raises(pixflow.InvalidArgumentError, match="median: k must be an integer"):
        pixflow.median(a, k=2.5)
    with pytest.raises(pixflow.InvalidArgumentError, match="median: k must be an integer"):
        pixflow.median(a, k=True)
    with pytest.raises(pixflow.InvalidArgumentError, match="gaussian: sigma must be a number"):
        pixflow.gaussian(a, sigma="2")


def test_unsupported_dtype_names_src() -> None:
    with pytest.raises(pixflow.UnsupportedError, match="median: src has dtype float64"):
        pixflow.median(np.zeros((8, 8)))
    with pytest.raises(pixflow.UnsupportedError, match="median: .*s16"):
        pixflow.median(np.zeros((8, 8), np.int16))


def test_shapes() -> None:
    with pytest.raises(pixflow.InvalidArgumentError, match="median: src must be an H x W"):
        pixflow.median(np.zeros((2, 8, 8, 3), np.uint8))
    with pytest.raises(pixflow.InvalidArgumentError, match="median: src must have 1 to 4 chan"):
        pixflow.median(np.zeros((8, 8, 5), np.uint8))
    with pytest.raises(pixflow.InvalidArgumentError, match="median: src is empty"):
        pixflow.median(np.zeros((0, 8), np.uint8))
    with pytest.raises(pixflow.UnsupportedError, match="gray: .*channels"):
        pixflow.gray(np.zeros((8, 8), np.uint8))


def test_strided_views_that_are_not_rows_of_pixels() -> None:
    a = random_image(16, 16, 3, "u8")
    with pytest.raises(pixflow.InvalidArgumentError, match="median: src must have its channels"):
        pixflow.median(a[:, ::2])
    with pytest.raises(pixflow.InvalidArgumentError, match="median: src must have its channels"):
        pixflow.median(a[::-1])
    with pytest.raises(pixflow.InvalidArgumentError, match="median: src must have its channels"):
        pixflow.median(np.asfortranarray(a[:, :, 0]))


def test_bad_out() -> None:
    a = random_image(8, 9, 1, "u8")
    ro = np.zeros((8, 9), np.uint8)
    ro.flags.writeable = False
    with pytest.raises(pixflow.InvalidArgumentError, match="median: out is read-only"):
        pixflow.median(a, out=ro)
    with pytest.raises(pixflow.InvalidArgumentError, match=r"median: out must be a uint8 array "
                                                          r"of shape \(8, 9\)"):
        pixflow.median(a, out=np.zeros((9, 8), np.uint8))
    with pytest.raises(pixflow.InvalidArgumentError, match="median: out must be a uint8"):
        pixflow.median(a, out=np.zeros((8, 9), np.float32))
    with pytest.raises(pixflow.InvalidArgumentError, match="median: src must be an array"):
        pixflow.median("not an image")


def test_overlapping_out_is_refused() -> None:
    a = random_image(8, 9, 1, "u8")
    with pytest.raises(pixflow.InvalidArgumentError, match="median"):
        pixflow.median(a, out=a)


def test_backend_and_stream_arguments() -> None:
    a = random_image(8, 9, 1, "u8")
    with pytest.raises(pixflow.InvalidArgumentError, match="median: backend must be"):
        pixflow.median(a, backend="metal")
    with pytest.raises(pixflow.InvalidArgumentError, match="median: stream is for CUDA arrays"):
        pixflow.median(a, stream=12345)
    with pytest.raises(pixflow.InvalidArgumentError, match="stream must be"):
        pixflow.median(a, stream="fast")


def test_pipeline_errors() -> None:
    with pytest.raises(pixflow.InvalidArgumentError, match="pipeline: unknown op 'medain'"):
        pixflow.Pipeline("medain k=3")
    with pytest.raises(pixflow.InvalidArgumentError, match="median: k must be odd"):
        pixflow.Pipeline("median k=4 | box k=3")
    p = pixflow.Pipeline("gray | median k=3")
    with pytest.raises(pixflow.UnsupportedError, match="gray"):
        p(np.zeros((8, 8), np.uint8))


def test_halo_errors() -> None:
    with pytest.raises(pixflow.InvalidArgumentError, match="unknown op"):
        pixflow.halo("nope")
    with pytest.raises(pixflow.InvalidArgumentError, match="median: unknown parameter 'sigma'"):
        pixflow.halo("median", sigma=2)


def test_io_errors_leave_nothing(tmp_path) -> None:
    with pytest.raises(pixflow.IoError) as e:
        pixflow.read_image(tmp_path / "missing.png")
    assert isinstance(e.value, OSError)
    bad = tmp_path / "bad.png"
    bad.write_bytes(b"\x89PNG\r\n\x1a\nnot really")
    with pytest.raises(pixflow.IoError, match="bad.png"):
        pixflow.read_image(bad)
    out = tmp_path / "f.png"
    with pytest.raises(pixflow.Error, match="png"):
        pixflow.write_image(out, np.zeros((4, 4), np.float32))
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.png"]


def test_cached_bindings_never_stand_for_a_call_with_an_image() -> None:
    """add(a, value=3) binds once and is kept; add(a, b, value=3) must still be refused."""
    a = random_image(8, 8, 1, "u8")
    assert int(pixflow.add(a, value=3).min()) >= 3 or a.min() > 252
    with pytest.raises(pixflow.InvalidArgumentError, match="add: exactly one of with"):
        pixflow.add(a, a, value=3)
    assert np.array_equal(pixflow.add(a, a), pixflow.add(a, with_=a))
