"""The built-in starter critique prompt and the structured output it asks for.

A critique prompt is an ordinary playground version. It may declare any of the variables
`document` (the revision's Markdown), `constraints` (the pinned constraints, one a line) and
`checklist` (the eight areas); a draft fills the ones it declares. The starter asks for
`CRITIQUE_SCHEMA` as its response format, so Anthropic and OpenAI answer with exactly that JSON.
"""

from __future__ import annotations

from typing import Any

from reviews.models import Annotation, Area

AREA_NOTES = {
    "goals": "are the goals concrete and testable; are non-goals stated",
    "alternatives": "which alternatives were weighed, and is the choice argued",
    "scale-cost": "do the numbers add up; what does it cost at the stated scale",
    "failure-modes": "what breaks, what is lost, how it recovers",
    "rollout-rollback": "how it ships, what stops a step, how it goes back",
    "observability": "how anyone will know it works, or does not",
    "security": "who can read or change what; abuse; secrets",
    "migration": "how existing data and users move over",
}

CHECKLIST_TEXT = "\n".join(f"- {area}: {note}" for area, note in AREA_NOTES.items())
NO_CONSTRAINTS = "None pinned."

CRITIQUE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["annotations"],
    "properties": {
        "annotations": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": [
                    "quote",
                    "area",
                    "kind",
                    "severity",
                    "body",
                    "tradeoff",
                    "constraint",
                    "rank",
                ],
                "properties": {
                    "quote": {
                        "type": "string",
                        "description": "The passage, copied verbatim from the document; empty"
                        " for a comment on the whole document (a missing item).",
                    },
                    "area": {"type": "string", "enum": list(Area.values)},
                    "kind": {"type": "string", "enum": list(Annotation.Kind.values)},
                    "severity": {"type": "string", "enum": list(Annotation.Severity.values)},
                    "body": {"type": "string"},
                    "tradeoff": {
                        "type": "string",
                        "description": "For an alternative: what it costs. Otherwise empty.",
                    },
                    "constraint": {
                        "type": "string",
                        "description": "The pinned constraint this critique works within,"
                        " copied exactly; empty when none applies.",
                    },
                    "rank": {
                        "anyOf": [{"type": "integer"}, {"type": "null"}],
                        "description": "Risks only: 1 is the worst. Null for other kinds.",
                    },
                },
            },
        }
    },
}

SYSTEM = """\
You are a senior engineer reviewing a design document in a review thread. Review it the way
the strongest reviewer on the team would:

- Rank the risks and lead with the one that would hurt most (rank 1). A risk needs a concrete
  consequence, ideally with the document's own numbers.
- Name what is missing (kind "missing", empty quote): a plan, a failure story, a metric, a
  migration the document never mentions.
- Offer alternatives with their tradeoff, and critique inside the pinned constraints: a fix
  that breaks a pinned constraint is wrong, however tempting. When a critique is shaped by a
  constraint, copy that constraint into "constraint".
- Notice what the author already considered (kind "already-considered") instead of proposing
  it again.
- Sweep the checklist areas; file each comment under the area whose owner must act on it.

Quote passages exactly as they appear in the document (copy, do not paraphrase): a quote
that does not occur in the document cannot be attached to it. Be brief: one to three
sentences per comment."""

USER = """\
<document>
{{document}}
</document>

Pinned constraints:
{{constraints}}

Checklist areas:
{{checklist}}

Answer with the JSON object the response format describes: the annotations, worst risk first."""


def starter_content() -> dict[str, Any]:
    """The starter version's content (validated by the playground when it is saved)."""
    return {
        "provider": "anthropic",
        "model": "claude-sonnet-4-6",
        "system": SYSTEM,
        "messages": [{"role": "user", "content": USER}],
        "params": {"temperature": 0.2, "max_tokens": 8000, "top_p": None, "stop": []},
        "tools": [],
        "response_format": {"name": "critique", "schema": CRITIQUE_SCHEMA},
        "variables": {
            "document": "(the design document's Markdown)",
            "constraints": NO_CONSTRAINTS,
            "checklist": CHECKLIST_TEXT,
        },
    }


STARTER_TITLE = "Starter critique prompt"


def constraints_text(constraints: list[str]) -> str:
    return "\n".join(f"- {c}" for c in constraints) if constraints else NO_CONSTRAINTS


def critique_variables(*, text: str, constraints: list[str]) -> dict[str, str]:
    """Every variable a critique prompt may declare, for one revision."""
    return {
        "document": text,
        "constraints": constraints_text(constraints),
        "checklist": CHECKLIST_TEXT,
    }
