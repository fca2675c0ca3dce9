"""Answer keys as the scorer sees them (`scoring.Key`), from the data files or the database.

Passages are stored as quotes; their offsets are found in the reviewed revision's text when a
key is built, so matching works on the same source offsets as annotations.
"""

from typing import Any

from .models import AnswerKey
from .scoring import Key, KeyItem, quote_span


def key_from_data(data: dict[str, Any], *, text: str, constraints: tuple[str, ...] = ()) -> Key:
    """A key from its JSON form (`reviews/data/*.key.json`), located in `text`."""
    return Key(
        items=tuple(
            KeyItem(
                id=item["id"],
                kind=item["kind"],
                area=item["area"],
                severity=item["severity"],
                quote=item["quote"],
                span=quote_span(text, item["quote"]),
                explanation=item["explanation"],
                good_comment=item["good_comment"],
            )
            for item in data["items"]
        ),
        worst=data["worst"],
        constraints=constraints,
    )


def key_from_model(key: AnswerKey, *, text: str) -> Key:
    """A stored key (its items prefetched or loaded here), located in `text`."""
    return Key(
        items=tuple(
            KeyItem(
                id=item.slug,
                kind=item.kind,
                area=item.area,
                severity=item.severity,
                quote=item.quote,
                span=quote_span(text, item.quote),
                explanation=item.explanation,
                good_comment=item.good_comment,
            )
            for item in key.items.all()
        ),
        worst=key.worst,
        constraints=tuple(key.doc.constraints),
    )
