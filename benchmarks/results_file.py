"""Writing a benchmark's table into ``RESULTS.md`` between its own markers, leaving the rest
of the file (other benchmarks, prose) untouched."""
from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path


def write_block(path: str | Path, name: str, heading: str, markdown: str) -> None:
    """Replace the block ``<!-- NAME:begin -->..<!-- NAME:end -->`` of ``path`` with
    ``markdown``, or append it under ``heading`` when the file has no such block."""
    path = Path(path)
    text = path.read_text() if path.exists() else "# Benchmark results\n"
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    block = f"{begin}\n{markdown}{end}"
    if begin in text and end in text:
        text = text[: text.index(begin)] + block + text[text.index(end) + len(end):]
    else:
        text = text.rstrip() + f"\n\n## {heading}\n\n" + block + "\n"
    path.write_text(text)


def commit() -> str:
    """The short hash of the checked-out commit (``unknown`` outside a git checkout)."""
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              cwd=os.path.dirname(__file__)).stdout.strip() or "unknown"
    except OSError:
        return "unknown"


def run_meta(**extra) -> dict:
    """When, at which commit and on what machine a benchmark ran (plus ``extra``)."""
    import platform

    import torch

    return {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "commit": commit(),
            "cpu": platform.processor() or platform.machine(), "cores": os.cpu_count(), "torch": torch.__version__,
            "cuda": torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none", **extra}


def publish(markdown: str, out: str | None, name: str, heading: str) -> int:
    """Print a benchmark's table and, with ``out``, write it as block ``name`` of that file."""
    print(markdown)
    if out:
        write_block(out, name, heading, markdown)
    return 0
