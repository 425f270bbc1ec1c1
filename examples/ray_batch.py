"""A pixflow pipeline over a folder of images with Ray Data, one worker per core or GPU.

    python examples/ray_batch.py "median k=5 | gaussian sigma=2" photos/ -o cleaned/

does what ``pixflow run "..." photos/ -o cleaned/ --keep-going`` does (same files, same names,
same pixels), spread over a Ray cluster: each worker (an actor of ``map_batches``) parses the
pipeline once and keeps it; with a CUDA device (``pixflow.info()["devices"]``) and CuPy, every
worker holds one GPU (``num_gpus=1``) and runs there. A file that fails (corrupt, wrong depth
for the pipeline, ...) is reported in the result's ``error`` column and on stderr; the others
are written. Exit codes as the CLI's batch: 0, 2 (bad usage or pipeline), 3 (some items failed).

The workers decode with ``pixflow.read_image`` (the CLI's decoder, so the pixels match it),
from the file's path: the folder must be visible to every worker (one machine, or a shared
file system). ``ray.data.read_images`` is not used: it decodes with PIL inside the read task,
where one corrupt file fails the whole job (tests/python/test_ray.py shows it), and PIL is
not the CLI's decoder (a palette PNG comes out as indices unless mode= is given).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

import numpy as np

import pixflow

# The extensions of the CLI's batch mode (docs/cli.md, "Batch mode").
EXTENSIONS = (".png", ".jpg", ".jpeg", ".tif", ".tiff", ".pgm", ".ppm", ".pnm", ".npy")


def list_images(folder: str | os.PathLike) -> list[str]:
    """The folder's images as the CLI's batch takes them: regular files (symlinks followed,
    not recursive) with one of EXTENSIONS (any case), in byte order of the names."""
    folder = os.fspath(folder)
    names = sorted(os.listdir(folder), key=os.fsencode)
    return [os.path.join(folder, n) for n in names
            if n.lower().endswith(EXTENSIONS) and os.path.isfile(os.path.join(folder, n))]


def cuda_available() -> bool:
    """A CUDA device in this build (pixflow.info) and CuPy to hold images on it."""
    if not any(d["location"].startswith("cuda") for d in pixflow.info()["devices"]):
        return False
    try:
        import cupy  # noqa: F401
    except ImportError:
        return False
    return True


class PixflowWorker:
    """One Ray actor: the parsed pipeline (and its GPU) kept across every batch it gets."""

    def __init__(self, pipeline: str, out_dir: str, device: str, threads: int) -> None:
        self.pipeline = pixflow.Pipeline(pipeline)
        self.out_dir = out_dir
        self.threads = threads
        self.cupy: Any = None
        if device == "cuda":  # Ray gave this actor one GPU: it is CUDA device 0 here
            import cupy

            self.cupy = cupy

    def _one(self, path: str) -> str:
        img = pixflow.read_image(path)
        if self.cupy is not None:
            res = self.cupy.asnumpy(self.pipeline(self.cupy.asarray(img)))  # syncs the stream
        else:
            res = self.pipeline(img, threads=self.threads)
        out = os.path.join(self.out_dir, os.path.basename(path))
        pixflow.write_image(out, res)  # atomic: a failed item leaves no file
        return out

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        outputs, errors = [], []
        for path in batch["path"]:
            try:
                outputs.append(self._one(str(path)))
                errors.append("")
            except (pixflow.Error, OSError) as e:  # per item: the batch goes on
                outputs.append("")
                errors.append(f"{type(e).__name__}: {e}")
        return {"path": batch["path"], "output": np.array(outputs, dtype=object),
                "error": np.array(errors, dtype=object)}


def run(pipeline: str, folder: str | os.PathLike, out_dir: str | os.PathLike, *,
        workers: int | None = None, batch_size: int = 4, device: str = "auto",
        threads: int = 1) -> list[dict[str, Any]]:
    """Runs `pipeline` over the images of `folder` into `out_dir` on the connected Ray
    cluster (ray.init() first); one row per image: path, output ('' on failure), error."""
    import ray

    pixflow.Pipeline(pipeline)  # a bad pipeline fails here, before any worker starts
    if device == "auto":
        device = "cuda" if cuda_available() else "cpu"
    paths = list_images(folder)
    if not paths:
        return []
    os.makedirs(out_dir, exist_ok=True)
    if workers is None:
        res = ray.cluster_resources()
        workers = int(res.get("GPU", 0)) if device == "cuda" else int(res.get("CPU", 1)) // threads
    workers = max(1, min(workers, len(paths)))
    ds = ray.data.from_items([{"path": p} for p in paths])
    ds = ds.map_batches(
        PixflowWorker,
        fn_constructor_kwargs={"pipeline": pipeline, "out_dir": os.fspath(out_dir),
                               "device": device, "threads": threads},
        batch_size=batch_size,
        batch_format="numpy",
        compute=ray.data.ActorPoolStrategy(size=workers),
        num_gpus=1 if device == "cuda" else 0,
        num_cpus=threads,
    )
    return sorted(ds.take_all(), key=lambda r: os.fsencode(r["path"]))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pipeline", help='as the CLI takes it: "median k=5 | gaussian sigma=2"')
    ap.add_argument("input", help="folder of images")
    ap.add_argument("-o", "--output", required=True, help="output folder (created if missing)")
    ap.add_argument("--workers", type=int, default=None,
                    help="actors (default: one per GPU, or per --threads CPUs)")
    ap.add_argument("--batch-size", type=int, default=4)
    ap.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    ap.add_argument("--threads", type=int, default=1, help="CPU cores per worker")
    ap.add_argument("--address", default=None, help="Ray cluster (default: a local one)")
    args = ap.parse_args(argv)
    try:
        pixflow.Pipeline(args.pipeline)
    except pixflow.Error as e:
        print(f"ray_batch: {e}", file=sys.stderr)
        return 2
    import ray

    ray.init(address=args.address, ignore_reinit_error=True)
    rows = run(args.pipeline, args.input, args.output, workers=args.workers,
               batch_size=args.batch_size, device=args.device, threads=args.threads)
    failed = [r for r in rows if r["error"]]
    if failed:
        print(f"ray_batch: {len(failed)} of {len(rows)} items failed:", file=sys.stderr)
        for r in failed:
            print(f"  {r['path']}: {r['error']}", file=sys.stderr)
    return 3 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
