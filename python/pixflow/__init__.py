"""pixflow: classic image filters on the CPU (SIMD), CUDA and OpenCL, bit-identical everywhere.

One function per op of the catalogue, generated from the op schema::

    import numpy as np, pixflow
    img = pixflow.read_image("photo.png")            # H x W x C uint8 NumPy array
    out = pixflow.median(img, k=5, border="reflect101")
    pixflow.write_image("median.png", out)

An op runs where its source lives: NumPy (or anything with the buffer protocol or host DLPack)
on the CPU backend, a CuPy array or a CUDA torch tensor on the CUDA backend, on the current
stream of the array's framework unless ``stream=`` says otherwise. The source is never copied;
the result is an array of the source's framework (``out=`` writes into a given one).

Layout: H x W (one channel) or H x W x C (C in 1..4), channels and pixels packed within a row
(slices of rows and columns are views, accepted as they are). See docs/python.md.
"""

from __future__ import annotations

import builtins
import keyword
import numbers
import os
import sys
from typing import Any

from . import _pixflow as _native
from ._pixflow import (
    BackendError,
    BackendUnavailableError,
    Error,
    InternalError,
    InvalidArgumentError,
    IoError,
    LimitExceededError,
    OutOfMemoryError,
    UnsupportedError,
)

__version__: str = _native.__version__

__all__ = [
    "Error",
    "InvalidArgumentError",
    "UnsupportedError",
    "BackendUnavailableError",
    "OutOfMemoryError",
    "BackendError",
    "IoError",
    "LimitExceededError",
    "InternalError",
    "Pipeline",
    "read_image",
    "write_image",
    "info",
    "halo",
    "ops",
]

# pixflow depth names <-> NumPy dtype names.
_DTYPE_OF = {"u8": "uint8", "u16": "uint16", "s16": "int16", "s32": "int32", "f32": "float32"}
_DEPTH_OF = {v: k for k, v in _DTYPE_OF.items()}

# ---- arrays of the frameworks, without importing any of them eagerly -------------------------


_FRAMEWORK_OF_TYPE: dict[type, str] = {}


def _framework(x: Any) -> str:
    """'numpy', 'cupy', 'torch' or 'other', by the array's type (cached per type)."""
    t = type(x)
    fw = _FRAMEWORK_OF_TYPE.get(t)
    if fw is None:
        mod = t.__module__
        fw = ("numpy" if mod == "numpy" else "cupy" if mod.startswith("cupy")
              else "torch" if mod.startswith("torch") else "other")
        _FRAMEWORK_OF_TYPE[t] = fw
    return fw


def _adopt(x: Any, what: str) -> tuple[Any, str]:
    """A foreign array as NumPy (host) or CuPy (CUDA) without copying it."""
    if hasattr(x, "__cuda_array_interface__") and not hasattr(x, "__dlpack__"):
        try:
            import cupy
        except ImportError:
            raise InvalidArgumentError(
                f"{what} has only __cuda_array_interface__; pixflow reads such arrays through "
                "CuPy (pip install cupy), or pass a DLPack array (CuPy, PyTorch)"
            ) from None
        return cupy.asarray(x), "cupy"
    import numpy as np

    if hasattr(x, "__dlpack_device__") and x.__dlpack_device__()[0] not in (1, 3):
        # A device array of another framework: read it through CuPy when present.
        try:
            import cupy

            return cupy.from_dlpack(x), "cupy"
        except ImportError:
            raise InvalidArgumentError(
                f"{what}: device arrays of type {type(x).__name__} are read through CuPy "
                "(pip install cupy); or pass a CuPy array or a torch tensor"
            ) from None
    if hasattr(x, "__dlpack__"):
        return np.from_dlpack(x), "numpy"
    try:
        return np.asarray(memoryview(x)), "numpy"  # the buffer protocol, no copy
    except TypeError:
        raise InvalidArgumentError(
            f"{what} must be an array (NumPy, CuPy, PyTorch, DLPack or the buffer protocol); "
            f"got {type(x).__name__}"
        ) from None


_TORCH_DEPTH: dict[Any, str] = {}
_NUMPY_DEPTH: dict[Any, str] = {}


