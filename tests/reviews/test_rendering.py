"""Markdown rendering: sanitised, headings with ids, and every shown character traceable to its
offset in the Markdown source (what highlights and selections rely on)."""

from html.parser import HTMLParser

import pytest

from reviews.rendering import Highlights, markdown_render, source_render
from reviews.seed import practice_docs_read
from tests.reviews.factories import DOC

TRICKY = """# Title with `code` &amp; an entity

Plain **bold** and *emphasis*, a [link](https://example.com "t") and \\*escaped\\* stars.
A second line with `inline code` and ~~strike~~.

> A quote that spans
> two lines.

| col **a** | col b |
|:--|--:|
| x `y` | z &lt; w |

1. first item
2. second item with **bold**

```python
def f(x):
    return x * 2
```

## Title with `code` &amp; an entity

<script>alert("raw html")</script> and [bad](javascript:alert(1)) and <img src=x onerror=alert(1)>
"""


class Spans(HTMLParser):
    """Collects (data-s, data-l, text shown inside the span) and marks' text per annotation id."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, dict]] = []
        self.spans: list[list] = []
        self.marked: dict[str, list[str]] = {}
        self.ids: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.stack.append((tag, attrs))
        if tag == "span" and "data-s" in attrs:
            self.spans.append([int(attrs["data-s"]), attrs.get("data-l"), ""])
        if tag.startswith("h") and "id" in attrs:
            self.ids.append(attrs["id"])

    def handle_endtag(self, tag):
        self.stack.pop()

    def handle_data(self, data):
        in_span = any(t == "span" and "data-s" in a for t, a in self.stack)
        if in_span:
            self.spans[-1][2] += data
        for tag, attrs in self.stack:
            if tag == "mark":
                for annotation_id in attrs["data-ann"].split():
                    self.marked.setdefault(annotation_id, []).append(data)


def parse(html: str) -> Spans:
    parser = Spans()
    parser.feed(html)
    return parser


@pytest.mark.parametrize(
    "text",
    [DOC, TRICKY, *(doc["body"] for doc in practice_docs_read())],
    ids=["design_doc", "tricky", "practice-1", "practice-2"],
)
def test_every_offset_span_shows_its_source(text):
    spans = parse(markdown_render(text=text)).spans
    assert len(spans) > 10
    for start, length, shown in spans:
        if length is None:
            assert text[start : start + len(shown)] == shown
        else:  # an escape or entity: one shown character for `length` source characters
            assert len(shown) == 1
            assert text[start : start + int(length)] in (
                f"\\{shown}",
                "&amp;",
                "&lt;",
            )
    starts = [s for s, _, _ in spans]
    assert starts == sorted(starts)


def test_headings_get_unique_ids_and_html_is_sanitised():
    html = markdown_render(text=TRICKY)
    assert parse(html).ids == [
        "h-title-with-code-an-entity",
        "h-title-with-code-an-entity-2",
    ]
    assert "<script" not in html
    assert "<img" not in html
    assert 'href="javascript' not in html
    assert "&lt;script&gt;" in html  # raw HTML is shown as text
    assert "&lt;img src=x" in html
    assert 'style="text-align:right"' in html
    assert '<a href="https://example.com" title="t" rel="noopener noreferrer nofollow">' in html


def test_highlights_cover_exactly_their_characters_across_markup():
    start = TRICKY.index("Plain **bold**")
    end = TRICKY.index(" stars.")
    other = TRICKY.index("bold** and")
    html = markdown_render(text=TRICKY, highlights=[(start, end, 7), (other, other + 4, 9)])
    marked = parse(html).marked
    assert "".join(marked["7"]) == "Plain bold and emphasis, a link and *escaped*"
    assert "".join(marked["9"]) == "bold"
    assert 'class="hl hl-multi" data-ann="7 9"' in html


def test_source_view_is_the_source_with_marks():
    start = DOC.index("## Security")
    html = source_render(text=DOC, highlights=[(start, start + 11, 3)])
    spans = parse(html)
    assert spans.spans[0][0] == 0
    assert spans.spans[0][2] == DOC
    assert "".join(spans.marked["3"]) == "## Security"


def test_highlights_cut_points():
    highlights = Highlights.build([(2, 6, 1), (4, 8, 2)])
    assert highlights.points == [2, 4, 6, 8]
    assert highlights.ids == [(1,), (1, 2), (2,), ()]
    assert highlights.covering(0, 3) == (1,)
    assert highlights.covering(6, 7) == (2,)
    assert highlights.covering(8, 9) == ()
    assert highlights.html("abcdefghij", 0) == (
        'ab<mark class="hl" data-ann="1">cd</mark>'
        '<mark class="hl hl-multi" data-ann="1 2">ef</mark>'
        '<mark class="hl" data-ann="2">gh</mark>ij'
    )
