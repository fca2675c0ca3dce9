"""Score a submitted review against a practice document's answer key. Pure functions, no Django.

What a strong review does (the pool's "review a design document" round): ranks the risks and
leads with the one that would hurt most, names what is missing, offers alternatives with a
concrete tradeoff, notices what the author already considered, critiques inside the pinned
constraint, and sweeps the eight-area checklist. The scorecard measures each of those.

Matching a planted item (offsets are into the reviewed revision's Markdown source):

- `risk`: an annotation in the item's area whose passage overlaps the item's passage, of any
  kind but `already-considered` (which says the opposite: "this is handled");
- `missing`: an annotation of kind `missing` in the item's area, about the whole document or
  any passage (a key plants at most one missing item per area, so this is unambiguous);
- `already-considered`: an `already-considered` annotation in the item's area overlapping its
  passage;
- `constraint-trap`: found by an annotation in the item's area overlapping the passage that
  works inside the pinned constraint — kind `constraint`, or any kind naming the constraint.
  A note names it by linking it (the form offers the link for every kind) or by saying in one
  sentence that it keeps the constraint's subject ("… without touching generate_batch",
  "generate_batch stays as it is": a code-like term of the constraint and a keeping word,
  `note_names_constraint`). An `alternative` on the passage (any area) that does neither
  proposes the constraint-breaking fix: the reviewer fell into the trap, and the scorecard
  says so.

Filed under another area: an annotation that would find a `risk`, `already-considered` or
`constraint-trap` item — right passage, right kind — but sits in another checklist area is
not silently ignored. The item is "found, but filed under <area>" (`ItemResult.misfiled`,
`misfiled_areas`) and earns PARTIAL_CREDIT (half an item) instead of a whole one: the reviewer
saw the problem but would send the author to the wrong owner. An item found in its own area
earns full credit whatever else is misfiled. `missing` items get no partial credit: a
`missing` note in another area is about something else missing there. `found` counts whole
items; `credit` (and `score`) add the halves. The ranking identifies a risk by its passage,
so a misfiled risk still counts as that risk there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

AREAS = (
    "goals",
    "alternatives",
    "scale-cost",
    "failure-modes",
    "rollout-rollback",
    "observability",
    "security",
    "migration",
)
SEVERITY_ORDER = {"blocker": 0, "major": 1, "minor": 2, "nit": 3}
ITEM_KINDS = ("risk", "missing", "already-considered", "constraint-trap")
# What an item found only under another checklist area earns (a whole item earns 1).
PARTIAL_CREDIT = 0.5

Span = tuple[int, int]


@dataclass(frozen=True)
class KeyItem:
    """One planted item; `span` is where its quote sits in the reviewed revision (None for a
    missing item, or a quote the revision no longer holds)."""

    id: str
    kind: str
    area: str
    severity: str
    quote: str
    span: Span | None
    explanation: str
    good_comment: str


@dataclass(frozen=True)
class Key:
    items: tuple[KeyItem, ...]
    worst: str
    constraints: tuple[str, ...] = ()


@dataclass(frozen=True)
class Note:
    """One annotation of the review, reduced to what scoring reads. `span` None = whole doc."""

    id: int
    kind: str
    area: str
    severity: str
    span: Span | None
    rank: int | None = None
    body: str = ""
    tradeoff: str = ""
    constraint: str = ""


@dataclass(frozen=True)
class Submission:
    """A review as the scorer sees it: annotations, checklist statuses per area, and timing."""

    notes: tuple[Note, ...]
    checklist: dict[str, str] = field(default_factory=dict)
    minutes_taken: float | None = None


@dataclass(frozen=True)
class ItemResult:
    id: str
    kind: str
    area: str
    severity: str
    quote: str
    found: bool
    matched_annotations: tuple[int, ...]
    explanation: str
    good_comment: str
    trapped_by: tuple[int, ...] = ()  # alternatives that broke the pinned constraint here
    # Annotations that found it but are filed under another area, and those areas.
    misfiled: tuple[int, ...] = ()
    misfiled_areas: tuple[str, ...] = ()

    @property
    def partial(self) -> bool:
        """Found only under another area ("found, but filed under …")."""
        return not self.found and bool(self.misfiled) and not self.trapped_by

    @property
    def credit(self) -> float:
        """1 for a found item, PARTIAL_CREDIT for one found only under another area, else 0."""
        if self.found:
            return 1.0
        return PARTIAL_CREDIT if self.partial else 0.0


@dataclass(frozen=True)
class RankedRisk:
    """One of the reviewer's risks in their order, with the planted risk it matched."""

    annotation: int
    rank: int  # 1-based position in the reviewer's order
    severity: str
    body: str
    item: str | None  # the planted item it matched, if any
    item_severity: str | None


