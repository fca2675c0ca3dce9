"""Redline settings, read from the environment.

With no environment at all this is the embedded default: SQLite file, media on local disk,
Celery tasks run eagerly in-process, the offline `echo` model provider. Production sets
DATABASE_URL, CELERY_BROKER_URL, S3_* and SECRET_KEY (see README).
"""

import os
from pathlib import Path
from urllib.parse import urlsplit

import dj_database_url

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    return default if value in (None, "") else int(value)


DEBUG = env_bool("DEBUG", False)
# The embedded default runs on a developer's machine; production must set its own key.
SECRET_KEY = os.environ.get("SECRET_KEY") or "redline-insecure-embedded-default-key"  # noqa: S105
ALLOWED_HOSTS = [
    h.strip()
    for h in os.environ.get("ALLOWED_HOSTS", "127.0.0.1,localhost,testserver").split(",")
    if h.strip()
]
CSRF_TRUSTED_ORIGINS = [
    o.strip() for o in os.environ.get("CSRF_TRUSTED_ORIGINS", "").split(",") if o.strip()
]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_htmx",
    "csp",
    "common",
    "accounts",
    "questionbank",
    "textstore",
    "playground",
    "reviews",
    "evals",
    "critique",
    "changes",
    "webhooks",
]

MIDDLEWARE = [
    "common.middleware.RequestGuardMiddleware",
    "common.bodylimit.RequestBodyLimitMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "common.middleware.PrivateCacheMiddleware",
    "common.middleware.DomainErrorMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "reviews.context_processors.inbox",
            ],
        },
    },
]

DATA_DIR = Path(os.environ.get("REDLINE_DATA_DIR", BASE_DIR / "var"))

DATABASES = {
    "default": dj_database_url.config(
        default=f"sqlite:///{DATA_DIR / 'redline.sqlite3'}",
        conn_max_age=env_int("DB_CONN_MAX_AGE", 60),
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # SQLite for concurrent web use (Django 5.1+): WAL lets readers run beside the writer;
    # IMMEDIATE transactions take the write lock at BEGIN, so two saves queue on the busy
    # timeout instead of one failing with "database is locked" when its read lock cannot be
    # upgraded mid-transaction.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "transaction_mode": "IMMEDIATE",
            "timeout": env_int("SQLITE_BUSY_TIMEOUT", 20),
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        }
    )
    DATABASES["default"]["CONN_MAX_AGE"] = 0

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "home"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = DATA_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
MEDIA_ROOT = DATA_DIR / "media"
# Serve static files straight from the app folders too, so `runserver` and tests need no
# collectstatic; production runs collectstatic and may turn this off.
WHITENOISE_USE_FINDERS = env_bool("WHITENOISE_USE_FINDERS", True)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "whitenoise.storage.CompressedManifestStaticFilesStorage"
            if env_bool("STATIC_MANIFEST", False)
            else "django.contrib.staticfiles.storage.StaticFilesStorage"
        )
    },
}

# Request bodies: large prompt texts go straight to object storage, so the API caps bodies.
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("DATA_UPLOAD_MAX_MEMORY_SIZE", 8 * 1024 * 1024)
# Any body, forms and files included, is refused with a 413 past this many bytes before it is
# read or spooled to disk (common/bodylimit.py); Redline's own upload endpoint (the embedded
# default's signed PUT, under this prefix) takes up to UPLOAD_MAX_BYTES instead.
REQUEST_BODY_MAX_BYTES = env_int(
    "REQUEST_BODY_MAX_BYTES", max(16 * 1024 * 1024, 2 * DATA_UPLOAD_MAX_MEMORY_SIZE)
)
REQUEST_BODY_UPLOAD_PREFIX = "/api/v1/uploads/put/"

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
    # A PATCH body is the operation's own serializer, required fields included: the API has no
    # "partial update of the same shape" (a label's PATCH needs `protected`).
    "COMPONENT_SPLIT_PATCH": False,
    "ENUM_NAME_OVERRIDES": {
        "ShareAccessEnum": "playground.models.ShareLink.Access",
        "SourceEnum": "questionbank.models.Source",
        "WebhookEventEnum": "webhooks.models.Event",
        "DeliveryStatusEnum": "webhooks.models.Delivery.Status",
        "StatusEnum": "playground.models.Run.Status",
    },
}

