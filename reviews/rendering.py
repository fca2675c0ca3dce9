"""Markdown → safe HTML that knows where each piece of text came from.

Rendered with markdown-it-py (CommonMark, tables, strikethrough; raw HTML off) and sanitised
with nh3. Headings get ids (`h-<slug>`). Every run of text that is verbatim in the source is
wrapped in `<span data-s="OFFSET">` — its offset in the Markdown source — so:

- highlights are drawn on the server: annotation spans (source offsets) become `<mark>`s
  around exactly the characters they cover, across markup (`**`, backticks, links) that is not
  shown;
- the browser turns a selection into source offsets with no guessing: the offset of a point
  is its span's `data-s` plus the characters before it in that span. Escapes and entities
  (`\\*`, `&amp;`) are one shown character for several source ones; their spans carry
  `data-l`, the source length.

The source view (`source_render`) is the Markdown itself in one such span, so selection
offsets there are exact too.
"""

import bisect
import html
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import nh3
from django.utils.text import slugify
from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

Span = tuple[int, int, int]  # start, end, annotation id

ALLOWED_TAGS = {
    "a",
    "blockquote",
    "br",
    "code",
    "del",
    "div",
    "em",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "hr",
    "img",
    "li",
    "mark",
    "ol",
    "p",
    "pre",
    "s",
    "span",
    "strong",
    "table",
    "tbody",
    "td",
    "th",
    "thead",
    "tr",
    "ul",
}
ALLOWED_ATTRIBUTES = {
    "a": {"href", "title"},
    "img": {"src", "alt", "title"},
    "code": {"class"},
    "ol": {"start"},
    # Wide tables and long code lines scroll inside the page, never the page: their scrolling
    # box is focusable (keyboard users can scroll it) and a table's box is a named region.
    "div": {"class", "tabindex", "role", "aria-label"},
    "pre": {"tabindex"},
    "th": {"style"},
    "td": {"style"},
    "span": {"data-s", "data-l"},
    "mark": {"class", "data-ann"},
    **{f"h{level}": {"id"} for level in range(1, 7)},
}


@dataclass(frozen=True)
class Highlights:
    """The source cut at every annotation boundary: `ids[i]` cover `[points[i], points[i+1])`."""

    points: list[int]
    ids: list[tuple[int, ...]]

    @classmethod
    def build(cls, spans: Iterable[Span]) -> "Highlights":
        starts: dict[int, list[int]] = defaultdict(list)
        ends: dict[int, list[int]] = defaultdict(list)
        for start, end, annotation_id in spans:
            if end > start:
                starts[start].append(annotation_id)
                ends[end].append(annotation_id)
        points = sorted(set(starts) | set(ends))
        active: set[int] = set()
        ids: list[tuple[int, ...]] = []
        for point in points:
            active.difference_update(ends.get(point, ()))
            active.update(starts.get(point, ()))
            ids.append(tuple(sorted(active)))
        return cls(points=points, ids=ids)

    def covering(self, start: int, end: int) -> tuple[int, ...]:
        """Every annotation touching `[start, end)`."""
        found: set[int] = set()
        i = max(bisect.bisect_right(self.points, start) - 1, 0)
        while i < len(self.points) and self.points[i] < end:
            if i + 1 >= len(self.points) or self.points[i + 1] > start:
                found.update(self.ids[i])
            i += 1
        return tuple(sorted(found))

    def html(self, text: str, start: int) -> str:
        """`text` (found at source offset `start`) escaped, with `<mark>`s where annotated."""
        if not self.points:
            return html.escape(text, quote=False)
        end = start + len(text)
        out: list[str] = []
        pos = start
        i = bisect.bisect_right(self.points, pos) - 1
        while pos < end:
            stop = min(end, self.points[i + 1]) if i + 1 < len(self.points) else end
            piece = html.escape(text[pos - start : stop - start], quote=False)
            out.append(_mark(self.ids[i], piece) if i >= 0 else piece)
            pos = stop
            i += 1
        return "".join(out)


def _mark(ids: tuple[int, ...], inner: str) -> str:
    if not ids:
        return inner
    classes = "hl hl-multi" if len(ids) > 1 else "hl"
    return f'<mark class="{classes}" data-ann="{" ".join(map(str, ids))}">{inner}</mark>'


# --- markdown-it rules ------------------------------------------------------------------------


def _offset(token: Token) -> int | None:
    return token.meta.get("s") if token.meta else None


