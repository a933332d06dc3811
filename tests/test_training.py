"""The README's training example runs as written and learns ``shapes/same_shape`` from a
stream to well above chance on held-out samples."""
import re
import time
from pathlib import Path

import torch

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()


def _training_block() -> str:
    """The README's python block that trains on a stream (the one holding ``accuracy =``)."""
    blocks = [b for b in re.findall(r"```python\n(.*?)```", README, flags=re.S) if "accuracy = " in b]
    assert len(blocks) == 1, f"expected one training example in the README, found {len(blocks)}"
    return blocks[0]


def test_the_readme_training_example_learns_a_shapes_task():
    code = _training_block()
    assert "stream(" in code and "label" in code
    scope: dict = {}
    threads, start = torch.get_num_threads(), time.perf_counter()
    try:
        exec(compile(code, "README.md (training example)", "exec"), scope)
    finally:
        torch.set_num_threads(threads)                 # the example's threads=1 is for its own process
    seconds = time.perf_counter() - start
    accuracy = float(scope["accuracy"])
    assert accuracy >= 0.75, f"held-out accuracy {accuracy:.3f}; chance is 0.5"
    assert seconds < 120, f"the example took {seconds:.0f} s"
