"""Logging: token redaction, the request and task ids on every line, and the two formats.

Share-link tokens sit in URL paths; they must never reach a log line.

A token may arrive percent-encoded (`/s/%72l_…`, `/api/v1/shared/rl%5F…/`): Django decodes the
path before routing, so such a request reaches the shared page just the same. `redact` therefore
looks at the decoded text too, and blanks whatever follows a share route's prefix, whatever it
looks like.

Every record gets `request_id` (set by `common.middleware.RequestGuardMiddleware` for the
request being served, in a context variable so it holds under ASGI too) and `task_id` (the
Celery task running, eager or in a worker), both None outside one. Lines are JSON in
production (`JsonFormatter`) and `key=value` text in development (`TextFormatter`); both keep
the `extra={...}` fields a call passes (docs/operations.md, "Logs").
"""

import logging
import re
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any
from urllib.parse import unquote

from pythonjsonlogger.core import RESERVED_ATTRS
from pythonjsonlogger.json import JsonFormatter as _JsonFormatter

TOKEN = re.compile(r"rl_[A-Za-z0-9_\-]{8,}")
REDACTED = "rl_[redacted]"
# The segment after a share route's prefix is the token, however it is spelled.
SHARE_SEGMENT = re.compile(r"(/s/|/api/v1/shared/)(?!resume\b)[^/?#\s\"']+")
_DECODE_ROUNDS = 3  # %2572 → %72 → r: a few rounds cover any double encoding a client tries


def _decoded(text: str) -> str:
    for _ in range(_DECODE_ROUNDS):
        if "%" not in text:
            break
        decoded = unquote(text)
        if decoded == text:
            break
        text = decoded
    return text


def redact(text: str) -> str:
    """`text` with every share token (plain or percent-encoded) replaced by `rl_[redacted]`."""
    if "%" in text:
        decoded = _decoded(text)
        if decoded != text and (TOKEN.search(decoded) or SHARE_SEGMENT.search(decoded)):
            text = decoded  # log the decoded form: its token is blanked below
    text = SHARE_SEGMENT.sub(lambda m: m.group(1) + REDACTED, text)
    return TOKEN.sub(REDACTED, text)


def has_token(text: str) -> bool:
    return redact(text) != text


# What a LogRecord carries by itself; anything else on it came from `extra={...}`. `request`
# is Django's request object (django.request, django.server): its path is in the message.
_NOT_EXTRA = frozenset(RESERVED_ATTRS) | {"message", "asctime", "request"}
CONTEXT_FIELDS = ("request_id", "task_id")


def record_extras(record: logging.LogRecord) -> dict[str, Any]:
    """The `extra={...}` fields of a record (not the context ids), in the order given."""
    return {
        key: value
        for key, value in record.__dict__.items()
        if key not in _NOT_EXTRA and key not in CONTEXT_FIELDS and not key.startswith("_")
    }


class RedactTokens(logging.Filter):
    """Replaces anything that looks like a share token in the message, its arguments and its
    extra fields."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = redact(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(redact(a) if isinstance(a, str) else a for a in record.args)
        for key, value in record_extras(record).items():
            if isinstance(value, str):
                setattr(record, key, redact(value))
        request = getattr(record, "request", None)
        if request is not None and has_token(getattr(request, "path", "")):
            # Django's handlers keep the request on the record; formatters may print it.
            record.request = None
        return True


# --- Request and task ids ------------------------------------------------------------------

request_id_var: ContextVar[str | None] = ContextVar("redline_request_id", default=None)


@contextmanager
def request_id_bound(request_id: str) -> Iterator[None]:
    """Log lines written inside carry `request_id` (reset on the way out, so a worker thread
    or event loop reused for the next request does not keep it)."""
    token = request_id_var.set(request_id)
    try:
        yield
    finally:
        request_id_var.reset(token)


def iterator_bound(content: Iterator[bytes], request_id: str) -> Iterator[bytes]:
    """A streamed body whose every step runs with `request_id` bound: the body of a streaming
    response runs after the middleware returned, so its log lines would lose the id."""
    try:
        while True:
            with request_id_bound(request_id):
                part = next(content, None)
            if part is None:
                return
            yield part
    finally:
        close = getattr(content, "close", None)
        if close is not None:
            close()


async def aiterator_bound(content: AsyncIterator[bytes], request_id: str) -> AsyncIterator[bytes]:
    """`iterator_bound` for an async body (server-sent events under ASGI). Closing it closes
    the body, so the stream's own clean-up runs when the client goes away."""
    try:
        while True:
            with request_id_bound(request_id):
                try:
                    part = await anext(content)
                except StopAsyncIteration:
                    return
            yield part
    finally:
        aclose = getattr(content, "aclose", None)
        if aclose is not None:
            await aclose()


