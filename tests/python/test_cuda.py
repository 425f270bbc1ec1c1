"""CuPy and PyTorch arrays on the CUDA backend (run by scripts/gpu-check.sh on the GPU machine).

Skipped, saying why, where pixflow was built without CUDA, no GPU is present or neither CuPy
nor PyTorch is installed (the CI host has none of them).
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest
from conftest import random_image, require
from test_ops import CASES, typed

import pixflow

if "cuda" not in pixflow.info()["backends"]:
    pytest.skip("pixflow was built without the CUDA backend", allow_module_level=True)
if not any(d["location"].startswith("cuda:") for d in pixflow.info()["devices"]):
    pytest.skip("no CUDA device", allow_module_level=True)

try:
    import cupy
except ImportError:  # pragma: no cover - the GPU machine has CuPy
    cupy = None
try:
    import torch
except ImportError:  # pragma: no cover
    torch = None

needs_cupy = pytest.mark.skipif(cupy is None, reason="CuPy is not installed")
needs_torch = pytest.mark.skipif(torch is None or not torch.cuda.is_available(),
                                 reason="PyTorch with CUDA is not installed")


def to_cupy(kwargs: dict) -> dict:
    return {k: cupy.asarray(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}


@needs_cupy
@pytest.mark.parametrize("op,example,depth,channels", CASES)
def test_cupy_equals_cpu(op: str, example: str, depth: str, channels: int) -> None:
    """Every schema example on a CuPy array: a CuPy result equal to the CPU result."""
    src = random_image(23, 41, channels, depth, seed=zlib.crc32(f"{op} {example}".encode()))
    kwargs = typed(op, example, src)
    want = getattr(pixflow, op)(src, **kwargs)
    d_src = cupy.asarray(src)
    poison = cupy.full(want.shape, np.nan if want.dtype == np.float32 else 0xA5, want.dtype)
    got = getattr(pixflow, op)(d_src, **to_cupy(kwargs), out=poison)
    assert got is poison
    assert np.array_equal(cupy.asnumpy(got), want)
    fresh = getattr(pixflow, op)(d_src, **to_cupy(kwargs))
    assert isinstance(fresh, cupy.ndarray)
    assert np.array_equal(cupy.asnumpy(fresh), want)


@needs_cupy
def test_cupy_zero_copy() -> None:
    """out= is written in place (pointer identity); a ROI view of a device array is read in
    place: the pool grows by the output only."""
    big = cupy.asarray(random_image(300, 400, 3, "u8", seed=1))
    roi = big[10:250, 20:380]
    out = cupy.empty((240, 360, 3), cupy.uint8)
    ptr = out.data.ptr
    assert pixflow.median(roi, k=5, out=out) is out and out.data.ptr == ptr
    want = pixflow.median(cupy.asnumpy(roi), k=5)
    assert np.array_equal(cupy.asnumpy(out), want)
    pool = cupy.get_default_memory_pool()
    cupy.cuda.Device().synchronize()
    before = pool.used_bytes()
    res = pixflow.median(roi, k=5)
    grew = pool.used_bytes() - before
    # The output (CuPy rounds blocks up to 512 bytes), and no copy of the 259 KB source.
    assert res.nbytes <= grew < res.nbytes + 512, (grew, res.nbytes)


SPIN = r"""
extern "C" __global__ void spin_then_fill(unsigned char* p, long long n, long long cycles) {
  long long t0 = clock64();
  while (clock64() - t0 < cycles) {}
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x)
    p[i] = 200;
}
"""


@needs_cupy
def test_cupy_stream_ordering() -> None:
    """A user kernel on a side stream writes the source after a ~50 ms spin; pixflow, given that
    stream (explicitly, or as CuPy's current stream), must read what the kernel wrote."""
    kernel = cupy.RawKernel(SPIN, "spin_then_fill")
    for explicit in (True, False):
        src = cupy.zeros((512, 512), cupy.uint8)
        s = cupy.cuda.Stream(non_blocking=True)
        kernel((64,), (256,), (src, cupy.int64(src.size), cupy.int64(100_000_000)), stream=s)
        if explicit:
            out = pixflow.dilate(src, k=3, stream=s)
        else:
            with s:
                out = pixflow.dilate(src, k=3)
        s.synchronize()
        assert int(out.min()) == 200 and int(out.max()) == 200


@needs_cupy
def test_cupy_pipeline_and_batch() -> None:
    p = pixflow.Pipeline("median k=5 | gaussian sigma=2")
    items = np.stack([random_image(40, 50, 3, "u8", seed=s) for s in range(4)])
    want = p(items)
    got = p(cupy.asarray(items))
    assert isinstance(got, cupy.ndarray) and np.array_equal(cupy.asnumpy(got), want)


@needs_cupy
def test_cupy_errors() -> None:
    d = cupy.zeros((8, 8), cupy.uint8)
    with pytest.raises(pixflow.InvalidArgumentError, match="median"):
        pixflow.median(d, out=np.zeros((8, 8), np.uint8))  # host out for a device source
    with pytest.raises(pixflow.InvalidArgumentError, match="median"):
        pixflow.median(np.zeros((8, 8), np.uint8), out=cupy.zeros((8, 8), cupy.uint8))
    # An image parameter on the host is uploaded to the source's device, as a pipeline's
    # `with=FILE` is (the schema's stage does it): allowed, and the result is right.
    h = random_image(8, 8, 1, "u8", seed=4)
    assert np.array_equal(cupy.asnumpy(pixflow.add(d, h)), h)
    with pytest.raises(pixflow.UnsupportedError, match="median: src has dtype float64"):
        pixflow.median(cupy.zeros((8, 8)))
    with pytest.raises(pixflow.Error, match="write_image"):
        pixflow.write_image("never.png", d)


@needs_cupy
@pytest.mark.skipif(cupy is None or cupy.cuda.runtime.getDeviceCount() < 2, reason="one GPU")
def test_cupy_second_device() -> None:
    src = random_image(33, 35, 1, "u8", seed=3)
    with cupy.cuda.Device(1):
        d = cupy.asarray(src)
        got = pixflow.median(d, k=3)
        assert got.device.id == 1
    assert np.array_equal(cupy.asnumpy(got), pixflow.median(src, k=3))
    # Called while device 0 is current: the result is still made on device 1 (the native call
    # hands this case to the Python half), on device 1's current stream.
    again = pixflow.median(d, k=3)
    assert again.device.id == 1
    assert np.array_equal(cupy.asnumpy(again), cupy.asnumpy(got))
    on0 = cupy.empty((33, 35), cupy.uint8)
    with pytest.raises(pixflow.InvalidArgumentError, match="out must live where src lives"):
        pixflow.median(d, k=3, out=on0)


@needs_torch
def test_torch_tensors() -> None:
    src = random_image(37, 29, 3, "u8", seed=5)
    t = torch.from_numpy(src).cuda()
    got = pixflow.gaussian(t, sigma=2)
    assert isinstance(got, torch.Tensor) and got.is_cuda and got.dtype == torch.uint8
    assert np.array_equal(got.cpu().numpy(), pixflow.gaussian(src, sigma=2))
    out = torch.empty_like(t)
    ptr = out.data_ptr()
    assert pixflow.gaussian(t, sigma=2, out=out) is out and out.data_ptr() == ptr
    assert torch.equal(out, got)
    f = torch.rand(31, 33, device="cuda")
    assert np.array_equal(pixflow.box(f, k=5).cpu().numpy(), pixflow.box(f.cpu().numpy(), k=5))
    host = torch.from_numpy(src)  # a CPU tensor: CPU backend, a tensor back
    assert isinstance(pixflow.median(host), torch.Tensor)


@needs_torch
def test_torch_stream_ordering() -> None:
    """PyTorch's current stream is the default: work queued on a side stream (a large matmul,
    then a fill of the source) is ordered before pixflow's read."""
    s = torch.cuda.Stream()
    src = torch.zeros((1024, 1024), dtype=torch.uint8, device="cuda")
    a = torch.rand(4096, 4096, device="cuda")
    with torch.cuda.stream(s):
        for _ in range(4):
            a = a @ a
        src.fill_(123)
        out = pixflow.erode(src, k=3)
    s.synchronize()
    assert int(out.min()) == 123 and int(out.max()) == 123


@needs_cupy
@pytest.mark.parametrize("op,params", [("median", {"k": 5, "border": "reflect101"}),
                                       ("dilate", {"k": 3, "iterations": 2, "border": "wrap"}),
                                       ("gaussian", {"sigma": 2.0, "border": "constant",
                                                     "value": 9})])
def test_dask_map_op_on_cupy_chunks(op: str, params: dict) -> None:
    """pixflow.dask.map_op over a Dask array of CuPy chunks: the tiles run on the GPU and the
    result equals the CPU result on the whole image (skipped where Dask is not installed)."""
    da = require("dask.array")
    import pixflow.dask

    src = random_image(150, 170, 3, "u8", seed=31)
    d = da.from_array(cupy.asarray(src), chunks=(37, 53, 3), asarray=False)
    got = pixflow.dask.map_op(d, op, **params).compute()
    assert isinstance(got, cupy.ndarray)
    assert np.array_equal(cupy.asnumpy(got), getattr(pixflow, op)(src, **params))