# Celery: a broker URL means real workers; without one, tasks run eagerly in-process.
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "")
CELERY_RESULT_BACKEND = os.environ.get("CELERY_RESULT_BACKEND", CELERY_BROKER_URL or None)
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Fails runs whose worker vanished (run `celery -A config beat`, or a worker with -B).
CELERY_BEAT_SCHEDULE = {
    "playground-runs-reap-stale": {"task": "playground.runs_reap_stale", "schedule": 60.0},
    # Sends queued runs whose message the broker never got or lost (issue #31).
    "playground-runs-redispatch": {"task": "playground.runs_redispatch", "schedule": 30.0},
    # Deletes expired uploads and their objects (unused ones, and late PUTs to used ones).
    "playground-uploads-expire": {"task": "playground.uploads_expire", "schedule": 600.0},
    # Grades evaluation cells whose run finished while no cell task saw it (a killed worker).
    "evals-reap": {"task": "evals.evaluations_reap", "schedule": 60.0},
}

# Redis (cache or broker) unreachable: requests answer 503 with this Retry-After (issue #31).
OUTAGE_RETRY_AFTER = env_int("OUTAGE_RETRY_AFTER", 5)

# Cache (rate limits, hot reads): Redis when REDIS_URL is set, process memory otherwise.
REDIS_URL = os.environ.get("REDIS_URL", "")
CACHES = {
    "default": (
        {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}
        if REDIS_URL
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "redline"}
    )
}

# Object storage: S3 when S3_BUCKET is set, the local filesystem otherwise.
S3_ENDPOINT_URL = os.environ.get("S3_ENDPOINT_URL", "")
S3_BUCKET = os.environ.get("S3_BUCKET", "")
S3_REGION = os.environ.get("S3_REGION", "us-east-1")
S3_ACCESS_KEY_ID = os.environ.get("S3_ACCESS_KEY_ID", "")
S3_SECRET_ACCESS_KEY = os.environ.get("S3_SECRET_ACCESS_KEY", "")
OBJECT_STORE_DIR = Path(os.environ.get("OBJECT_STORE_DIR", DATA_DIR / "objects"))
# A silent or unreachable S3 must not hold a web worker: explicit timeouts (seconds) and a
# bounded number of attempts, then 503 with Retry-After.
# Worst case for one call: attempts × (connect or read timeout), plus a backoff under a second
# between attempts; one attempt of 2 s keeps a request well under the 5 s it may wait for a
# hung store (issue #21; the circuit breaker then answers at once). Raise S3_MAX_ATTEMPTS where
# the store answers transient 5xx (SlowDown) often.
S3_CONNECT_TIMEOUT = float(os.environ.get("S3_CONNECT_TIMEOUT", "2"))
S3_READ_TIMEOUT = float(os.environ.get("S3_READ_TIMEOUT", "2"))
S3_MAX_ATTEMPTS = env_int("S3_MAX_ATTEMPTS", 1)
# Objects younger than this are never collected by `textstore_gc` (a save in flight writes
# its object before its row).
TEXTSTORE_GC_GRACE = env_int("TEXTSTORE_GC_GRACE", 24 * 3600)

# textstore policy (docs/design.md, Why the non-obvious choices).
TEXTSTORE_MAX_CHAIN = env_int("TEXTSTORE_MAX_CHAIN", 100)
TEXTSTORE_INLINE_MAX = env_int("TEXTSTORE_INLINE_MAX", 256 * 1024)
# The textstore's read caches are sized with the other process caches (bounded cost, below).
# Large snapshots in object storage are cut into independently compressed chunks of this many
# characters, so a range read fetches only the chunks it needs.
# 256 Ki characters: about 1% larger than one stream, about 1 ms to decode.
TEXTSTORE_CHUNK_CHARS = env_int("TEXTSTORE_CHUNK_CHARS", 256 * 1024)
# Upper bound on characters rebuilt for one read; lowers the delta chain cap for big texts.
TEXTSTORE_REBUILD_BUDGET_CHARS = env_int("TEXTSTORE_REBUILD_BUDGET_CHARS", 160_000_000)

# Large prompts (issue #14): texts uploaded straight to object storage, then named in a version.
# The most bytes one upload may declare (checked when it is created: 400 beyond).
UPLOAD_MAX_BYTES = env_int("UPLOAD_MAX_BYTES", 100 * 1024 * 1024)
# Seconds an upload URL (presigned, or Redline's own signed PUT endpoint) and the upload stay
# usable; uploads (and their objects) are deleted after this by `playground.uploads_expire`.
UPLOAD_EXPIRES_SECONDS = env_int("UPLOAD_EXPIRES_SECONDS", 900)
# The browser editor uploads a text of more UTF-8 bytes than this instead of posting it, and
# edits texts up to EDITOR_INPLACE_MAX_BYTES in place (beyond: "Replace with file" only, and
# the text is not put in the page). The JSON API takes inline texts of any size as before.
EDITOR_UPLOAD_THRESHOLD_BYTES = env_int("EDITOR_UPLOAD_THRESHOLD_BYTES", 256 * 1024)
EDITOR_INPLACE_MAX_BYTES = env_int("EDITOR_INPLACE_MAX_BYTES", 4 * 1024 * 1024)