def _current_task_id() -> str | None:
    from celery import current_task

    request = getattr(current_task, "request", None) if current_task else None
    return getattr(request, "id", None)


class ContextIds(logging.Filter):
    """Puts `request_id` and `task_id` on every record its handler writes."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "request_id", None) is None:
            record.request_id = request_id_var.get()
        if getattr(record, "task_id", None) is None:
            record.task_id = _current_task_id()
        return True


# --- Formats -------------------------------------------------------------------------------


class JsonFormatter(_JsonFormatter):
    """One JSON object a line: level, logger, message (the event name), request_id, task_id,
    the record's extra fields, `exc_info` when there is a traceback, and `time` (ISO 8601,
    UTC) (production)."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("fmt", ["levelname", "name", "message", *CONTEXT_FIELDS])
        kwargs.setdefault("rename_fields", {"levelname": "level", "name": "logger"})
        kwargs.setdefault("reserved_attrs", sorted(_NOT_EXTRA))
        kwargs.setdefault("timestamp", "time")
        super().__init__(**kwargs)


class TextFormatter(logging.Formatter):
    """`time LEVEL logger message key=value ...` (development): the ids when set, then the
    record's extra fields."""

    def __init__(self, fmt: str = "%(asctime)s %(levelname)s %(name)s %(message)s") -> None:
        super().__init__(fmt)

    def formatMessage(self, record: logging.LogRecord) -> str:  # noqa: N802 (logging's name)
        line = super().formatMessage(record)
        fields = {key: getattr(record, key, None) for key in CONTEXT_FIELDS}
        fields = {key: value for key, value in fields.items() if value is not None}
        fields.update(record_extras(record))
        if not fields:
            return line
        return line + " " + " ".join(f"{key}={value}" for key, value in fields.items())


def logging_config(*, format: str, level: str) -> dict[str, Any]:  # noqa: A002 (LOG_FORMAT)
    """Django's LOGGING: one console handler, `format` "json" or "text", with the tokens
    redacted and the request and task ids on every record (config/settings.py)."""
    if format not in ("json", "text"):
        raise ValueError(f"LOG_FORMAT must be json or text, not {format!r}")
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {
            "json": {"()": "common.logging.JsonFormatter"},
            "text": {"()": "common.logging.TextFormatter"},
        },
        "filters": {
            "redact_tokens": {"()": "common.logging.RedactTokens"},
            "context_ids": {"()": "common.logging.ContextIds"},
        },
        "handlers": {
            "console": {
                "class": "logging.StreamHandler",
                "formatter": format,
                "filters": ["redact_tokens", "context_ids"],
            }
        },
        "root": {"handlers": ["console"], "level": level},
        "loggers": {
            "django.db.backends": {"level": "WARNING"},
            # Paths of shared pages carry tokens: scrub them where the records are made.
            "django.request": {"filters": ["redact_tokens"]},
            "django.server": {"filters": ["redact_tokens"]},
            "django.security": {"filters": ["redact_tokens"]},
        },
    }