def _torch_desc(t: Any) -> Any:
    """A torch tensor as (data_ptr, shape, strides, depth, CUDA device or -1, strides in bytes)
    for the native side: cheaper than its DLPack export. Other dtypes go through DLPack (and
    its errors)."""
    if not _TORCH_DEPTH:
        import torch

        for name, depth in (("uint8", "u8"), ("uint16", "u16"), ("int16", "s16"),
                            ("int32", "s32"), ("float32", "f32")):
            if hasattr(torch, name):
                _TORCH_DEPTH[getattr(torch, name)] = depth
    depth = _TORCH_DEPTH.get(t.dtype)
    if depth is None:
        return t
    return (t.data_ptr(), t.shape, t.stride(), depth, t.get_device(), False)


def _cupy_desc(a: Any) -> Any:
    """A CuPy array as the same tuple (byte strides): cheaper than its DLPack export."""
    if not _NUMPY_DEPTH:
        import numpy as np

        for name, depth in _DEPTH_OF.items():
            _NUMPY_DEPTH[np.dtype(name)] = depth
    depth = _NUMPY_DEPTH.get(a.dtype)
    if depth is None:
        return a
    return (a.data.ptr, a.shape, a.strides, depth, a.device.id, True)


_DESC = {"torch": _torch_desc, "cupy": _cupy_desc}


def _arg(x: Any) -> Any:
    """What the native side is given for an array: the description of a CuPy or PyTorch
    array, anything else as it is (DLPack or the buffer protocol)."""
    describe = _DESC.get(_framework(x))
    return describe(x) if describe is not None else x


def _empty(fw: str, like: Any, shape: tuple[int, ...], dtype: str) -> Any:
    if fw == "numpy":
        import numpy as np

        return np.empty(shape, dtype)
    if fw == "cupy":
        import cupy

        dev = like.device.id
        if dev == cupy.cuda.runtime.getDevice():
            return cupy.empty(shape, dtype)
        with cupy.cuda.Device(dev):
            return cupy.empty(shape, dtype)
    import torch

    return torch.empty(shape, dtype=getattr(torch, dtype), device=like.device)


def _stream(fw: str, like: Any, stream: Any) -> int:
    """The raw cudaStream_t of `stream`, or of the framework's current stream (0 = legacy)."""
    if stream is None:
        if fw == "cupy":
            import cupy

            dev = like.device.id
            if dev == cupy.cuda.runtime.getDevice():
                return cupy.cuda.get_current_stream().ptr
            with cupy.cuda.Device(dev):
                return cupy.cuda.get_current_stream().ptr
        if fw == "torch" and like.is_cuda:
            import torch

            try:  # the raw handle without a Stream object (what Triton uses)
                return torch._C._cuda_getCurrentRawStream(like.get_device())
            except AttributeError:
                return torch.cuda.current_stream(like.device).cuda_stream
        return 0
    if isinstance(stream, numbers.Integral):
        return int(stream)
    for attr in ("ptr", "cuda_stream"):  # CuPy, PyTorch
        if hasattr(stream, attr):
            return int(getattr(stream, attr))
    raise InvalidArgumentError(
        f"stream must be a CuPy or PyTorch stream or a raw cudaStream_t (got {type(stream).__name__})"
    )


def _out_shape(src_shape: tuple[int, ...], plan: tuple[int, int, int, str]) -> tuple[int, ...]:
    h, w, c, _ = plan
    # One channel out: H x W, unless the source was H x W x 1 (the caller's layout is kept).
    if c == 1 and (len(src_shape) == 2 or src_shape[2] != 1):
        return (h, w)
    return (h, w, c)


def _run(bound: Any, src: Any, out: Any, stream: Any, backend: str | None,
         threads: int | None) -> Any:
    """One call, where the native call (BoundOp.call) hands it back: a source of another
    framework (adopted as NumPy or CuPy here), a CuPy array on another device than the current
    one. The output allocated in src's framework unless given (the native side checks a given
    one: shape, dtype, writable, location), then the op on src's stream."""
    fw = _framework(src)
    if fw == "other":
        src, fw = _adopt(src, f"{bound.name}: src")
    describe = _DESC.get(fw)
    if describe is not None:  # CuPy, PyTorch: described, not exported through DLPack
        s = _stream(fw, src, stream)
        desc = describe(src)
        if out is None:
            shape, dtype = bound.result(desc)
            out = _empty(fw, src, shape, dtype)
        ofw = _framework(out)
        bound.run(desc, _DESC[ofw](out) if ofw in _DESC else out, backend or "", s,
                  threads or 0)
        return out
    if out is None:
        shape, dtype = bound.result(src)
        out = _empty(fw, src, shape, dtype)
    s = 0 if stream is None and fw == "numpy" else _stream(fw, src, stream)
    bound.run(src, out, backend or "", s, threads or 0)
    return out