def _text_rule(
    self: RendererHTML, tokens: list[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    token = tokens[idx]
    start = _offset(token)
    if start is None:
        return html.escape(token.content, quote=False)
    return f'<span data-s="{start}">{env["hl"].html(token.content, start)}</span>'


def _text_special_rule(
    self: RendererHTML, tokens: list[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    """An escape or entity: one shown character for `len(markup)` source characters."""
    token = tokens[idx]
    start = _offset(token)
    inner = html.escape(token.content, quote=False)
    if start is None:
        return inner
    length = len(token.markup)
    inner = _mark(env["hl"].covering(start, start + length), inner)
    return f'<span data-s="{start}" data-l="{length}">{inner}</span>'


def _code_inline_rule(
    self: RendererHTML, tokens: list[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    return f"<code>{_text_rule(self, tokens, idx, options, env)}</code>"


def _code_block_rule(
    self: RendererHTML, tokens: list[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    token = tokens[idx]
    language = token.info.strip().split()[0] if token.info.strip() else ""
    attrs = f' class="language-{html.escape(language)}"' if language else ""
    body = _text_rule(self, tokens, idx, options, env)
    return f'<pre tabindex="0"><code{attrs}>{body}</code></pre>\n'


def _table_open_rule(
    self: RendererHTML, tokens: list[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    """A table in a box that scrolls sideways on a narrow screen (not the page)."""
    env["tables"] = env.get("tables", 0) + 1
    label = f"Table {env['tables']}"
    box = f'<div class="table-scroll" tabindex="0" role="region" aria-label="{label}">'
    return box + self.renderToken(tokens, idx, options, env)


def _table_close_rule(
    self: RendererHTML, tokens: list[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    return self.renderToken(tokens, idx, options, env) + "</div>"


def _image_rule(
    self: RendererHTML, tokens: list[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    """An image becomes a link to it: a document must not make reviewers' browsers fetch a
    remote URL (a tracking pixel). The CSP (`img-src 'self' data:`) would block it anyway."""
    token = tokens[idx]
    src = html.escape(str(token.attrGet("src") or ""), quote=True)
    alt = self.renderInline(token.children or [], options, env) or "image"
    return f'<a href="{src}" title="Image (not loaded): {src}">[image: {alt}]</a>'


def _heading_open_rule(
    self: RendererHTML, tokens: list[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    token = tokens[idx]
    inline = tokens[idx + 1] if idx + 1 < len(tokens) else None
    title = "".join(
        child.content
        for child in (inline.children or [] if inline else [])
        if child.type in ("text", "text_special", "code_inline")
    )
    slug = slugify(title) or "section"
    seen = env["slugs"].get(slug, 0)
    env["slugs"][slug] = seen + 1
    if seen:
        slug = f"{slug}-{seen + 1}"
    return f'<{token.tag} id="h-{slug}">'


def _markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])
    # Keep escapes and entities as their own tokens, so text tokens stay verbatim source.
    md.disable("text_join")
    md.add_render_rule("text", _text_rule)
    md.add_render_rule("text_special", _text_special_rule)
    md.add_render_rule("code_inline", _code_inline_rule)
    md.add_render_rule("code_block", _code_block_rule)
    md.add_render_rule("fence", _code_block_rule)
    md.add_render_rule("heading_open", _heading_open_rule)
    md.add_render_rule("image", _image_rule)
    md.add_render_rule("table_open", _table_open_rule)
    md.add_render_rule("table_close", _table_close_rule)
    return md


_MD = _markdown()
_NEWLINE = re.compile(r"\n")


def _map_offsets(tokens: list[Token], text: str) -> None:
    """Give every verbatim text token its source offset (`meta["s"]`).

    Blocks carry their source lines (`token.map`); inside a block the text pieces occur in the
    source in order, so each is searched for after the previous one.
    """
    line_starts = [0] + [m.end() for m in _NEWLINE.finditer(text)]

    def line_offset(line: int) -> int:
        return line_starts[line] if line < len(line_starts) else len(text)

    cursor = 0
    for token in tokens:
        if not token.map:
            continue
        lo = max(cursor, line_offset(token.map[0]))
        hi = line_offset(token.map[1])
        if token.type == "inline":
            for child in token.children or []:
                if child.type in ("text", "code_inline"):
                    needle = child.content
                elif child.type == "text_special":
                    needle = child.markup
                else:
                    continue
                if not needle:
                    continue
                pos = text.find(needle, lo, hi)
                if pos == -1:
                    continue
                child.meta["s"] = pos
                lo = pos + len(needle)
            cursor = lo
        elif token.type in ("fence", "code_block") and token.content:
            pos = text.find(token.content, lo, hi)
            if pos != -1:
                token.meta["s"] = pos
                cursor = pos + len(token.content)


def markdown_render(*, text: str, highlights: Iterable[Span] = ()) -> str:
    """Sanitised HTML of the Markdown `text`, with `<mark>`s over the annotated spans."""
    env: dict[str, Any] = {"hl": Highlights.build(highlights), "slugs": {}}
    tokens = _MD.parse(text, env)
    _map_offsets(tokens, text)
    rendered = _MD.renderer.render(tokens, _MD.options, env)
    return nh3.clean(
        rendered,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        filter_style_properties={"text-align"},
        link_rel="noopener noreferrer nofollow",
    )


def source_render(*, text: str, highlights: Iterable[Span] = ()) -> str:
    """The Markdown source itself, escaped, as one offset span with `<mark>`s."""
    return f'<span data-s="0">{Highlights.build(highlights).html(text, 0)}</span>'


_COMMENT_MD = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])
COMMENT_TAGS = ALLOWED_TAGS - {"h1", "h2", "h3", "img", "mark", "span"}


def comment_render(*, text: str) -> str:
    """Sanitised HTML of a reply (Markdown; raw HTML is shown as text, images and big
    headings are dropped, links get rel=nofollow)."""
    return nh3.clean(
        _COMMENT_MD.render(text),
        tags=COMMENT_TAGS,
        attributes={"a": {"href", "title"}, "code": {"class"}, "ol": {"start"}},
        link_rel="noopener noreferrer nofollow",
        url_schemes={"http", "https", "mailto"},
    )


def comment_preview_render(*, text: str) -> str:
    """A comment's excerpt for a list (the inbox): rendered like a reply, with links shown as
    their text, so the item's own link is the only one to follow."""
    return nh3.clean(
        comment_render(text=text),
        tags=COMMENT_TAGS - {"a"},
        attributes={"code": {"class"}, "ol": {"start"}},
    )
