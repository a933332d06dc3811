"""Reading KiVA replies: the first option named in parentheses decides."""
from __future__ import annotations

import re

from engine.replies import Parsed


def read_choice(reply, sample) -> Parsed:
    """The family's reader: the first "(A)".."(D)" in the reply decides (else the first
    standalone letter A-D)."""
    text = reply if isinstance(reply, str) else ""
    m = re.search(r"\(([A-Da-d])\)", text)
    if m:
        value = f"({m.group(1).upper()})"
        return Parsed(value, text.strip() == value)
    m = re.search(r"(?<![A-Za-z])([A-D])(?![A-Za-z])", text)
    return Parsed(f"({m.group(1)})" if m else None, False)
