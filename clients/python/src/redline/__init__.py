"""The Redline Python client: fetch prompt versions exactly and call a provider's SDK with them.

    from redline import Redline

    redline = Redline(base_url="http://127.0.0.1:8000", api_key="rlk_…")
    version = redline.get_prompt(42)                      # the `production` label
    message = anthropic.Anthropic().messages.create(**version.to_anthropic(design="…"))

See clients/python/README.md.
"""

from ._client import AsyncRedline, Redline
from ._core import __version__
from ._errors import AuthError, Error, NotFound, VariableError
from ._models import (
    CompiledPrompt,
    Content,
    Message,
    Params,
    PromptVersion,
    ResponseFormat,
    Tool,
)

__all__ = [
    "AsyncRedline",
    "AuthError",
    "CompiledPrompt",
    "Content",
    "Error",
    "Message",
    "NotFound",
    "Params",
    "PromptVersion",
    "Redline",
    "ResponseFormat",
    "Tool",
    "VariableError",
    "__version__",
]