# ---- parameters: Python values -> the schema's KEY=VALUE text --------------------------------


def _text(op: str, p: dict, v: Any) -> str:
    kind, name = p["kind"], p["name"]
    if kind == "integer":
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            if isinstance(v, float) and v.is_integer():
                return str(int(v))
            raise InvalidArgumentError(f"{op}: {name} must be an integer (got {v!r})")
        return str(int(v))
    if kind == "number":
        if isinstance(v, str) and v in p["choices"]:  # a word it also takes (scale="auto")
            return v
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise InvalidArgumentError(f"{op}: {name} must be a number (got {v!r})")
        return repr(float(v))
    if kind == "boolean":
        if not isinstance(v, (bool, numbers.Integral)) or int(v) not in (0, 1):
            raise InvalidArgumentError(f"{op}: {name} must be True or False (got {v!r})")
        return "1" if v else "0"
    if kind == "depth" or (kind == "choice" and not isinstance(v, str)):
        if not isinstance(v, str):
            try:
                import numpy as np

                v = _DEPTH_OF.get(np.dtype(v).name, str(v))
            except TypeError:
                v = str(v)
        return _DEPTH_OF.get(v, v)
    if kind == "text" and not isinstance(v, str):
        # A kernel as a 2-D (or 1-D: one row) sequence of numbers.
        rows = v.tolist() if hasattr(v, "tolist") else list(v)
        if rows and not hasattr(rows[0], "__len__"):
            rows = [rows]
        return ";".join(",".join(repr(float(x)) for x in row) for row in rows)
    if not isinstance(v, str):
        raise InvalidArgumentError(f"{op}: {name} must be a string (got {v!r})")
    return v


# Bound ops by (op, the call's keyword values): a repeated call skips the text conversion and
# the schema's parsing. Values that are not hashable (a kernel as a list) bind every call.
_BOUND: dict[tuple, Any] = {}


def _bind(op: str, params: dict[str, Any], images: dict[str, Any], key: tuple | None = None) -> Any:
    """The op bound to its parameters; kept in _BOUND under `key` (the op and its keyword values
    in signature order) when there are no image parameters and the values are hashable."""
    imgs = {k: v for k, v in images.items() if v is not None}
    spec = _PARAMS[op]
    text = {k: _text(op, spec[k], v) for k, v in params.items() if v is not None}
    for k, v in imgs.items():
        if _framework(v) == "other":
            imgs[k] = _adopt(v, f"{op}: {k}")[0]
    bound = _native.BoundOp(op, text, imgs)
    if key is not None and not imgs and len(_BOUND) < 4096:
        try:
            _BOUND[key] = bound
        except TypeError:  # a value that is not hashable (a kernel as a list)
            pass
    return bound


# ---- one function per op, from the schema -----------------------------------------------------

_SCHEMA: list[dict] = _native.schema()
_PARAMS: dict[str, dict[str, dict]] = {o["name"]: {p["name"]: p for p in o["params"]} for o in _SCHEMA}
_PY_TYPES = {
    "integer": "int",
    "number": "float",
    "boolean": "bool",
    "choice": "str",
    "depth": "str",
    "border": "str",
    "text": "str",
    "image": "Any",
}


def _py_name(name: str) -> str:
    return name + "_" if keyword.iskeyword(name) else name


def _doc(o: dict) -> str:
    lines = [o["doc"][:1].upper() + o["doc"][1:] + ".", ""]
    lines.append(f"Depths: {', '.join(_DTYPE_OF[d] for d in o['depths'])}; channels: "
                 f"{', '.join(map(str, o['channels']))}.")
    lines += ["", "Parameters (None: the schema's default)", "----------"]
    lines.append("src : array\n    H x W or H x W x C image (NumPy, CuPy, PyTorch, DLPack).")
    for p in o["params"]:
        default = "required" if p["required"] else (p["default"] or "derived")
        if p["kind"] == "image":
            lines.append(f"{_py_name(p['name'])} : array\n    {p['doc']} ({default}).")
        else:
            lines.append(f"{_py_name(p['name'])} : {_PY_TYPES[p['kind']]}, default {default}\n"
                         f"    {p['doc']}.")
    lines.append("out : array, optional\n    Written in place and returned (shape and dtype of "
                 "the result, where src lives).")
    lines.append("stream : CuPy / PyTorch stream or int, optional\n    CUDA stream (default: "
                 "the current stream of src's framework).")
    lines.append("backend : str, optional\n    'auto' (default: where src lives), 'cpu', 'ref' "
                 "(the scalar reference) or 'cuda'.")
    lines.append("threads : int, optional\n    Cap on the CPU backend's threads (0: all cores).")
    lines += ["", "Returns", "-------", "array\n    The result, an array of src's framework."]
    return "\n".join(lines)


