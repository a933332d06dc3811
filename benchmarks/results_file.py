"""Writing a benchmark's table into ``RESULTS.md`` between its own markers, leaving the rest
of the file (other benchmarks, prose) untouched."""
from __future__ import annotations

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