# Prompt page: the version tree shows the newest PLAYGROUND_TREE_WINDOW versions (more on
# demand, PLAYGROUND_TREE_WINDOW at a time, up to PLAYGROUND_TREE_MAX) plus the selected version
# and up to PLAYGROUND_TREE_ANCESTRY of its ancestors, so a page's work does not grow with history.
PLAYGROUND_TREE_WINDOW = env_int("PLAYGROUND_TREE_WINDOW", 50)
PLAYGROUND_TREE_ANCESTRY = env_int("PLAYGROUND_TREE_ANCESTRY", 50)
PLAYGROUND_TREE_MAX = env_int("PLAYGROUND_TREE_MAX", 2000)
# Review page: annotation cards (and risks) rendered with the page; the rest load on demand, this
# many cards a time (risks: all at once).
REVIEW_CARDS_WINDOW = env_int("REVIEW_CARDS_WINDOW", 10)
# Long texts on pages and through the range API (characters, i.e. Unicode code points).
# Pages render the first PLAYGROUND_TEXT_HEAD_CHARS of each text and load the rest by range.
PLAYGROUND_TEXT_HEAD_CHARS = env_int("PLAYGROUND_TEXT_HEAD_CHARS", 16 * 1024)
# `GET .../text/`: the default `length`, and the largest one accepted (more is a 400).
PLAYGROUND_TEXT_PAGE_CHARS = env_int("PLAYGROUND_TEXT_PAGE_CHARS", 64 * 1024)
PLAYGROUND_TEXT_RANGE_MAX_CHARS = env_int("PLAYGROUND_TEXT_RANGE_MAX_CHARS", 1024 * 1024)
# "Download full text" streams the text in ranges of this many characters.
PLAYGROUND_TEXT_STREAM_CHARS = env_int("PLAYGROUND_TEXT_STREAM_CHARS", 256 * 1024)
# With S3 configured, texts longer than this download through a presigned GET valid for
# SHARE_PRESIGNED_TTL seconds instead of through the web worker.
PLAYGROUND_DOWNLOAD_PRESIGN_MIN_CHARS = env_int(
    "PLAYGROUND_DOWNLOAD_PRESIGN_MIN_CHARS", 1024 * 1024
)
# A version whose texts total more characters than this is not loaded whole into its page (no
# in-place editor, no inline exports); its texts are shown lazily and downloaded instead.
PLAYGROUND_PAGE_FULL_TEXT_MAX_CHARS = env_int("PLAYGROUND_PAGE_FULL_TEXT_MAX_CHARS", 256 * 1024)
# Diffs of texts longer than this are built from the changed region only (playground.diffing).
PLAYGROUND_DIFF_LARGE_CHARS = env_int("PLAYGROUND_DIFF_LARGE_CHARS", 1024 * 1024)

# Sharing: the one stale window after a revocation is a presigned URL already handed out.
SHARE_PRESIGNED_TTL = env_int("SHARE_PRESIGNED_TTL", 300)
# Shared-link surfaces: `Cache-Control: no-store` on every answer (common.middleware).
NO_STORE_URL_NAMES = frozenset(
    {
        "shared-page",
        "shared-copy",
        "shared-login",
        "shared-resume",
        "api-shared",
        "api-shared-text",
        "api-shared-text-download",
    }
)
# Failed share-token look-ups allowed per client address and window before 429.
SHARE_GUESS_LIMIT = env_int("SHARE_GUESS_LIMIT", 30)
SHARE_GUESS_WINDOW = env_int("SHARE_GUESS_WINDOW", 60)

# Reverse proxies in front of the app that append to X-Forwarded-For (0: clients connect
# directly). Every per-client limit (share guesses, log-ins) keys on the address it yields.
TRUSTED_PROXY_COUNT = env_int("TRUSTED_PROXY_COUNT", 0)
# Failed log-ins (HTML form and POST /api/v1/auth/token/) allowed per account and per client
# address in a window (seconds); then 429 with Retry-After until the window ends.
LOGIN_FAILURE_LIMIT_ACCOUNT = env_int("LOGIN_FAILURE_LIMIT_ACCOUNT", 10)
LOGIN_FAILURE_LIMIT_ADDRESS = env_int("LOGIN_FAILURE_LIMIT_ADDRESS", 50)
LOGIN_FAILURE_WINDOW = env_int("LOGIN_FAILURE_WINDOW", 900)
# Sign-ups: at most SIGNUP_RATE_LIMIT attempts per client address per SIGNUP_RATE_WINDOW
# seconds (429 with Retry-After past it; issue #31).
SIGNUP_RATE_LIMIT = env_int("SIGNUP_RATE_LIMIT", 10)
SIGNUP_RATE_WINDOW = env_int("SIGNUP_RATE_WINDOW", 3600)
# Estimator requests (each may run a simulation) per account, or per address when signed out,
# in a window (seconds); far above what typing into a debounced form sends.
ESTIMATE_RATE_LIMIT = env_int("ESTIMATE_RATE_LIMIT", 240)
ESTIMATE_RATE_WINDOW = env_int("ESTIMATE_RATE_WINDOW", 60)

