"""Model providers behind one interface (`Provider`): Anthropic Messages, OpenAI Chat
Completions (and any OpenAI-compatible base URL), and the offline `echo` provider.

A provider takes the exact request a run built with the export module (`export_request(...,
stream=True)`) and yields events; it never builds a body of its own.
"""

from .base import (
    Event,
    Finished,
    Provider,
    ProviderError,
    ProviderNotConfigured,
    TextDelta,
    ToolCall,
)
from .registry import provider_get

__all__ = [
    "Event",
    "Finished",
    "Provider",
    "ProviderError",
    "ProviderNotConfigured",
    "TextDelta",
    "ToolCall",
    "provider_get",
]
