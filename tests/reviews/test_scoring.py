"""The practice scorer on hand-built reviews (no database): a perfect review, an empty one, one
that leads with a minor risk, one that proposes the constraint-breaking fix; the matching rules
one by one; and every shipped answer key against its document."""

import json
from dataclasses import replace
from itertools import count
from typing import Any

import pytest

from reviews.practice.keys import key_from_data
from reviews.practice.scoring import (
    AREAS,
    PARTIAL_CREDIT,
    Key,
    KeyItem,
    Note,
    Submission,
    key_check,
    review_score,
    spans_overlap,
)
from reviews.seed import DATA_DIR, practice_docs_read, practice_key_read

ENTRIES = {entry["file"]: entry for entry in practice_docs_read()}
INFERENCE = ENTRIES["inference-server.md"]
TEXT = INFERENCE["body"]
KEY = key_from_data(
    practice_key_read(INFERENCE), text=TEXT, constraints=tuple(INFERENCE["constraints"])
)
ITEMS = {item.id: item for item in KEY.items}
SWEPT = dict.fromkeys(AREAS, "covered")

_ids = count(1)


def note(kind: str, area: str, *, on: str | None = None, **kwargs: Any) -> Note:
    """An annotation on the passage `on` (a quote of the document), or the whole document."""
    span = None
    if on is not None:
        start = TEXT.index(on)
        span = (start, start + len(on))
    values: dict[str, Any] = {"severity": "major", "body": f"{kind} in {area}"}
    values.update(kwargs)
    return Note(id=next(_ids), kind=kind, area=area, span=span, **values)


def on_item(item_id: str, kind: str | None = None, *, area: str | None = None, **kwargs) -> Note:
    """An annotation exactly on a planted item's passage, in its area (unless told)."""
    item = ITEMS[item_id]
    return note(kind or "risk", area or item.area, on=item.quote, **kwargs)


def perfect_notes() -> list[Note]:
    """What a strong review of the inference-server document says, worst risk first."""
    risks = sorted(
        (i for i in KEY.items if i.kind == "risk"),
        key=lambda i: (i.id != KEY.worst, ["blocker", "major", "minor", "nit"].index(i.severity)),
    )
    notes = [
        on_item(item.id, "risk", rank=rank, severity=item.severity)
        for rank, item in enumerate(risks, start=1)
    ]
    for item in KEY.items:
        if item.kind == "missing":
            notes.append(note("missing", item.area))
        elif item.kind == "already-considered":
            notes.append(on_item(item.id, "already-considered", severity="nit"))
        elif item.kind == "constraint-trap":
            notes.append(on_item(item.id, "constraint", constraint=KEY.constraints[0]))
    notes.append(
        note(
            "alternative",
            "alternatives",
            on="Outputs are kept for 24 hours in Redis",
            tradeoff="Object storage is slower to read back but survives a Redis failover.",
        )
    )
    return notes


# --- the four reviews the acceptance names ------------------------------------------------------


def test_a_perfect_review_finds_everything():
    card = review_score(KEY, Submission(notes=tuple(perfect_notes()), checklist=SWEPT))
    assert card.total == len(KEY.items) == 10
    assert card.found == card.total
    assert card.score == 1.0
    assert all(item.found and item.matched_annotations for item in card.items)
    assert card.led_with_worst
    assert card.lead is not None
    assert card.lead.item == "capacity-shortfall"
    assert card.disagreements == ()
    assert card.respected_constraint
    assert all(not i.trapped_by for i in card.items)
    assert card.alternatives_with_tradeoff == 1
    assert card.noticed_already_considered == 1
    assert card.checklist_swept
    assert card.checklist_unset == ()


def test_an_empty_review_finds_nothing():
    card = review_score(KEY, Submission(notes=(), checklist={}, minutes_taken=3.5))
    assert (card.found, card.total, card.score) == (0, 10, 0.0)
    assert not any(item.found or item.matched_annotations for item in card.items)
    assert not card.led_with_worst
    assert card.lead is None
    assert card.ranking == ()
    assert card.respected_constraint  # nothing proposed, nothing broken
    assert card.alternatives_with_tradeoff == 0
    assert card.noticed_already_considered == 0
    assert not card.checklist_swept
    assert card.checklist_unset == AREAS
    assert card.minutes_taken == 3.5
    # the key's explanations are there to show what was missed
    missed = {item.id: item for item in card.items}
    assert "seven times short" in missed["capacity-shortfall"].explanation