# Model providers. `echo` works offline; others need keys and network.
REDLINE_DEFAULT_PROVIDER = os.environ.get("REDLINE_DEFAULT_PROVIDER", "echo")


def env_float(name: str, default: float) -> float:
    value = os.environ.get(name)
    return default if value in (None, "") else float(value)


# Provider keys and base URLs (the SDKs' own variable names). OPENAI_BASE_URL alone is enough
# for a keyless OpenAI-compatible server (vLLM, Ollama, LM Studio).
ANTHROPIC_API_KEY = os.environ.get("ANTHROPIC_API_KEY", "")
ANTHROPIC_BASE_URL = os.environ.get("ANTHROPIC_BASE_URL", "")
OPENAI_API_KEY = os.environ.get("OPENAI_API_KEY", "")
OPENAI_BASE_URL = os.environ.get("OPENAI_BASE_URL", "")

# Runs (playground/runs/): provider timeout per read, 429 retries and their bound, echo pacing.
RUN_PROVIDER_TIMEOUT = env_float("RUN_PROVIDER_TIMEOUT", 60.0)
RUN_RETRY_ATTEMPTS = env_int("RUN_RETRY_ATTEMPTS", 3)
RUN_RETRY_MAX_WAIT = env_float("RUN_RETRY_MAX_WAIT", 20.0)
RUN_ECHO_DELAY_MS = env_int("RUN_ECHO_DELAY_MS", 30)
# The worker writes streamed output to the run's row at most this often (the first token at
# once); stream readers poll the row, backing off from MIN to MAX while nothing changes.
RUN_FLUSH_INTERVAL_MS = env_int("RUN_FLUSH_INTERVAL_MS", 50)
RUN_STREAM_POLL_MIN_MS = env_int("RUN_STREAM_POLL_MIN_MS", 10)
RUN_STREAM_POLL_MAX_MS = env_int("RUN_STREAM_POLL_MAX_MS", 250)
RUN_STREAM_MAX_SECONDS = env_int("RUN_STREAM_MAX_SECONDS", 600)
# A running run whose worker wrote nothing for this long is failed by the reaper; a queued run
# that no worker took within RUN_QUEUED_MAX_SECONDS too.
RUN_STALE_SECONDS = env_int("RUN_STALE_SECONDS", 300)
RUN_QUEUED_MAX_SECONDS = env_int("RUN_QUEUED_MAX_SECONDS", 900)
RUN_TASK_QUEUE = os.environ.get("RUN_TASK_QUEUE", "celery")
# A queued run whose message was sent this long ago without a claim is sent again (a message
# Redis lost); one the broker never got is sent at the reaper's next round (issue #31).
RUN_REDISPATCH_SECONDS = env_int("RUN_REDISPATCH_SECONDS", 120)
# With eager tasks (no broker) a run executes on a thread of the web process, so the POST
# returns at once and the page can stream it; "inline" runs it inside the request instead.
RUN_EAGER_MODE = os.environ.get("RUN_EAGER_MODE", "thread")

# One line per event on stdout, with the request id, the Celery task id and the call's
# `extra={...}` fields (common/logging.py): JSON lines in production, `key=value` text in
# development (DEBUG, or the embedded default: no DATABASE_URL). LOG_FORMAT=json|text chooses.
LOG_FORMAT = os.environ.get("LOG_FORMAT") or (
    "text" if DEBUG or not os.environ.get("DATABASE_URL") else "json"
)
if LOG_FORMAT not in ("json", "text"):
    raise ValueError(f"LOG_FORMAT must be json or text, not {LOG_FORMAT!r}")
LOGGING = {
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
            "formatter": LOG_FORMAT,
            "filters": ["redact_tokens", "context_ids"],
        }
    },
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    "loggers": {
        "django.db.backends": {"level": "WARNING"},
        # Paths of shared pages carry tokens: scrub them where the records are made.
        "django.request": {"filters": ["redact_tokens"]},
        "django.server": {"filters": ["redact_tokens"]},
        "django.security": {"filters": ["redact_tokens"]},
    },
}

