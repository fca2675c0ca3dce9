"""Drafted quotes are anchored only where they occur: never on a look-alike passage."""

from critique.anchor import fold, quote_anchor

LOOKALIKES = """# Regions

## EU

The EU gateway keeps p99 latency under 200 ms for 760 req/s at peak.
Its cache holds the last 24 hours of responses.

## US

The US gateway keeps p99 latency under 200 ms for 1760 req/s at peak.
Its cache holds the last 24 hours of responses.

## Limits

Each tenant gets `burst_limit` requests
per second, reset every minute.
"""


def test_a_verbatim_quote_lands_on_its_passage():
    quote = "The US gateway keeps p99 latency under 200 ms for 1760 req/s at peak."
    selector = quote_anchor(text=LOOKALIKES, exact=quote)
    assert selector is not None
    assert LOOKALIKES[selector.start : selector.end] == quote


def test_a_quote_that_occurs_nowhere_is_never_attached_to_a_look_alike():
    for quote in (
        "The EU gateway keeps p99 latency under 250 ms for 760 req/s at peak.",
        "The US gateway keeps p99 latency under 200 ms for 760 req/s at peak.",
        "The EU gateway keeps p99 latency under 200 ms for 1760 req/s at peak.",
        "The APAC gateway keeps p99 latency under 200 ms for 760 req/s at peak.",
        "Its cache holds the last 48 hours of responses.",
    ):
        assert quote_anchor(text=LOOKALIKES, exact=quote) is None, quote


def test_a_repeated_quote_without_context_is_not_guessed():
    assert (
        quote_anchor(text=LOOKALIKES, exact="Its cache holds the last 24 hours of responses.")
        is None
    )


def test_context_picks_among_repeats():
    selector = quote_anchor(
        text=LOOKALIKES,
        exact="Its cache holds the last 24 hours of responses.",
        prefix="for 1760 req/s at peak.\n",
    )
    assert selector is not None
    assert LOOKALIKES.index("## US") < selector.start < LOOKALIKES.index("## Limits")


def test_line_breaks_and_code_marks_are_folded_but_offsets_are_the_source():
    quote = "Each tenant gets burst_limit requests per second, reset every minute."
    selector = quote_anchor(text=LOOKALIKES, exact=quote)
    assert selector is not None
    assert LOOKALIKES[selector.start : selector.end] == (
        "Each tenant gets `burst_limit` requests\nper second, reset every minute."
    )


def test_fold_maps_back_to_source_offsets():
    folded = fold("a  `b`\n c")
    assert folded.text == "a b c"
    assert [folded.offsets[i] for i in (0, 2, 4)] == [0, 4, 8]


def test_empty_quote_is_the_whole_document():
    assert quote_anchor(text=LOOKALIKES, exact="  ") is None
