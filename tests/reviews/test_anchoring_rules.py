"""Re-anchoring rules added for issue #36, each on a small text of its own that reproduces the
failure it fixes (docs/design.md, "Re-anchoring"). The engine orphaned every one of these passages
although the revision kept them; the guards check the same rules never attach a passage that
went to a look-alike."""

from __future__ import annotations

from reviews.anchoring import Anchor, anchor_locate, selector_from_position


def _land(old: str, new: str, quote: str, *, after: str = "") -> tuple[Anchor, str]:
    start = old.index(quote, old.index(after) if after else 0)
    selector = selector_from_position(text=old, start=start, end=start + len(quote))
    anchor = anchor_locate(selector=selector, old_text=old, new_text=new)
    landed = "" if anchor.start is None else new[anchor.start : anchor.end]
    return anchor, landed


BULLET = "- The ingress controller retries after {} seconds when the API server is {}.\n"


def _retries(*bullets: tuple[str, str]) -> str:
    return (
        "## The ingress controller\n\n### Retries\n\n"
        + "".join(BULLET.format(*b) for b in bullets)
        + "\n## Open questions\n\nNone yet.\n"
    )


def test_a_bullet_the_diff_keeps_is_not_orphaned_by_twin_bullets_kept_from_their_own() -> None:
    # Both neighbours of the annotated bullet's quote were edited, so its verbatim context is
    # no longer than that of the next bullet, a twin; but the diff keeps that twin from its own
    # old bullet, so it is that bullet, and the copy the diff keeps in place is the passage.
    old = _retries(("3", "unavailable"), ("5", "unavailable"), ("7", "unavailable"))
    new = _retries(("3", "unavailable or slow"), ("at most 5", "unavailable"), ("7", "unavailable"))
    quote = "The ingress controller retries"
    second = old.index("- The", old.index("after 3")) + 2
    selector = selector_from_position(text=old, start=second, end=second + len(quote))
    anchor = anchor_locate(selector=selector, old_text=old, new_text=new)
    assert anchor.status == "exact", anchor
    assert anchor.start == new.index("- The", new.index("or slow")) + 2


def _component(name: str, attempts: int) -> str:
    return (
        f"## The {name}\n\n### Drawbacks\n\n"
        f"This adds a field to the {name} API. Operators who never set the field see no change "
        f"in the {name}.\n\n### Retries\n\n"
        f"- The {name} gives up after {attempts} attempts when the API server is unavailable.\n"
        f"- The {name} retries after {attempts + 1} seconds when the API server is unavailable.\n\n"
    )


def _kep(*sections: str) -> str:
    return "# KEP-7: Structured fields\n\n" + "".join(sections)


def test_boilerplate_of_a_deleted_section_does_not_land_in_the_section_put_in_its_place() -> None:
    # The diff aligns the deleted section's boilerplate with the new section's; its other
    # copies are kept from their own sections. The passage went: orphaned, not re-homed.
    old = _kep(_component("scheduler", 3), _component("kubelet", 5), _component("DNS add-on", 7))
    new = _kep(_component("scheduler", 3), _component("CSI driver", 5), _component("DNS add-on", 7))
    quote = "who never set the field see no change in the"
    anchor, landed = _land(old, new, quote, after="## The kubelet")
    assert anchor.status == "orphaned", (anchor, landed)


def test_a_section_moved_below_another_keeps_its_bullets_by_their_unique_lines() -> None:
    # The scheduler's section moved to the end while a new section built from the same
    # boilerplate (the same figures, another component) took its place: the bullet's phrase
    # now occurs in both, and the diff pairs the moved lines with the new section's twins.
    # The bullet's whole line occurs once in each text: that places the passage on it.
    sections = [_component(n, a) for n, a in [("scheduler", 3), ("kubelet", 5), ("CSI driver", 7)]]
    old = _kep(*sections)
    new = _kep(_component("metrics server", 3), sections[1], sections[2], sections[0])
    quote = "after 3 attempts when the API server is"
    anchor, landed = _land(old, new, quote)
    assert anchor.status == "moved", anchor
    assert anchor.start == new.index(quote, new.index("- The scheduler gives up"))


TABLE = "### Thresholds\n\n| Metric | Threshold | Component |\n| --- | --- | --- |\n{rows}\n"


