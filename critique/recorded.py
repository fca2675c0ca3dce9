"""Recorded critiques of the six practice documents, for the offline `fixture` provider.

`recordings/<document>.json` holds what a critique of that practice document answers: the
structured output of `starter.CRITIQUE_SCHEMA`, written to be a plausible, imperfect review (it
leads with the worst risk on most documents, misses a few items, falls into one constraint trap
and quotes a passage or two that the document does not contain). `recorded_reply` finds the
document in a request by its first line and answers the recording, one annotation a line, so
a streamed reply shows suggestions one at a time. Any other request gets no recorded reply.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from reviews.seed import practice_docs_read

RECORDINGS = Path(__file__).parent / "recordings"


@cache
def _recordings() -> tuple[tuple[str, str], ...]:
    """(the document's first line, the reply) for each practice document with a recording."""
    out = []
    for entry in practice_docs_read():
        path = RECORDINGS / (Path(entry["file"]).stem + ".json")
        if not path.exists():
            continue
        reply = json.loads(path.read_text(encoding="utf-8"))["reply"]
        lines = [json.dumps(item, ensure_ascii=False) for item in reply["annotations"]]
        text = '{"annotations": [\n' + ",\n".join(lines) + "\n]}\n"
        out.append((entry["body"].splitlines()[0].strip(), text))
    return tuple(out)


def recorded_reply(body: Mapping[str, Any]) -> str | None:
    """The recorded critique of the practice document the request's texts contain, if any."""
    texts = [body.get("system") or ""]
    texts += [m.get("content") or "" for m in body.get("messages") or []]
    joined = "\n".join(t for t in texts if isinstance(t, str))
    for first_line, reply in _recordings():
        if first_line and first_line in joined:
            return reply
    return None
