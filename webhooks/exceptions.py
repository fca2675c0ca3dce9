from common.exceptions import DomainError, NotFound, RateLimited


class WebhookInvalid(DomainError):
    """Bad input for a webhook (its URL, its events): 400 naming the field."""


__all__ = ["NotFound", "RateLimited", "WebhookInvalid"]