def _make_op(o: dict):
    name = o["name"]
    images = [p for p in o["params"] if p["kind"] == "image"]
    rest = [p for p in o["params"] if p["kind"] != "image"]
    sig_images = "".join(f", {_py_name(p['name'])}=None" for p in images)
    sig_rest = "".join(f", {_py_name(p['name'])}=None" for p in rest)
    params = ", ".join(f"{p['name']!r}: {_py_name(p['name'])}" for p in rest)
    imgs = ", ".join(f"{p['name']!r}: {_py_name(p['name'])}" for p in images)
    # Image arguments are part of the key: a call with one never meets a binding made without
    # it (arrays are not hashable, or never cached: such calls always bind).
    values = "".join(f"{_py_name(p['name'])}, " for p in images + rest)
    src = (
        f"def {name}(src{sig_images}, *{sig_rest}, out=None, stream=None, backend=None, "
        f"threads=None):\n"
        f"    key = ({name!r}, {values})\n"
        f"    try:\n"
        f"        bound = _BOUND[key]\n"
        f"    except (KeyError, TypeError):\n"
        f"        bound = _bind({name!r}, {{{params}}}, {{{imgs}}}, key)\n"
        f"    r = bound.call(src, out, stream, backend, threads)\n"
        f"    return r if r is not NotImplemented else _run(bound, src, out, stream, backend, "
        f"threads)\n"
    )
    scope = {"_run": _run, "_bind": _bind, "_BOUND": _BOUND}
    exec(src, scope)  # noqa: S102 - the text is built from the schema only
    fn = scope[name]
    fn.__doc__ = _doc(o)
    fn.__module__ = __name__
    fn.__qualname__ = name
    return fn


ops: list[str] = []
for _o in _SCHEMA:
    globals()[_o["name"]] = _make_op(_o)
    ops.append(_o["name"])
    if not hasattr(builtins, _o["name"]):  # `from pixflow import *` keeps the builtin open()
        __all__.append(_o["name"])
del _o


def halo(op: str, *, dtype: Any = "uint8", channels: int = 1, **params: Any) -> tuple[int, int]:
    """(rows, columns) one output pixel of `op` reads beyond itself on each side.

    For tiling with ``dask.array.map_overlap(fn, depth={0: rows, 1: columns}, boundary=...)``
    (``boundary="none"``, or ``"periodic"`` for ``border="wrap"``: docs/python.md);
    ``pixflow.dask.map_op`` makes that call. Raises InvalidArgumentError for an op whose output
    pixel may depend on any pixel of the image (gaussian_iir, remap, transpose, resize, flip,
    rotate, crop, pad): no finite halo
    tiles it exactly.
    """
    if op not in _PARAMS:
        raise InvalidArgumentError(f"pixflow: unknown op '{op}' (known: {', '.join(ops)})")
    images = {k: params.pop(_py_name(k), None) for k, p in _PARAMS[op].items()
              if p["kind"] == "image"}
    params = {(k[:-1] if k.endswith("_") and keyword.iskeyword(k[:-1]) else k): v
              for k, v in params.items()}
    for k in params:
        if k not in _PARAMS[op]:
            raise InvalidArgumentError(f"{op}: unknown parameter '{k}'")
    bound = _bind(op, params, images)
    try:
        import numpy as np

        depth = _DEPTH_OF[np.dtype(dtype).name]
    except (TypeError, KeyError):
        raise UnsupportedError(f"{op}: dtype {dtype!r} is not one of uint8, uint16, int16, "
                               "int32, float32") from None
    rows, cols = bound.halo(depth, channels)
    if rows < 0 or cols < 0:  # the schema's "whole image" answer
        raise InvalidArgumentError(
            f"{op}: an output pixel may depend on any pixel of the image, so no finite halo "
            "tiles it exactly; run it on the whole image")
    return rows, cols


