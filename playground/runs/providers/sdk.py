"""What the two official SDKs share: turning their errors into readable `ProviderError`s."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import httpx2
import pydantic

from .base import ProviderError, retry_after_seconds

logger = logging.getLogger(__name__)

# A provider's error message is shown on the run; a long one (an HTML error page) is cut here.
ERROR_DETAIL_MAX_CHARS = 500


def _detail(error: Any) -> str:
    """The message inside an SDK status error's JSON body, else the SDK's own text."""
    body = getattr(error, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        message = inner.get("message") if isinstance(inner, dict) else None
        if isinstance(message, str):
            return message[:ERROR_DETAIL_MAX_CHARS]
    return str(getattr(error, "message", error))[:ERROR_DETAIL_MAX_CHARS]


@dataclass
class CallState:
    """Set `answered` once the provider's response has started (errors after it are cut-offs)."""

    answered: bool = False


@contextmanager
def sdk_errors(
    sdk: ModuleType, *, title: str, base_url: str, timeout: float
) -> Iterator[CallState]:
    """Translate `sdk`'s exceptions (and the transport's) raised inside the block."""
    state = CallState()
    try:
        yield state
    except sdk.APITimeoutError:
        raise ProviderError(f"{title} did not answer within {timeout:g} s (timeout).") from None
    except sdk.RateLimitError as error:
        raise ProviderError(
            f"{title} is rate limiting this key (429): {_detail(error)}",
            retry_after=retry_after_seconds(dict(error.response.headers)),
        ) from None
    except sdk.APIStatusError as error:
        status = error.status_code
        kind = "server error" if status >= 500 else "rejected the request"
        raise ProviderError(f"{title} {kind} ({status}): {_detail(error)}") from None
    except sdk.APIResponseValidationError as error:
        raise ProviderError(f"{title} sent a malformed reply: {_detail(error)}") from None
    except sdk.APIConnectionError as error:
        cause = error.__cause__ or error
        if state.answered:
            raise ProviderError(
                f"{title}'s stream was cut off before the reply finished ({cause})."
            ) from None
        # The base URL is the operator's configuration: logged, never put in the run's error,
        # which every reader of the run sees.
        logger.warning("run.provider_unreachable", extra={"provider": title, "base_url": base_url})
        raise ProviderError(f"Could not reach {title}: {cause}") from None
    except (json.JSONDecodeError, pydantic.ValidationError, UnicodeDecodeError) as error:
        raise ProviderError(f"{title} sent a malformed stream: {str(error)[:300]}") from None
    except httpx2.TimeoutException:
        raise ProviderError(
            f"{title} stopped sending within {timeout:g} s (timeout mid-stream)."
        ) from None
    except httpx2.HTTPError as error:
        raise ProviderError(
            f"{title}'s stream was cut off before the reply finished ({error})."
        ) from None
    except sdk.APIError as error:  # an `event: error` inside the stream
        raise ProviderError(f"{title} reported an error mid-stream: {_detail(error)}") from None
