"""`{% load comments %}`: an annotation's comment rendered like a reply (Markdown through
markdown-it-py, sanitised by nh3: reviews/rendering.py), in full or as a short preview."""

from django import template
from django.utils.safestring import SafeString, mark_safe

from ..rendering import comment_preview_render, comment_render

register = template.Library()


@register.filter
def comment_html(text: str) -> SafeString:
    return mark_safe(comment_render(text=text or ""))  # noqa: S308 (sanitised by nh3)


@register.filter
def comment_preview(text: str, length: int = 160) -> SafeString:
    """The start of a comment (cut at `length` characters), rendered with links as text."""
    text = text or ""
    if len(text) > length:
        text = text[: length - 1].rstrip() + "…"
    return mark_safe(comment_preview_render(text=text))  # noqa: S308 (sanitised by nh3)
