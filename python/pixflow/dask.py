"""pixflow over Dask arrays: one op tiled over the chunks, bit-identical to the whole image.

    import dask.array as da, pixflow, pixflow.dask
    big = da.from_zarr("slide.zarr")                   # H x W x C, chunked as stored
    out = pixflow.dask.map_op(big, "median", k=5, border="reflect101")

``map_op`` is ``dask.array.map_overlap`` with the op's halo (``pixflow.halo``) as depth and
the boundary that keeps every border mode exact: ``"none"`` (the blocks at the image's edges are
not padded, so pixflow's own border rule applies there, as on the whole image) except for
``border="wrap"``, which needs the opposite edge: ``"periodic"``. docs/python.md says why the
other Dask boundaries are not exact for some modes and ops. Dask is imported only here.
"""

from __future__ import annotations

import functools
import keyword
from typing import TYPE_CHECKING, Any

import pixflow

if TYPE_CHECKING:
    import dask.array


def boundary(op: str, border: str | None = None) -> str:
    """The ``map_overlap`` boundary that tiles `op` exactly with pixflow's `border`.

    ``"periodic"`` for ``wrap`` (a block at the edge reads the opposite edge), ``"none"`` for
    every other mode (pixflow applies the mode itself at the image's edges).
    """
    spec = pixflow._PARAMS.get(op)
    if spec is None:
        raise pixflow.InvalidArgumentError(
            f"pixflow: unknown op '{op}' (known: {', '.join(pixflow.ops)})")
    if border is None:
        border = spec["border"]["default"] if "border" in spec else "replicate"
    return "periodic" if border == "wrap" else "none"


def map_op(arr: dask.array.Array, op: str, *, backend: str | None = None,
           threads: int | None = None, **params: Any) -> dask.array.Array:
    """`op` with `params` (as ``pixflow.<op>`` takes them) over every chunk of `arr`.

    `arr` is an H x W or H x W x C Dask array of NumPy (CPU) or CuPy (CUDA) chunks; its chunks
    along C are merged into one. The result is equal, bit for bit, to the op on the whole
    image; its chunks are `arr`'s, except that Dask merges chunks smaller than the halo into
    their neighbours, and an axis shorter than the halo becomes one chunk (Dask cannot overlap
    it). Ops without a finite halo (gaussian_iir, remap, transpose, resize and the geometry ops) and image
    parameters (``with=``, ``map_x=``) raise InvalidArgumentError.
    """
    import dask.array as da
    from dask.array.utils import meta_from_array

    if not isinstance(arr, da.Array):
        raise pixflow.InvalidArgumentError(
            f"{op}: map_op takes a dask.array.Array (got {type(arr).__name__}); "
            "for other arrays call pixflow." + op + " directly")
    if arr.ndim not in (2, 3):
        raise pixflow.InvalidArgumentError(
            f"{op}: src must be an H x W or H x W x C array (got {arr.ndim} dimensions)")
    spec = pixflow._PARAMS.get(op, {})
    names = {(k[:-1] if k.endswith("_") and keyword.iskeyword(k[:-1]) else k): v
             for k, v in params.items()}
    images = [k for k in names if k in spec and spec[k]["kind"] == "image"]
    if images:
        raise pixflow.InvalidArgumentError(
            f"{op}: map_op does not tile image parameters ({', '.join(images)}); use "
            "dask.array.map_blocks with both arrays chunked alike")
    channels = arr.shape[2] if arr.ndim == 3 else 1
    rows, cols = pixflow.halo(op, dtype=arr.dtype, channels=channels, **params)

    # The result's format from the op's plan (runs nothing): one channel out of several
    # (gray) drops the channel axis, as pixflow.<op> does.
    shape1 = (1, 1, channels) if arr.ndim == 3 else (1, 1)
    plan = pixflow._bind(op, names, {}).plan(1, 1, channels, pixflow._DEPTH_OF[arr.dtype.name])
    oshape = pixflow._out_shape(shape1, plan)
    meta = meta_from_array(arr._meta, ndim=len(oshape), dtype=pixflow._DTYPE_OF[plan[3]])
    fn = functools.partial(getattr(pixflow, op), backend=backend, threads=threads, **params)

    if arr.ndim == 3:
        arr = arr.rechunk({2: -1})
    depth = {0: rows, 1: cols, 2: 0}
    for axis in (0, 1):
        if depth[axis] >= arr.shape[axis] and arr.numblocks[axis] > 1:
            arr = arr.rechunk({axis: -1})
        if arr.numblocks[axis] == 1:  # the whole axis in every block: pixflow's border applies
            depth[axis] = 0
    if arr.ndim == 2:
        del depth[2]

    if depth[0] == depth[1] == 0:
        if len(oshape) == arr.ndim and oshape[2:] == arr.shape[2:]:
            return arr.map_blocks(fn, dtype=meta.dtype, meta=meta)
        if len(oshape) == 2:
            return arr.map_blocks(fn, drop_axis=2, dtype=meta.dtype, meta=meta)
        return arr.map_blocks(fn, chunks=arr.chunks[:2] + ((oshape[2],),), dtype=meta.dtype,
                              meta=meta)
    if len(oshape) != arr.ndim or oshape[2:] != arr.shape[2:]:
        raise pixflow.UnsupportedError(  # no window op of the catalogue changes the channels
            f"{op}: map_op tiles window ops that keep the channel count")
    return arr.map_overlap(fn, depth=depth, boundary=boundary(op, params.get("border")),
                           trim=True, dtype=meta.dtype, meta=meta)