def test_a_table_cell_stays_on_its_row_when_a_near_copy_row_is_inserted_below_it() -> None:
    rows = ["| request latency | 90% | kube-proxy |", "| queue depth | 50% | kube-proxy |"]
    old = TABLE.format(rows="\n".join(rows))
    new = TABLE.format(
        rows="\n".join([rows[0], "| request latency | 90.5% | kube-proxy |", rows[1]])
    )
    anchor, landed = _land(old, new, "kube-proxy")
    assert landed == "kube-proxy", anchor
    assert anchor.start == new.index("kube-proxy")


RST = (
    "Abstract\n========\n\nThis PEP proposes Futures for the event loop. Futures are cheap,\n"
    "and Futures compose.\n\n{before}\n\nFutures\n-------\n\n{after}\n\n"
    "Tasks\n-----\n\nA Task wraps a coroutine; Futures and Tasks may be awaited alike.\n"
)


def test_a_restructuredtext_title_whose_neighbours_were_rewritten_stays_on_its_title_line() -> None:
    # "Futures" is a common word of the document; the paragraphs on both sides of the title
    # were rewritten, so its context says little. As a whole title line (over its underline)
    # it occurs once in each text, and that places it.
    old = RST.format(
        before="The heap is needed anyway for storing timers.",
        after="The tulip.Future class here is modelled after concurrent.futures.",
    )
    new = RST.format(
        before="A server stops once all accepted requests are handled.",
        after="The asyncio.Future class is modelled after concurrent.futures.",
    )
    anchor, landed = _land(old, new, "Futures", after="Futures\n---")
    assert landed == "Futures", anchor
    assert anchor.start == new.index("Futures\n---")


def test_a_short_phrase_once_in_each_text_stays_where_the_diff_keeps_it() -> None:
    # Both sides of its context were rewritten; the phrase occurs once in each text and the
    # diff keeps it in place.
    old = (
        "## Serving\n\nThe mirror serves `/lookup` and `/records`.\n\n### Proxying a Notary\n\n"
        "A module proxy can also proxy requests to the notary.\n"
    )
    new = (
        "## Serving\n\nThe mirror serves `/lookup` and `/tile`.\n\n### Proxying a Checksum Database\n\n"
        "A module proxy can also proxy requests to the checksum database.\n"
    )
    anchor, landed = _land(old, new, "A module proxy")
    assert anchor.status == "exact", anchor
    assert landed == "A module proxy"


def test_the_copy_the_diff_keeps_is_the_passage_when_every_other_copy_is_kept_from_its_own() -> (
    None
):
    # The phrase occurs twice; around the annotated copy both sides were reworded, the other
    # copy (another paragraph) is kept verbatim, so the diff says which copy is which.
    other = "Matching criteria is fully defined by the policy author, as for any other policy."
    old = (
        "## Design\n\nThis design was selected because:\n\n- Matching criteria is fully defined and"
        " validated in a builtin type.\n- It composes.\n\n## Alternatives\n\n" + other + "\n"
    )
    new = (
        "## Design\n\nWe picked it over the webhook since:\n\n- Matching criteria is fully defined"
        " and checked in a builtin type.\n- It composes.\n\n## Alternatives\n\n" + other + "\n"
    )
    anchor, landed = _land(old, new, "Matching criteria is fully")
    assert anchor.status == "exact", anchor
    assert anchor.start == new.index("Matching criteria is fully")


def _rollback(name: str) -> str:
    return (
        f"## The {name}\n\n### Rollback\n\n"
        f"Yes. Disabling the gate makes the {name} ignore the field; objects that set it keep it."
        "\n\n"
    )


def test_a_sentence_of_a_replaced_section_does_not_land_fuzzily_in_its_replacement() -> None:
    # The metrics server's section was deleted and the apiserver's, built from the same
    # template, put in its place: the diff maps the sentence there, and it differs from the
    # apiserver's in a name only ("server" even survives), which is all a reworded sentence
    # would differ in. Its section is gone and the landing's is new: orphaned, not re-homed.
    names = ["scheduler", "metrics server", "DNS add-on", "CSI driver"]
    old = _kep(*[_rollback(n) for n in names])
    new = _kep(*[_rollback("apiserver" if n == "metrics server" else n) for n in names])
    quote = (
        "Disabling the gate makes the metrics server ignore the field; objects that set it keep it."
    )
    anchor, landed = _land(old, new, quote)
    assert anchor.status == "orphaned", (anchor, landed)
