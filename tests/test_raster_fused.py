"""The fused per-tile pass (kernels/raster_triton.py) draws what the tiled torch path and the
numba renderer draw. Needs Triton: on a CPU machine it runs interpreted (in a subprocess, since
the interpreter is chosen when the kernels are defined); on a GPU machine on CUDA."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

triton = pytest.importorskip("triton")
ROOT = Path(__file__).resolve().parents[1]


def _check(result: dict) -> None:
    assert result["tiled"] <= 1, result          # the same formulas, summed in the same order
    assert result["numba"] <= 2, result          # the renderers' parity bound
    assert result["drawn"] > 0.2, result         # the scenes are not blank


def _version(v: str) -> tuple:
    return tuple(int(x) for x in v.split("+")[0].split(".")[:2])


@pytest.mark.skipif(_version(triton.__version__) < (3, 9),
                    reason="Triton's interpreter before 3.9 (3.6 checked) hands loaded loop bounds over as 1-element "
                           "arrays, which numpy 2 refuses as indices; the CUDA test checks the kernel there")
def test_fused_pass_matches_the_tiled_path_interpreted_on_the_cpu():
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": os.pathsep.join([str(ROOT), *sys.path])}
    env.pop("PROCVIS_FUSED", None)
    out = subprocess.run([sys.executable, str(ROOT / "tests" / "fused_check.py"), "cpu"], env=env, cwd=ROOT,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    _check(json.loads(out.stdout.strip().splitlines()[-1]))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_fused_pass_matches_the_tiled_path_on_cuda():
    from tests.fused_check import main
    _check(main("cuda"))