def test_leading_with_a_minor_risk_is_reported_with_the_disagreement():
    notes = [
        on_item("polling-interval", rank=1, severity="major", body="20 ms polling adds latency"),
        on_item("capacity-shortfall", rank=2, severity="major", body="170 vs 1,200 req/s"),
        on_item("outputs-readable-by-id", rank=3, severity="minor"),
    ]
    card = review_score(KEY, Submission(notes=tuple(notes), checklist=SWEPT))
    assert card.found == 3  # every one of them is a real planted risk
    assert not card.led_with_worst
    assert card.lead is not None
    assert card.lead.item == "polling-interval"
    assert [(r.rank, r.item) for r in card.ranking] == [
        (1, "polling-interval"),
        (2, "capacity-shortfall"),
        (3, "outputs-readable-by-id"),
    ]
    pairs = {(d.above, d.below) for d in card.disagreements}
    assert pairs == {
        ("polling-interval", "capacity-shortfall"),
        ("polling-interval", "outputs-readable-by-id"),
    }
    assert card.respected_constraint


def test_proposing_the_constraint_breaking_fix_is_reported():
    breaking = on_item(
        "longest-sequence-trap",
        "alternative",
        area="alternatives",  # a trap is a trap in any area
        body="Switch to continuous batching so finished sequences leave the batch.",
        tradeoff="Needs a runtime that supports it; far better GPU use.",
    )
    card = review_score(KEY, Submission(notes=(breaking,), checklist=SWEPT))
    trap = next(item for item in card.items if item.id == "longest-sequence-trap")
    assert not card.respected_constraint
    assert trap.trapped_by == (breaking.id,)
    assert not trap.found
    assert card.alternatives_with_tradeoff == 0  # a fix that breaks the constraint earns nothing
    assert "continuous batching" in trap.explanation

    # The same passage, critiqued inside the constraint, finds the trap instead.
    inside = on_item(
        "longest-sequence-trap",
        "alternative",
        body="Bucket by predicted output length; generate_batch stays as it is.",
        tradeoff="Needs a length predictor; a wrong guess costs one slow batch.",
        constraint=KEY.constraints[0],
    )
    card = review_score(KEY, Submission(notes=(inside,)))
    trap = next(item for item in card.items if item.id == "longest-sequence-trap")
    assert card.respected_constraint
    assert trap.found
    assert trap.matched_annotations == (inside.id,)
    assert card.alternatives_with_tradeoff == 1


# The alternative a new user wrote in issue #33: inside the constraint, with a tradeoff, and no
# link to the constraint (the form did not offer one for an alternative).
INSIDE_TEXT = (
    "Cap max_tokens per bucket by tier (free 1024, paid 4096) and flush a bucket when it is "
    "full or after 50 ms, without touching generate_batch."
)
INSIDE_TRADEOFF = "Free-tier answers longer than 1024 tokens are cut; batches fill less at night."


def test_an_alternative_that_says_it_keeps_the_constraint_is_not_a_trap():
    inside = on_item(
        "longest-sequence-trap", "alternative", body=INSIDE_TEXT, tradeoff=INSIDE_TRADEOFF
    )
    card = review_score(KEY, Submission(notes=(inside,), checklist=SWEPT))
    trap = next(item for item in card.items if item.id == "longest-sequence-trap")
    assert card.respected_constraint
    assert trap.trapped_by == ()
    assert trap.found and trap.matched_annotations == (inside.id,)
    assert card.alternatives_with_tradeoff == 1

    # Naming the subject is not enough: replacing it breaks the constraint.
    replacing = on_item(
        "longest-sequence-trap",
        "alternative",
        body="Replace generate_batch with continuous batching.",
        tradeoff="A new runtime.",
    )
    card = review_score(KEY, Submission(notes=(replacing,), checklist=SWEPT))
    assert not card.respected_constraint
    assert card.alternatives_with_tradeoff == 0


# --- matching rules -------------------------------------------------------------------------------