@dataclass(frozen=True)
class Disagreement:
    """The reviewer put `above` before `below`, but the key rates `below` as worse."""

    above: str
    above_severity: str
    below: str
    below_severity: str


@dataclass(frozen=True)
class Scorecard:
    items: tuple[ItemResult, ...]
    found: int
    total: int
    led_with_worst: bool
    worst: str
    lead: RankedRisk | None
    ranking: tuple[RankedRisk, ...]
    disagreements: tuple[Disagreement, ...]
    alternatives_with_tradeoff: int
    noticed_already_considered: int
    respected_constraint: bool
    checklist_swept: bool
    checklist_unset: tuple[str, ...]
    minutes_taken: float | None
    partial: int = 0  # items found only under another area
    credit: float = 0.0  # found + PARTIAL_CREDIT × partial

    @property
    def score(self) -> float:
        """Share of the planted items' credit earned, 0–1 (a misfiled item counts half)."""
        return self.credit / self.total if self.total else 0.0


def spans_overlap(a: Span | None, b: Span | None) -> bool:
    """Half-open spans share at least one character."""
    if a is None or b is None:
        return False
    return a[0] < b[1] and b[0] < a[1]


def quote_span(text: str, quote: str) -> Span | None:
    """Where `quote` first occurs in `text` (None if it does not, or for an empty quote)."""
    if not quote:
        return None
    at = text.find(quote)
    return None if at < 0 else (at, at + len(quote))


# A constraint's subject: its code-like terms (`generate_batch`, `/s/{token}`).
_SUBJECT = re.compile(r"[A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]+|/[A-Za-z0-9_/{}.-]+")
# Words saying a fix leaves that subject as it is.
_KEEPS = re.compile(
    r"\b(?:without (?:touching|changing|modifying|altering|replacing)|within|inside|"
    r"keeps?|keeping|kept|stays?|staying|untouched|unchanged|as (?:it )?is|"
    r"respects?|respecting)\b",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"(?<=[.;!?])\s+|\n+")


def note_names_constraint(note: Note, constraints: tuple[str, ...] = ()) -> bool:
    """Does this note name a pinned constraint: linked to it, or saying in one sentence that it
    keeps the constraint's subject ("cap max_tokens per bucket … without touching
    generate_batch")? A constraint with no code-like term can only be linked."""
    if note.constraint:
        return True
    subjects = {term for text in constraints for term in _SUBJECT.findall(text)}
    if not subjects:
        return False
    for sentence in _SENTENCE_END.split(f"{note.body}\n{note.tradeoff}"):
        if _KEEPS.search(sentence) and any(term in sentence for term in subjects):
            return True
    return False


def _falls_into_trap(item: KeyItem, note: Note, constraints: tuple[str, ...] = ()) -> bool:
    return (
        item.kind == "constraint-trap"
        and note.kind == "alternative"
        and spans_overlap(item.span, note.span)
        and not note_names_constraint(note, constraints)
    )


def note_matches(item: KeyItem, note: Note, constraints: tuple[str, ...] = ()) -> bool:
    """Does this annotation find this planted item? (The rules are in the module docstring.)"""
    if note.area != item.area:
        return False
    return _matches_ignoring_area(item, note, constraints)


def note_misfiled(item: KeyItem, note: Note, constraints: tuple[str, ...] = ()) -> bool:
    """Would this annotation find this passage item, were it filed under the item's area?"""
    return (
        note.area != item.area
        and item.kind != "missing"
        and _matches_ignoring_area(item, note, constraints)
    )


def _matches_ignoring_area(item: KeyItem, note: Note, constraints: tuple[str, ...]) -> bool:
    if item.kind == "missing":
        return note.kind == "missing"
    if not spans_overlap(item.span, note.span):
        return False
    if item.kind == "risk":
        return note.kind != "already-considered"
    if item.kind == "already-considered":
        return note.kind == "already-considered"
    if item.kind == "constraint-trap":
        return note.kind == "constraint" or note_names_constraint(note, constraints)
    return False


def item_score(
    item: KeyItem, notes: tuple[Note, ...], constraints: tuple[str, ...] = ()
) -> ItemResult:
    trapped = tuple(n.id for n in notes if _falls_into_trap(item, n, constraints))
    matched = tuple(n.id for n in notes if note_matches(item, n, constraints))
    misfiled = tuple(n for n in notes if note_misfiled(item, n, constraints))
    return ItemResult(
        id=item.id,
        kind=item.kind,
        area=item.area,
        severity=item.severity,
        quote=item.quote,
        found=bool(matched) and not trapped,
        matched_annotations=matched,
        explanation=item.explanation,
        good_comment=item.good_comment,
        trapped_by=trapped,
        misfiled=tuple(n.id for n in misfiled),
        misfiled_areas=tuple(dict.fromkeys(n.area for n in misfiled)),
    )


