"""Shared fixtures of the Python tests: random images of awkward sizes and the CLI."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import pixflow

DTYPES = {"u8": np.uint8, "u16": np.uint16, "s16": np.int16, "s32": np.int32, "f32": np.float32}


def random_image(h: int, w: int, c: int, depth: str, seed: int = 0) -> np.ndarray:
    """Random pixels over the depth's range (f32 in [0, 1)), H x W for c == 1."""
    rng = np.random.default_rng(seed)
    dt = DTYPES[depth]
    if depth == "f32":
        a = rng.random((h, w, c), dtype=np.float32)
    else:
        info = np.iinfo(dt)
        a = rng.integers(info.min, info.max, size=(h, w, c), endpoint=True, dtype=dt)
    return a[:, :, 0] if c == 1 else a


def pytest_configure(config: pytest.Config) -> None:
    # Run by default; `-m "not ray"` leaves out the tests that start a local Ray instance.
    config.addinivalue_line("markers", "ray: starts a local Ray instance (deselect: -m 'not ray')")


def require(module: str):
    """Imports `module` for a test file. Under ctest (`make test`, PIXFLOW_PYTEST_STRICT=1)
    a missing module fails the run: scripts/install-deps.sh installs every one. Elsewhere (the
    GPU machine, which has no Dask or Ray and no internet) the file is skipped, saying so."""
    if os.environ.get("PIXFLOW_PYTEST_STRICT") == "1":
        import importlib

        return importlib.import_module(module)
    return pytest.importorskip(module, reason=f"{module} is not installed")


@pytest.fixture(scope="session")
def cli() -> str:
    """The pixflow CLI of the build under test (PIXFLOW_CLI), else the one on PATH."""
    exe = os.environ.get("PIXFLOW_CLI") or shutil.which("pixflow")
    if not exe:
        pytest.fail("no pixflow CLI: set PIXFLOW_CLI (ctest does) or put pixflow on PATH")
    return exe


def run_cli(cli: str, pipeline: str, src: np.ndarray, tmp: Path) -> np.ndarray:
    """The CLI's result for `pipeline` on `src`, through .npy files (no codec in between)."""
    inp, out = tmp / "in.npy", tmp / "out.npy"
    np.save(inp, np.ascontiguousarray(src))
    subprocess.run([cli, "run", pipeline, str(inp), "-o", str(out), "--backend", "cpu"],
                   check=True, capture_output=True, text=True)
    return np.load(out)


@pytest.fixture
def images():
    return random_image


__all__ = ["pixflow", "random_image", "run_cli", "require", "DTYPES"]