def _found(*notes: Note) -> set[str]:
    card = review_score(KEY, Submission(notes=notes))
    return {item.id for item in card.items if item.found}


def test_a_passage_match_needs_overlap_and_the_right_area():
    item = ITEMS["capacity-shortfall"]
    start = TEXT.index(item.quote)
    inside = Note(id=1, kind="risk", area=item.area, severity="major", span=(start + 5, start + 9))
    straddling = replace(inside, id=2, span=(start - 30, start + 1))
    touching = replace(inside, id=3, span=(start - 30, start))  # ends where the quote starts
    wrong_area = replace(inside, id=4, area="observability")
    whole = replace(inside, id=5, span=None)
    assert _found(inside) == _found(straddling) == {"capacity-shortfall"}
    assert _found(touching) == set()
    assert _found(wrong_area) == set()
    assert _found(whole) == set()  # a risk is about a passage
    question = replace(inside, id=6, kind="question")
    assert _found(question) == {"capacity-shortfall"}  # a pointed question counts


def test_missing_items_match_missing_annotations_in_their_area_anywhere():
    whole = note("missing", "rollout-rollback")
    passage = note("missing", "observability", on="watching p99 latency on the existing dashboards")
    assert _found(whole) == {"no-rollback"}
    assert _found(passage) == {"no-serving-metrics"}
    assert _found(note("risk", "rollout-rollback")) == set()  # must be kind `missing`
    assert _found(note("missing", "security")) == set()  # no missing item planted there


def test_already_considered_needs_the_kind_and_re_raising_it_is_not_noticing():
    noticed = on_item("static-batching-considered", "already-considered")
    re_raised = on_item("static-batching-considered", "risk")
    assert review_score(KEY, Submission(notes=(noticed,))).noticed_already_considered == 1
    assert review_score(KEY, Submission(notes=(re_raised,))).noticed_already_considered == 0
    # and an "already considered" note does not find a risk (it says the opposite)
    assert _found(on_item("capacity-shortfall", "already-considered")) == set()


def test_unranked_risks_follow_ranked_ones_by_severity():
    card = review_score(
        KEY,
        Submission(
            notes=(
                on_item("polling-interval", severity="minor"),
                on_item("capacity-shortfall", severity="blocker"),
            )
        ),
    )
    assert card.led_with_worst
    assert [r.item for r in card.ranking] == [
        "capacity-shortfall",
        "polling-interval",
    ]


def test_spans_overlap_is_half_open():
    assert spans_overlap((0, 5), (4, 9))
    assert not spans_overlap((0, 5), (5, 9))
    assert not spans_overlap(None, (0, 1))
    assert not spans_overlap((0, 1), None)


def test_key_check_refuses_a_key_that_would_score_wrongly():
    bad = Key(
        items=(
            KeyItem("a", "risk", "goals", "minor", "x", (0, 1), "", ""),
            KeyItem("b", "risk", "goals", "blocker", "y", None, "", ""),
            KeyItem("c", "missing", "security", "major", "", None, "", ""),
            KeyItem("d", "missing", "security", "minor", "", None, "", ""),
            KeyItem("a", "rumour", "nowhere", "huge", "z", (2, 3), "", ""),
        ),
        worst="a",
    )
    problems = "\n".join(key_check(bad))
    for expected in (
        "item ids repeat",
        "b: its passage is not in the document",
        "two missing items share an area",
        "unknown kind 'rumour'",
        "unknown area 'nowhere'",
        "unknown severity 'huge'",
        "worst 'a' is not the most severe risk",
        "no constraint trap",
    ):
        assert expected in problems


# --- the shipped documents and keys ---------------------------------------------------------------