if not DEBUG:
    SESSION_COOKIE_HTTPONLY = True
    CSRF_COOKIE_SAMESITE = "Lax"
    SECURE_CONTENT_TYPE_NOSNIFF = True
    X_FRAME_OPTIONS = "DENY"

# HTTPS in production, switched on from the environment (README "Configuration").
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", False)
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", False)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", False)
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)
# "HEADER,value" as the proxy sets it, e.g. "HTTP_X_FORWARDED_PROTO,https".
_PROXY_SSL_HEADER = os.environ.get("SECURE_PROXY_SSL_HEADER", "")
SECURE_PROXY_SSL_HEADER = (
    tuple(part.strip() for part in _PROXY_SSL_HEADER.split(",", 1))
    if "," in _PROXY_SSL_HEADER
    else None
)
SECURE_REFERRER_POLICY = "same-origin"


def upload_connect_origins(*, bucket: str, endpoint: str, explicit: str) -> list[str]:
    """Origins the editor's script may PUT uploads to besides our own: the S3 endpoint's (the
    presigned URLs point there), `UPLOAD_CONNECT_ORIGINS` (space-separated) if given."""
    if explicit.strip():
        return explicit.split()
    if not bucket:
        return []
    if endpoint:
        parts = urlsplit(endpoint)
        return [f"{parts.scheme}://{parts.netloc}"]
    return ["https://*.amazonaws.com"]


UPLOAD_CONNECT_ORIGINS = upload_connect_origins(
    bucket=S3_BUCKET,
    endpoint=S3_ENDPOINT_URL,
    explicit=os.environ.get("UPLOAD_CONNECT_ORIGINS", ""),
)

# Content-Security-Policy (django-csp): only our own scripts, styles and images. No inline
# script anywhere; `img-src` allows data: but no remote host, so a design document cannot make
# a reviewer's browser fetch a tracking pixel. Style attributes stay allowed for the few
# server-set layout values (table alignment, the version tree's row height).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "style-src-attr": ["'unsafe-inline'"],
        "img-src": ["'self'", "data:"],
        "connect-src": ["'self'", *UPLOAD_CONNECT_ORIGINS],
        "font-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    }
}

# --- evaluations (docs/evals.md) ---
EVAL_TESTSET_ROWS_MAX = env_int("EVAL_TESTSET_ROWS_MAX", 1000)
EVAL_CELLS_MAX = env_int("EVAL_CELLS_MAX", 5000)
EVALS_ACTIVE_PER_USER = env_int("EVALS_ACTIVE_PER_USER", 3)
EVAL_RETRY_SECONDS = env_int("EVAL_RETRY_SECONDS", 30)
# Bytes of test-set row content one account may store (each distinct row once per test set;
# a save past it is a 429). docs/evals.md, Test sets.
EVAL_TESTSET_STORAGE_PER_USER = env_int("EVAL_TESTSET_STORAGE_PER_USER", 100 * 1024 * 1024)
# Cells running at once per provider, across every worker ("echo=16 anthropic=4").
EVAL_PROVIDER_CONCURRENCY_DEFAULT = env_int("EVAL_PROVIDER_CONCURRENCY_DEFAULT", 4)
EVAL_PROVIDER_CONCURRENCY = {
    name: int(cap)
    for name, _, cap in (
        item.partition("=")
        for item in os.environ.get("EVAL_PROVIDER_CONCURRENCY", "echo=16").split()
    )
}
EVAL_DEFER_SECONDS = env_float("EVAL_DEFER_SECONDS", 0.5)
EVAL_EAGER_THREADS = env_int("EVAL_EAGER_THREADS", 4)
# Without a broker: "thread" runs cells on a pool behind the request; "inline" inside it (tests).
EVAL_EAGER_MODE = os.environ.get("EVAL_EAGER_MODE", "thread")
EVAL_TASK_QUEUE = os.environ.get("EVAL_TASK_QUEUE", "celery")
# An evaluation with no cell finished and no hand-off for this long is handed to workers again
# by the reaper (a killed worker's reserved messages are only restored by Redis after its
# visibility timeout, an hour); repeating a cell's task is harmless.
EVAL_STALL_SECONDS = env_float("EVAL_STALL_SECONDS", 120)
# Graders under a budget (docs/evals.md, "Graders under a budget"): seconds of regular-expression
# matching per grader (the regex grader's pattern; all of a JSON Schema's patterns together), and
# the limits on a grader's JSON Schema checked when the evaluation is created.
EVAL_REGEX_BUDGET_SECONDS = env_float("EVAL_REGEX_BUDGET_SECONDS", 0.25)
EVAL_SCHEMA_MAX_BYTES = env_int("EVAL_SCHEMA_MAX_BYTES", 64 * 1024)
EVAL_SCHEMA_REF_DEPTH_MAX = env_int("EVAL_SCHEMA_REF_DEPTH_MAX", 16)
EVAL_SCHEMA_EXPANDED_MAX = env_int("EVAL_SCHEMA_EXPANDED_MAX", 20_000)
# A cell task's hard budget: past the soft limit the cell is `error` (with the reason) and its
# message acknowledged; the hard limit (soft + grace) kills a child stuck where no signal reaches.
# A cell whose grading was started this many times without finishing is `error` too, so a cell
# that kills its worker is never redelivered for ever.
EVAL_CELL_SOFT_TIME_LIMIT = env_int("EVAL_CELL_SOFT_TIME_LIMIT", 300)
EVAL_CELL_TIME_LIMIT_GRACE = env_int("EVAL_CELL_TIME_LIMIT_GRACE", 30)
EVAL_CELL_GRADE_ATTEMPTS_MAX = env_int("EVAL_CELL_GRADE_ATTEMPTS_MAX", 3)
# Issue #31: at most this many of one account's evaluation cells handed to the workers' queue
# at once (the next is sent as each ends), so another account's run waits about one run's time;
# and at most EVAL_USER_CELLS_PER_DAY cells started per account in any 24 hours (429 past it).
EVAL_USER_CELLS_IN_FLIGHT = env_int("EVAL_USER_CELLS_IN_FLIGHT", 2)
EVAL_USER_CELLS_PER_DAY = env_int("EVAL_USER_CELLS_PER_DAY", 20_000)
# Rows of the results matrix on one page (each row holds a cell per column and repeat).
EVAL_PAGE_ROWS = env_int("EVAL_PAGE_ROWS", 25)
# Prices per million tokens, "provider/model=input,output" separated by spaces; the results
# matrix shows a cost column for the models named here.
EVAL_PRICES = {
    key: [float(x) for x in value.split(",")]
    for key, _, value in (item.partition("=") for item in os.environ.get("EVAL_PRICES", "").split())
}

