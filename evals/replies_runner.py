"""Scoring replies produced elsewhere: ``--model replies:FILE.jsonl``.

The file holds one JSON object per line, ``{"id": SAMPLE_ID, "turn": K, "reply": TEXT}``,
one per sample and turn of the protocol's conversation (turn 0 is the first question; the
sample id is the one in results.json, ``task:seed:index``). The runner answers each request
from the file, so the harness reads, scores and reports these replies exactly like a model's
own. Its ``identity`` is a digest of the file's contents: another file of the same name never
reuses cached replies.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from engine.errors import UserError
from engine.protocol import Request


def read_replies(path: str | Path) -> dict[tuple[str, int], str]:
    """The replies of a JSON-lines file as ``{(sample id, turn): reply}``; a one-line
    :class:`UserError` naming the file and line for one that is not such an object, or that
    gives one sample's turn two different replies."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise UserError(f"--model replies:{path}: cannot read it: {getattr(e, 'strerror', None) or e}") from None
    out: dict[tuple[str, int], str] = {}
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            rec = None
        ok = (isinstance(rec, dict) and isinstance(rec.get("id"), str) and isinstance(rec.get("reply"), str)
              and type(rec.get("turn", 0)) is int and rec.get("turn", 0) >= 0)
        if not ok:
            raise UserError(f"--model replies:{path}: line {n} is not an object "
                            '{"id": sample id, "turn": integer >= 0, "reply": text}')
        key = (rec["id"], rec.get("turn", 0))
        if out.get(key, rec["reply"]) != rec["reply"]:
            raise UserError(f"--model replies:{path}: line {n} gives {key[0]!r} turn {key[1]} a second, "
                            "different reply")
        out[key] = rec["reply"]
    return out


class RepliesRunner:
    """Answers every request with the reply the file gives for its sample id and turn;
    ``identity``: a sha256 of the file's bytes."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.replies = read_replies(self.path)
        self.name = f"replies:{self.path.stem}"
        self.identity = "replies " + hashlib.sha256(self.path.read_bytes()).hexdigest()
        self.source = {"replies": str(self.path.resolve()), "sha256": self.identity.split()[1],
                       "lines": len(self.replies)}

    def generate(self, requests: list[Request]) -> list[str]:
        """One reply per request, in order: the file's reply to the request's sample and turn
        (a one-line :class:`UserError` naming the first one the file lacks)."""
        out = []
        for r in requests:
            sample, _, turn = r.id.rpartition("#")
            key = (sample, int(turn))
            if key not in self.replies:
                raise UserError(f"--model replies:{self.path}: no reply for sample {sample!r} turn {turn} "
                                f"(the file holds {len(self.replies)} replies)")
            out.append(self.replies[key])
        return out