@pytest.mark.parametrize("entry", list(ENTRIES.values()), ids=list(ENTRIES))
def test_every_practice_document_has_a_sound_key(entry):
    data = practice_key_read(entry)
    text = entry["body"]
    key = key_from_data(data, text=text)
    assert key_check(key) == []
    assert 6 <= len(key.items) <= 12
    assert len(entry["constraints"]) == 1
    kinds = {item.kind for item in key.items}
    assert kinds == {"risk", "missing", "already-considered", "constraint-trap"}
    for item in key.items:
        if item.quote:  # a passage is unambiguous: it occurs once
            assert text.count(item.quote) == 1, item.id
        assert item.explanation.strip()
        assert item.good_comment.strip()
    # a perfect review of this document scores full marks
    notes = []
    for rank, item in enumerate(
        sorted(
            (i for i in key.items if i.kind == "risk"),
            key=lambda i: (i.id != key.worst, ["blocker", "major", "minor"].index(i.severity)),
        ),
        start=1,
    ):
        notes.append(Note(id=rank, kind="risk", area=item.area, severity="major", span=item.span))
    for offset, item in enumerate(key.items, start=100):
        if item.kind == "missing":
            notes.append(
                Note(id=offset, kind="missing", area=item.area, severity="major", span=None)
            )
        elif item.kind == "already-considered":
            notes.append(
                Note(
                    id=offset,
                    kind="already-considered",
                    area=item.area,
                    severity="nit",
                    span=item.span,
                )
            )
        elif item.kind == "constraint-trap":
            notes.append(
                Note(
                    id=offset,
                    kind="constraint",
                    area=item.area,
                    severity="major",
                    span=item.span,
                    constraint=entry["constraints"][0],
                )
            )
    card = review_score(key, Submission(notes=tuple(notes), checklist=SWEPT))
    assert card.found == card.total
    assert card.led_with_worst
    assert card.respected_constraint


def test_the_documents_are_three_pages_or_more_and_tied_to_their_questions():
    questions = {entry["question"] for entry in ENTRIES.values()}
    assert questions == {
        "llm-inference-api",
        "prompt-playground",
        "checkpoint-distribution",
        "one-to-one-chat",
        "data-platform",
        "ml-config",
    }
    for name, entry in ENTRIES.items():
        body = entry["body"]
        assert len(body.split()) >= 1200, name  # about 3 pages of prose at ~400 words a page
        assert "## Pinned constraint" in body
    assert json.loads((DATA_DIR / "practice_docs.json").read_text())  # the manifest parses


def test_a_risk_on_the_exact_passage_filed_under_another_area_earns_half_credit():
    """The reviewer saw the planted risk (its exact passage) but filed it under another area:
    the scorecard says where it was filed and gives PARTIAL_CREDIT, not a silent miss."""
    item = ITEMS["capacity-shortfall"]
    other = next(area for area in AREAS if area != item.area)
    misfiled = on_item(item.id, "risk", area=other)
    card = review_score(KEY, Submission(notes=(misfiled,)))
    result = next(r for r in card.items if r.id == item.id)
    assert not result.found
    assert result.partial
    assert result.misfiled == (misfiled.id,)
    assert result.misfiled_areas == (other,)
    assert result.credit == PARTIAL_CREDIT == 0.5
    assert (card.found, card.partial, card.credit) == (0, 1, 0.5)
    assert card.score == pytest.approx(0.5 / card.total)
    # The ranking still knows which planted risk it is.
    assert card.ranking[0].item == item.id

    # Filed in its own area as well: a whole item, and the misfiled one is still named.
    right = on_item(item.id, "risk")
    both = review_score(KEY, Submission(notes=(misfiled, right)))
    result = next(r for r in both.items if r.id == item.id)
    assert result.found and not result.partial
    assert result.credit == 1.0
    assert result.misfiled == (misfiled.id,)
    assert (both.found, both.partial, both.credit) == (1, 0, 1.0)


def test_partial_credit_needs_the_passage_and_the_kind_and_not_for_missing_items():
    item = ITEMS["capacity-shortfall"]
    other = next(area for area in AREAS if area != item.area)
    elsewhere = note("risk", other, on="Outputs are kept for 24 hours in Redis")
    handled = on_item(item.id, "already-considered", area=other)  # says the opposite
    card = review_score(KEY, Submission(notes=(elsewhere, handled)))
    assert next(r for r in card.items if r.id == item.id).credit == 0.0
    missing = next(i for i in KEY.items if i.kind == "missing")
    wrong = note("missing", next(a for a in AREAS if a != missing.area))
    card = review_score(KEY, Submission(notes=(wrong,)))
    result = next(r for r in card.items if r.id == missing.id)
    assert (result.found, result.partial, result.credit) == (False, False, 0.0)