# --- version fetch API (issues #21, #22, #27) ---
# `GET /api/v1/versions/{id}/`, the fetch by label and the shared JSON answer a text longer than
# this many characters as its head and a range URL (`?full=1`: every text whole, streamed).
PLAYGROUND_JSON_TEXT_HEAD_CHARS = env_int("PLAYGROUND_JSON_TEXT_HEAD_CHARS", 64 * 1024)

# --- streams that hold no thread (issue 21) ---
# Open run streams (`GET /api/v1/runs/{id}/stream/`) one account may hold at once, counted
# across every web process through the cache (per process with the in-memory default); past it
# 429 with Retry-After. Each open stream holds a slot lease that lives RUN_STREAM_LEASE_SECONDS
# unless the stream renews it (at every access re-check), so a crashed process frees its slots.
RUN_STREAMS_PER_USER = env_int("RUN_STREAMS_PER_USER", 8)
# An open stream re-checks the caller's access to the run this often (seconds, at most 30) and
# ends with an `error` event once it is gone (grant revoked, prompt no longer visible).
RUN_STREAM_RECHECK_SECONDS = min(30, max(1, env_int("RUN_STREAM_RECHECK_SECONDS", 30)))
RUN_STREAM_LEASE_SECONDS = max(
    env_int("RUN_STREAM_LEASE_SECONDS", 90), 2 * RUN_STREAM_RECHECK_SECONDS + 5
)
# Under the ASGI server, streams read the database on a small thread pool of their own, so all
# open streams of a web process share at most this many database connections (kept open).
RUN_STREAM_DB_THREADS = max(1, env_int("RUN_STREAM_DB_THREADS", 2))

