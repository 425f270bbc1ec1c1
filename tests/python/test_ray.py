"""examples/ray_batch.py on a local Ray instance (2 CPUs): the CLI's pixels, per-item errors.

Marked `ray` (about 20 s, most of it Ray starting): `-m "not ray"` deselects it.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from conftest import random_image, require

import pixflow

ray = require("ray")

pytestmark = pytest.mark.ray

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
PIPELINE = "median k=3 | gaussian sigma=1.5 border=reflect | dilate k=3"


def _example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("ray_batch", EXAMPLES / "ray_batch.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["ray_batch"] = mod  # the actors unpickle PixflowWorker from this module
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def ray_batch() -> ModuleType:
    """The example, with a local Ray instance whose workers import it and this pixflow."""
    path = [str(EXAMPLES)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    # Workers run from Ray's own folder: the build's package must be found by absolute path.
    path += [os.path.dirname(os.path.dirname(os.path.abspath(pixflow.__file__)))]
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(path)
    ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR")
    try:
        yield _example()
    finally:
        ray.shutdown()
        if old is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = old


def _folder(root: Path) -> Path:
    """30 PNGs (gray and RGB, u8 and u16, sizes from 1 x 1 up) and one corrupt PNG."""
    src = root / "in"
    src.mkdir()
    for i in range(30):
        h, w = (1, 1) if i == 0 else (17 + 7 * i, 90 - 2 * i)
        img = random_image(h, w, (1, 3, 4)[i % 3], "u16" if i % 5 == 4 else "u8", seed=i)
        pixflow.write_image(src / f"img{i:02d}.png", img)
    (src / "bad.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(200)))
    (src / "notes.txt").write_text("not an image: skipped by both")
    return src


def test_ray_batch_matches_cli(ray_batch: ModuleType, cli: str, tmp_path: Path) -> None:
    src = _folder(tmp_path)
    rows = ray_batch.run(PIPELINE, src, tmp_path / "ray", workers=2, batch_size=4)

    cli_out = tmp_path / "cli"
    done = subprocess.run([cli, "run", PIPELINE, str(src), "-o", str(cli_out), "--keep-going",
                           "--backend", "cpu", "--progress=none"], capture_output=True, text=True)
    assert done.returncode == 3, done.stderr  # 3: some items failed
    assert "1 of 31 items failed" in done.stderr and "bad.png" in done.stderr

    assert [r["path"] for r in rows] == [str(src / n) for n in sorted(os.listdir(src))
                                         if n.endswith(".png")]
    failed = {Path(r["path"]).name: r["error"] for r in rows if r["error"]}
    assert list(failed) == ["bad.png"]
    assert failed["bad.png"].startswith("IoError: ") and "bad.png" in failed["bad.png"]
    assert sorted(os.listdir(tmp_path / "ray")) == sorted(os.listdir(cli_out))
    assert len(os.listdir(cli_out)) == 30
    for r in rows:
        if r["error"]:
            assert r["output"] == ""
            continue
        name = Path(r["path"]).name
        assert r["output"] == str(tmp_path / "ray" / name)
        got, want = pixflow.read_image(r["output"]), pixflow.read_image(cli_out / name)
        assert got.dtype == want.dtype and np.array_equal(got, want), name


def test_ray_batch_main_exit_codes(ray_batch: ModuleType, tmp_path: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "in"
    src.mkdir()
    pixflow.write_image(src / "a.png", random_image(20, 30, 3, "u8"))
    (src / "b.png").write_bytes(b"not a png")
    assert ray_batch.main([PIPELINE, str(src), "-o", str(tmp_path / "o")]) == 3
    err = capsys.readouterr().err
    assert "1 of 2 items failed" in err and "b.png" in err
    assert os.listdir(tmp_path / "o") == ["a.png"]
    assert ray_batch.main(["median k=4", str(src), "-o", str(tmp_path / "o")]) == 2
    assert "median: k" in capsys.readouterr().err


def test_read_images_fails_on_one_corrupt_file(ray_batch: ModuleType, tmp_path: Path) -> None:
    """Why the example does not use ray.data.read_images: the corrupt file fails the job."""
    src = tmp_path / "in"
    src.mkdir()
    pixflow.write_image(src / "a.png", random_image(20, 30, 3, "u8"))
    (src / "b.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(100))
    with pytest.raises(Exception, match="b.png"):
        ray.data.read_images(str(src)).take_all()
