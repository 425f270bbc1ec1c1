"""resize on u8 against OpenCV 4.x bit for bit (docs/ops/resize.md).

pixflow.resize (cpu backend) against cv2.resize with the same dsize: nearest =
INTER_NEAREST_EXACT, linear = INTER_LINEAR_EXACT, area = INTER_AREA; 1, 3 and 4 channels;
shrinking and enlarging by integer and non-integer factors, 1-pixel sides, one axis kept.
Skipped when cv2 is not installed (python/requirements-test.txt lists it).
"""

from __future__ import annotations

import numpy as np
import pytest

import pixflow

cv2 = pytest.importorskip("cv2")

INTERP = {
    "nearest": cv2.INTER_NEAREST_EXACT,
    "linear": cv2.INTER_LINEAR_EXACT,
    "area": cv2.INTER_AREA,
}

# (source w, h) -> (destination w, h): down, up, integer and non-integer factors, one axis
# kept, 1-pixel sides, mixed (one axis up, the other down).
PAIRS = [
    ((17, 13), (17, 13)),
    ((16, 12), (8, 6)),
    ((18, 12), (6, 4)),
    ((17, 13), (8, 6)),
    ((40, 30), (27, 20)),
    ((33, 65), (40, 30)),
    ((64, 48), (17, 13)),
    ((64, 48), (100, 37)),
    ((7, 5), (14, 10)),
    ((7, 5), (21, 16)),
    ((13, 9), (32, 31)),
    ((1, 1), (5, 3)),
    ((5, 3), (1, 1)),
    ((1, 9), (4, 4)),
    ((9, 1), (3, 7)),
    ((30, 20), (30, 7)),
    ((30, 20), (61, 20)),
    ((25, 40), (50, 13)),
    ((101, 67), (64, 43)),
]


@pytest.mark.parametrize("interp", sorted(INTERP))
@pytest.mark.parametrize("channels", [1, 3, 4])
def test_resize_u8_equals_opencv(interp: str, channels: int) -> None:
    if interp == "nearest" and int(cv2.__version__.split(".")[0]) >= 5:
        pytest.skip("OpenCV 5 changed INTER_NEAREST_EXACT (pixflow follows 4.x)")
    rng = np.random.default_rng(1300 + channels)
    for (sw, sh), (dw, dh) in PAIRS:
        shape = (sh, sw) if channels == 1 else (sh, sw, channels)
        src = rng.integers(0, 256, shape, dtype=np.uint8)
        want = cv2.resize(src, (dw, dh), interpolation=INTERP[interp])
        got = np.asarray(pixflow.resize(src, w=dw, h=dh, interp=interp, backend="cpu"))
        got = got.reshape(want.shape)
        bad = np.argwhere(got != want)
        assert bad.size == 0, (
            f"{interp} {channels}ch {sw}x{sh}->{dw}x{dh}: {len(bad)} samples differ, "
            f"first at {bad[0].tolist()}: got {got[tuple(bad[0])]}, cv2 {want[tuple(bad[0])]}"
        )


@pytest.mark.parametrize("dtype", [np.uint16, np.int16])
def test_resize_linear_16bit_equals_opencv(dtype) -> None:
    """INTER_LINEAR_EXACT takes 16-bit samples too (Q16 weights): pixflow's rule is the same."""
    rng = np.random.default_rng(77)
    info = np.iinfo(dtype)
    for (sw, sh), (dw, dh) in PAIRS:
        src = rng.integers(info.min, info.max + 1, (sh, sw, 3), dtype=dtype)
        want = cv2.resize(src, (dw, dh), interpolation=cv2.INTER_LINEAR_EXACT)
        got = np.asarray(pixflow.resize(src, w=dw, h=dh, interp="linear", backend="cpu"))
        assert np.array_equal(got.reshape(want.shape), want), f"{sw}x{sh}->{dw}x{dh}"