# --- bounded cost: fair shares, failing fast (issue #21; docs/operations.md "Limits") ---
# Runs: per account, at most RUN_USER_RATE_LIMIT new runs per RUN_USER_RATE_WINDOW seconds and
# RUN_USER_ACTIVE_MAX queued or running at once (429 with Retry-After past either).
RUN_USER_RATE_LIMIT = env_int("RUN_USER_RATE_LIMIT", 60)
RUN_USER_RATE_WINDOW = env_int("RUN_USER_RATE_WINDOW", 60)
RUN_USER_ACTIVE_MAX = env_int("RUN_USER_ACTIVE_MAX", 20)
RUN_ACTIVE_RETRY_AFTER = env_int("RUN_ACTIVE_RETRY_AFTER", 10)
# Workers take the queued run of the account with the fewest running (playground/runs/fair.py).
RUN_FAIR_QUEUE = env_bool("RUN_FAIR_QUEUE", True)
# Uploads: per account, at most UPLOAD_USER_RESERVED_MAX_BYTES declared by uploads neither used
# nor expired, and UPLOAD_USER_RATE_LIMIT new uploads per UPLOAD_USER_RATE_WINDOW seconds.
UPLOAD_USER_RESERVED_MAX_BYTES = env_int("UPLOAD_USER_RESERVED_MAX_BYTES", 500 * 1024 * 1024)
UPLOAD_USER_RATE_LIMIT = env_int("UPLOAD_USER_RATE_LIMIT", 30)
UPLOAD_USER_RATE_WINDOW = env_int("UPLOAD_USER_RATE_WINDOW", 60)
# Estimators: callers not signed in get a tighter rate than ESTIMATE_RATE_LIMIT; a simulation
# runs at most ESTIMATE_SIM_MAX_REQUESTS requests (more is a 400 naming `requests`).
ESTIMATE_ANON_RATE_LIMIT = env_int("ESTIMATE_ANON_RATE_LIMIT", 60)
ESTIMATE_SIM_MAX_REQUESTS = env_int("ESTIMATE_SIM_MAX_REQUESTS", 20_000)
# Object storage's circuit breaker (textstore/objects.py): after S3_BREAKER_FAILURES calls in a
# row fail as unavailable (timeouts, refused connections, 5xx), calls fail at once with a 503
# for S3_BREAKER_COOLDOWN seconds; then one trial call goes through. S3_MAX_IN_FLIGHT caps the
# calls one process has waiting on S3 at once (more answer 503 at once), so a hung store never
# holds every web thread.
S3_BREAKER_FAILURES = env_int("S3_BREAKER_FAILURES", 3)
S3_BREAKER_COOLDOWN = env_float("S3_BREAKER_COOLDOWN", 15.0)
S3_MAX_IN_FLIGHT = env_int("S3_MAX_IN_FLIGHT", 4)
S3_IN_FLIGHT_WAIT = env_float("S3_IN_FLIGHT_WAIT", 0.5)

# --- playground flows, round two (issue 23) ---
# A diff's fold offers "Show all" only up to this many hidden lines; a longer fold opens a
# FOLD_STEP at a time (its whole text, thousands of rows, would stall the page).
PLAYGROUND_DIFF_FOLD_ALL_MAX = env_int("PLAYGROUND_DIFF_FOLD_ALL_MAX", 2000)

# --- playground flows, round three (issue 33) ---
# Rows a diff page shows per text before the rest of the diff (changes included) is folded
# behind "Show the next N lines", N at a time: a 20 MB text attached is a page of ~100 KB.
PLAYGROUND_DIFF_PAGE_ROWS = env_int("PLAYGROUND_DIFF_PAGE_ROWS", 400)

