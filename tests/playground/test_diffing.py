from playground.text.diffing import (
    DIFF_GAP,
    content_diff,
    diff_blocks,
    diff_expand,
    inline_words_diff,
    messages_align,
    text_diff,
)
from tests.playground.factories import BASE_CONTENT, content, long_text


def m(role: str, text: str) -> dict:
    return {"role": role, "content": text}


A, B, C, D = m("user", "a"), m("assistant", "b"), m("user", "c"), m("user", "d")


def test_messages_align_pairs_identical_then_edited_messages():
    assert messages_align([A], [D, A]) == [(None, 0), (0, 1)]  # inserted on top
    assert messages_align([A, B, C], [A, C]) == [(0, 0), (1, None), (2, 1)]  # removed
    assert messages_align([A, B, C], [A, D, C]) == [(0, 0), (1, 1), (2, 2)]  # edited in place
    assert messages_align([], [A]) == [(None, 0)]
    assert messages_align([A], []) == [(0, None)]


def test_inserting_a_message_on_top_shows_one_added_message():
    before = content()
    after = content(messages=[m("user", "Context first."), *BASE_CONTENT["messages"]])
    diff = content_diff(before, after)
    changed = [t for t in diff["texts"] if t.changed]
    assert [(t.field, t.added, t.removed) for t in changed] == [("messages.0.content", 1, 0)]
    assert diff["changes"] == [
        {"field": "messages.0.role", "kind": "added", "before": None, "after": "user"}
    ]


def test_removed_message_is_named_by_its_old_place():
    before = content(messages=[A, B, C])
    after = content(messages=[A, C])
    changed = [t for t in content_diff(before, after)["texts"] if t.changed]
    assert [(t.field, t.added, t.removed, t.role_before, t.role_after) for t in changed] == [
        ("messages.1.content", 0, 1, "assistant", None)
    ]


def test_word_level_change_inside_a_line():
    diff = text_diff("system", "Rank risks worst first.\n", "Rank risks, worst first.\n")
    (row,) = diff.rows
    assert row["op"] == "change"
    assert (1, ",") in row["words"]


def test_fold_keeps_context_around_changes_and_expands_by_range():
    before = long_text(4000)
    after = before.replace("Line 02000:", "Line 02000 (edited):")
    rows = text_diff("system", before, after, limit=None).rows
    blocks = diff_blocks(rows)
    shown = [row for block in blocks if not block.fold for row in block.rows]
    assert len(shown) == 7  # the change plus 3 lines of context either side
    assert [b.fold for b in blocks] == [True, False, True]
    top, _, bottom = blocks
    assert (top.start, top.end) == (0, 1997)
    assert bottom.end == len(rows)
    assert shown[3]["op"] == "change"
    assert shown[3]["new_no"] == 2001
    # Expanding: the first 20 rows of a fold, the rest still folded; or all of it.
    up = diff_expand(rows, start=top.start, end=top.end, direction="up")
    assert [(b.fold, b.start, b.end) for b in up] == [(False, 0, 20), (True, 20, 1997)]
    down = diff_expand(rows, start=top.start, end=top.end, direction="down")
    assert [(b.fold, b.start, b.end) for b in down] == [(True, 0, 1977), (False, 1977, 1997)]
    everything = diff_expand(rows, start=top.start, end=top.end, direction="all")
    assert len(everything) == 1
    assert everything[0].count == 1997


def _shown(runs: list[tuple[int, str]]) -> str:
    """An inline diff as its text reads on the page (deletions and insertions both shown)."""
    return "".join(text for _, text in runs)


def test_an_inline_word_diff_keeps_a_space_between_a_word_and_its_replacement():
    # Issue #33: "13 turnturns" and "2216 words" on the compare and evaluation pages.
    runs = inline_words_diff("It took 13 turn", "It took 13 turns")
    assert _shown(runs) == "It took 13 turn turns"
    assert (DIFF_GAP, " ") in runs
    assert _shown(inline_words_diff("22 words", "16 words")) == "22 16 words"
    # Each side is still exact: the gap belongs to neither text.
    before = "".join(t for op, t in runs if op in (0, -1))
    after = "".join(t for op, t in runs if op in (0, 1))
    assert (before, after) == ("It took 13 turn", "It took 13 turns")
    # A change that already has its space gets no second one.
    assert DIFF_GAP not in {op for op, _ in inline_words_diff("a b", "a  b")}
