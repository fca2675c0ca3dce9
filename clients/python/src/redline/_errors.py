"""What the client raises. Everything is a `redline.Error`, so one `except` catches it all."""

from __future__ import annotations


class Error(Exception):
    """A call that did not give a version: `status` is the HTTP status (None when no answer
    came, or when the problem was found here), `detail` the server's (or our) explanation."""

    def __init__(
        self, detail: str, *, status: int | None = None, retry_after: float | None = None
    ) -> None:
        super().__init__(f"{status}: {detail}" if status is not None else detail)
        self.detail = detail
        self.status = status
        self.retry_after = retry_after  # seconds, from the last answer's Retry-After


class NotFound(Error):
    """404: no such prompt, label or version — or not yours (a revoked grant answers this too;
    Redline does not tell the two apart)."""


class AuthError(Error):
    """401: no key, a wrong key, or a revoked one."""


class VariableError(Error, ValueError):
    """`compile()` (and `to_anthropic()` / `to_openai()`) refused the variables: `variable`
    names the one at fault."""

    def __init__(self, detail: str, *, variable: str) -> None:
        super().__init__(detail)
        self.variable = variable