# --- bounded cost: diffs, process caches, runs, exports (issue 21) ---
# One diff (the API's, a diff page's or one of its folds, all sharing one computation): lines
# diff-match-patch may compare (the lines that differ on both sides, plus the words of changed
# lines), rows kept, and seconds of engine time. A text pair past the budget is answered "too
# large to diff in full" with what could be compared.
PLAYGROUND_DIFF_BUDGET_LINES = env_int("PLAYGROUND_DIFF_BUDGET_LINES", 20_000)
PLAYGROUND_DIFF_BUDGET_ROWS = env_int("PLAYGROUND_DIFF_BUDGET_ROWS", 150_000)
PLAYGROUND_DIFF_BUDGET_SECONDS = env_float("PLAYGROUND_DIFF_BUDGET_SECONDS", 1.0)
# Every in-process cache is bounded in bytes; together about PROCESS_CACHE_BYTES a process.
# Each share is its own setting (defaults: fractions of PROCESS_CACHE_BYTES); one entry may take
# at most half of its cache, so a huge text is read again rather than flushing the rest.
PROCESS_CACHE_BYTES = env_int("PROCESS_CACHE_BYTES", 64 * 1024 * 1024)
# Rebuilt texts (24 MiB) and the decoded snapshots/checkpoints reads start from (16 MiB).
TEXTSTORE_CACHE_BYTES = env_int("TEXTSTORE_CACHE_BYTES", PROCESS_CACHE_BYTES * 3 // 8)
TEXTSTORE_BASE_CACHE_BYTES = env_int("TEXTSTORE_BASE_CACHE_BYTES", PROCESS_CACHE_BYTES // 4)
# Version contents the fetch API answers, by content hash (8 MiB; heads and short texts only).
PLAYGROUND_FETCH_CACHE_BYTES = env_int("PLAYGROUND_FETCH_CACHE_BYTES", PROCESS_CACHE_BYTES // 8)
# Parsed deltas for range reads (4 MiB).
TEXTSTORE_DELTA_OPS_CACHE_BYTES = env_int(
    "TEXTSTORE_DELTA_OPS_CACHE_BYTES", PROCESS_CACHE_BYTES // 16
)
# Packed (compressed) version diffs (8 MiB).
PLAYGROUND_DIFF_CACHE_BYTES = env_int("PLAYGROUND_DIFF_CACHE_BYTES", PROCESS_CACHE_BYTES // 8)
# Re-anchoring's folded texts, headings and block alignments (4 MiB). The remaining 8 MiB of
# PROCESS_CACHE_BYTES is the version content cache's (playground.fetch).
REVIEWS_ANCHOR_CACHE_BYTES = env_int("REVIEWS_ANCHOR_CACHE_BYTES", PROCESS_CACHE_BYTES // 16)
# What never changes of the evaluations whose cells a process runs (their graders, columns and
# versions, evals.selectors.evaluation_facts; a few KiB each): 2 MiB, beside the shares above,
# in the processes that run cells (a Celery worker's, or the web process's without a broker).
EVAL_CELL_CACHE_BYTES = env_int("EVAL_CELL_CACHE_BYTES", PROCESS_CACHE_BYTES // 32)
# Exports: a version whose texts total more characters than this is never rendered whole to
# show it: the Export panel and the export API's JSON show each long text cut to its first
# PLAYGROUND_TEXT_HEAD_CHARS characters; the text/plain export (the panel's "Download full
# export", `?full=1`) streams the whole call a range at a time.
PLAYGROUND_EXPORT_INLINE_MAX_CHARS = env_int("PLAYGROUND_EXPORT_INLINE_MAX_CHARS", 256 * 1024)

# --- critique (docs/critique.md) ---
# The offline `fixture` provider streams a recorded reply in pieces this far apart (0: at once).
RUN_FIXTURE_DELAY_MS = env_int("RUN_FIXTURE_DELAY_MS", 15)

# --- change requests (docs/design.md, Prompt change review) ---
# @mentions in a request's threads are mailed through Django's email backend: the console by
# default (development); set EMAIL_BACKEND and EMAIL_HOST… to send for real.
EMAIL_BACKEND = os.environ.get("EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
EMAIL_HOST = os.environ.get("EMAIL_HOST", "localhost")
EMAIL_PORT = env_int("EMAIL_PORT", 25)
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "redline@localhost")
# Reviewers a request may name, and @mentions one reply may notify.
CHANGE_REVIEWERS_MAX = env_int("CHANGE_REVIEWERS_MAX", 20)
CHANGE_MENTIONS_MAX = env_int("CHANGE_MENTIONS_MAX", 10)

# Webhooks (docs/operations.md, Webhooks): signed POSTs to an owner's URL per prompt.
WEBHOOKS_PER_USER = env_int("WEBHOOKS_PER_USER", 20)
WEBHOOKS_LIMIT_RETRY_AFTER = env_int("WEBHOOKS_LIMIT_RETRY_AFTER", 3600)
# Loopback, private and reserved addresses are refused (SSRF) unless this is set (development).
WEBHOOK_ALLOW_PRIVATE_URLS = env_bool("WEBHOOK_ALLOW_PRIVATE_URLS", False)
WEBHOOK_TIMEOUT_SECONDS = env_float("WEBHOOK_TIMEOUT_SECONDS", 5.0)
WEBHOOK_MAX_ATTEMPTS = env_int("WEBHOOK_MAX_ATTEMPTS", 6)
# Waits between attempts: this, doubling (30 s, 1 min, 2 min, 4 min, 8 min).
WEBHOOK_RETRY_BASE_SECONDS = env_float("WEBHOOK_RETRY_BASE_SECONDS", 30.0)
WEBHOOK_TASK_QUEUE = os.environ.get("WEBHOOK_TASK_QUEUE", "celery")
# Without a broker: "thread" sends on a pool of WEBHOOK_EAGER_THREADS threads of the web process,
# "inline" in the caller.
WEBHOOK_EAGER_MODE = os.environ.get("WEBHOOK_EAGER_MODE", "thread")
WEBHOOK_EAGER_THREADS = env_int("WEBHOOK_EAGER_THREADS", 4)
# Secrets are derived from this (default: SECRET_KEY); changing it changes every secret.
WEBHOOK_SECRET_KEY = os.environ.get("WEBHOOK_SECRET_KEY", "")