# ---- pipelines, I/O, info --------------------------------------------------------------------


class Pipeline:
    """A parsed pipeline, as on the command line: ``Pipeline("median k=5 | gaussian sigma=2")``.

    Calling it runs every stage on one image (H x W or H x W x C) or on a batch: a list of
    images (a list back), or an N x H x W x C array (``batch=True`` for N x H x W), whose
    result is one array of the same framework.
    """

    def __init__(self, text: str) -> None:
        self._p = _native.Pipeline(text)
        self.text = text

    @property
    def ops(self) -> list[str]:
        return list(self._p.names)

    def __repr__(self) -> str:
        return f"pixflow.Pipeline({self.text!r})"

    def plan(self, shape: tuple[int, ...], dtype: Any = "uint8") -> tuple[tuple[int, ...], str]:
        """The result's shape and dtype for a source of that shape and dtype (runs nothing)."""
        import numpy as np

        depth = _DEPTH_OF.get(np.dtype(dtype).name)
        if depth is None:
            raise UnsupportedError(f"pipeline: dtype {dtype!r} is not one of uint8, uint16, "
                                   "int16, int32, float32")
        shape = tuple(shape)
        p = self._p.plan(shape[0], shape[1], shape[2] if len(shape) == 3 else 1, depth)
        return _out_shape(shape, p), _DTYPE_OF[p[3]]

    def __call__(self, src: Any, *, out: Any = None, stream: Any = None,
                 backend: str | None = None, threads: int | None = None,
                 batch: bool | None = None) -> Any:
        if isinstance(src, (list, tuple)):
            outs = out if out is not None else [None] * len(src)
            if len(outs) != len(src):
                raise InvalidArgumentError(f"pipeline: out must hold {len(src)} arrays "
                                           f"(got {len(outs)})")
            return [self(s, out=o, stream=stream, backend=backend, threads=threads)
                    for s, o in zip(src, outs)]
        if not batch and len(getattr(src, "shape", ())) < 4:
            r = self._p.call(src, out, stream, backend, threads)
            if r is not NotImplemented:
                return r
        fw = _framework(src)
        if fw == "other":
            src, fw = _adopt(src, "pipeline: src")
        ndim = len(src.shape)
        if ndim == 4 or (batch and ndim == 3):
            return self._batch(src, fw, out, stream, backend, threads)
        if batch:
            raise InvalidArgumentError(f"pipeline: a batch must be N x H x W or N x H x W x C "
                                       f"(got {ndim} dimensions)")
        if out is None:
            shape, dtype = self._p.result(src)
            out = _empty(fw, src, shape, dtype)
        self._p.run(_arg(src), _arg(out), backend or "", _stream(fw, src, stream),
                    threads or 0)
        return out

    def _batch(self, src, fw, out, stream, backend, threads):
        n = src.shape[0]
        shape, dtype = self._p.result(src[0])
        if out is None:
            out = _empty(fw, src, (n, *shape), dtype)
        elif tuple(out.shape)[:1] != (n,):
            raise InvalidArgumentError(f"pipeline: out must hold {n} images along its first axis "
                                       f"(got shape {tuple(out.shape)})")
        s = _stream(fw, src, stream)
        for i in range(n):
            self._p.run(_arg(src[i]), _arg(out[i]), backend or "", s, threads or 0)
        return out


def read_image(path: str | os.PathLike) -> Any:
    """Reads PNG, JPEG, TIFF, PGM/PPM or NPY into a NumPy array (H x W or H x W x C)."""
    return _native.read_image(os.fspath(path))


def write_image(path: str | os.PathLike, image: Any, *, quality: int = 95,
                compression: int = -1) -> None:
    """Writes a host array in the format of the path's extension, atomically (no partial file).

    ``quality`` is the JPEG quality (1..100). ``compression`` is PNG's zlib level (0..9) or,
    for TIFF, 0 (uncompressed) or a Deflate level 1..9; -1 keeps the codec's default.
    """
    if _framework(image) == "other":
        image, _ = _adopt(image, "write_image: image")
    _native.write_image(os.fspath(path), image, quality, compression)


def info() -> dict:
    """The build: version, backends, devices, TIFF support and the ops of the catalogue."""
    d = dict(_native.info())
    d["version"] = __version__
    d["ops"] = list(ops)
    d["python"] = sys.version.split()[0]
    return d