def risks_in_order(notes: tuple[Note, ...]) -> list[Note]:
    """The review's risks as it presents them: rank 1 first, unranked after by severity."""
    risks = [n for n in notes if n.kind == "risk"]
    return sorted(
        risks,
        key=lambda n: (
            n.rank is None,
            n.rank or 0,
            SEVERITY_ORDER.get(n.severity, 99),
            n.id,
        ),
    )


def ranking_compare(
    key: Key, notes: tuple[Note, ...]
) -> tuple[tuple[RankedRisk, ...], tuple[Disagreement, ...]]:
    """The reviewer's risks in order, each with the planted risk it matched; and every pair of
    matched risks the reviewer ordered against the key's severities (the worst counts as worse
    than any other blocker)."""
    planted = {item.id: item for item in key.items if item.kind == "risk"}
    ranking: list[RankedRisk] = []
    for position, note in enumerate(risks_in_order(notes), start=1):
        item = next((i for i in planted.values() if note_matches(i, note)), None) or next(
            (i for i in planted.values() if note_misfiled(i, note)), None
        )
        ranking.append(
            RankedRisk(
                annotation=note.id,
                rank=position,
                severity=note.severity,
                body=note.body,
                item=item.id if item else None,
                item_severity=item.severity if item else None,
            )
        )

    def weight(item_id: str) -> tuple[int, int]:
        return (SEVERITY_ORDER.get(planted[item_id].severity, 99), 0 if item_id == key.worst else 1)

    seen: list[str] = []
    for risk in ranking:
        if risk.item is not None and risk.item not in seen:
            seen.append(risk.item)
    disagreements = tuple(
        Disagreement(
            above=above,
            above_severity=planted[above].severity,
            below=below,
            below_severity=planted[below].severity,
        )
        for index, above in enumerate(seen)
        for below in seen[index + 1 :]
        if weight(below) < weight(above)
    )
    return tuple(ranking), disagreements


def review_score(key: Key, submission: Submission) -> Scorecard:
    """The scorecard of one submitted review against the document's key."""
    notes = submission.notes
    results = tuple(item_score(item, notes, key.constraints) for item in key.items)
    ranking, disagreements = ranking_compare(key, notes)
    lead = ranking[0] if ranking else None
    trap_ids = {n for result in results for n in result.trapped_by}
    unset = tuple(area for area in AREAS if not submission.checklist.get(area))
    return Scorecard(
        items=results,
        found=sum(1 for r in results if r.found),
        partial=sum(1 for r in results if r.partial),
        credit=sum(r.credit for r in results),
        total=len(results),
        led_with_worst=lead is not None and lead.item == key.worst,
        worst=key.worst,
        lead=lead,
        ranking=ranking,
        disagreements=disagreements,
        alternatives_with_tradeoff=sum(
            1
            for n in notes
            if n.kind == "alternative" and n.tradeoff.strip() and n.id not in trap_ids
        ),
        noticed_already_considered=sum(
            1 for r in results if r.kind == "already-considered" and r.found
        ),
        respected_constraint=not trap_ids,
        checklist_swept=not unset,
        checklist_unset=unset,
        minutes_taken=submission.minutes_taken,
    )


def key_check(key: Key) -> list[str]:
    """What is wrong with a key (empty when it is sound): the loader refuses a bad key."""
    problems = []
    ids = [item.id for item in key.items]
    if len(set(ids)) != len(ids):
        problems.append("item ids repeat")
    for item in key.items:
        if item.kind not in ITEM_KINDS:
            problems.append(f"{item.id}: unknown kind {item.kind!r}")
        if item.area not in AREAS:
            problems.append(f"{item.id}: unknown area {item.area!r}")
        if item.severity not in SEVERITY_ORDER:
            problems.append(f"{item.id}: unknown severity {item.severity!r}")
        if item.kind == "missing" and item.quote:
            problems.append(f"{item.id}: a missing item has no passage")
        if item.kind != "missing" and item.span is None:
            problems.append(f"{item.id}: its passage is not in the document")
    missing_areas = [item.area for item in key.items if item.kind == "missing"]
    if len(set(missing_areas)) != len(missing_areas):
        problems.append("two missing items share an area (one annotation would find both)")
    worst = next((item for item in key.items if item.id == key.worst), None)
    if worst is None or worst.kind != "risk":
        problems.append(f"worst {key.worst!r} is not a planted risk")
    elif any(
        SEVERITY_ORDER[i.severity] < SEVERITY_ORDER[worst.severity]
        for i in key.items
        if i.kind == "risk"
    ):
        problems.append(f"worst {key.worst!r} is not the most severe risk")
    if not any(item.kind == "constraint-trap" for item in key.items):
        problems.append("no constraint trap")
    return problems
