"""Settings of the API's frameworks (Django REST framework, drf-spectacular): fixed by the code,
nothing a deployer sets. config/settings.py takes them as they are."""

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # Token first, so a request without credentials gets 401 with WWW-Authenticate.
        "accounts.authentication.HashedTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PAGINATION_CLASS": "common.api.StrictPageNumberPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_SCHEMA_CLASS": "common.schema.AutoSchema",
    "DEFAULT_PARSER_CLASSES": [
        "common.parsers.JSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "EXCEPTION_HANDLER": "common.api.exception_handler",
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Redline API",
    "DESCRIPTION": "Prompt playground, design-review desk and system-design question bank.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    # A PATCH body is the operation's own serializer, required fields included.
    "COMPONENT_SPLIT_PATCH": False,
    "ENUM_NAME_OVERRIDES": {
        "ShareAccessEnum": "playground.models.ShareLink.Access",
        "SourceEnum": "questionbank.models.Source",
        "WebhookEventEnum": "webhooks.models.Event",
        "DeliveryStatusEnum": "webhooks.models.Delivery.Status",
        "StatusEnum": "playground.models.Run.Status",
    },
}
