"""Redline settings, read from the environment through `config.env.env` (typed, strict).

With no environment at all this is the embedded default: SQLite file, media on local disk,
Celery tasks run eagerly in-process, the offline `echo` model provider. Production sets
DATABASE_URL, CELERY_BROKER_URL, S3_* and SECRET_KEY (README). docs/operations.md, "Settings
reference", says what every variable below does, with its unit; tests/test_settings_documented.py
keeps that table and this file in step. Tuning constants no deployer sets live beside the code.
"""

from pathlib import Path

import dj_database_url

from common.logging import logging_config
from config import api
from config.env import env
from config.security import content_security_policy, upload_connect_origins

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = Path(env.str("REDLINE_DATA_DIR", str(BASE_DIR / "var")))

# --- Django: secrets, hosts, HTTPS ---------------------------------------------------------------
DEBUG = env.bool("DEBUG", False)
# The embedded default runs on a developer's machine; production must set its own key.
SECRET_KEY = env.str("SECRET_KEY") or "redline-insecure-embedded-default-key"  # noqa: S105
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "testserver"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", [])
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", False)
SESSION_COOKIE_SECURE = env.bool("SESSION_COOKIE_SECURE", False)
CSRF_COOKIE_SECURE = env.bool("CSRF_COOKIE_SECURE", False)
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", False)
# "HEADER,value" as the TLS proxy sets it, e.g. "HTTP_X_FORWARDED_PROTO,https".
_header, _comma, _value = env.str("SECURE_PROXY_SSL_HEADER").partition(",")
SECURE_PROXY_SSL_HEADER = (_header.strip(), _value.strip()) if _comma else None
SECURE_REFERRER_POLICY = "same-origin"
if not DEBUG:
    SESSION_COOKIE_HTTPONLY = True
    CSRF_COOKIE_SAMESITE = "Lax"
    SECURE_CONTENT_TYPE_NOSNIFF = True
    X_FRAME_OPTIONS = "DENY"
# Proxies in front appending to X-Forwarded-For: per-client limits key on the address they give.
TRUSTED_PROXY_COUNT = env.int("TRUSTED_PROXY_COUNT", 0)

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
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
# The API's frameworks (Django REST framework, drf-spectacular): fixed by the code.
REST_FRAMEWORK = api.REST_FRAMEWORK
SPECTACULAR_SETTINGS = api.SPECTACULAR_SETTINGS

# --- Database ------------------------------------------------------------------------------------
database_url = env.str("DATABASE_URL", f"sqlite:///{DATA_DIR / 'redline.sqlite3'}")
DATABASES = {
    "default": dj_database_url.parse(database_url, conn_max_age=env.int("DB_CONN_MAX_AGE", 60))
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL lets readers run beside the writer; IMMEDIATE transactions take the write lock at
    # BEGIN, so two saves queue on the busy timeout instead of one failing "database is locked".
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "transaction_mode": "IMMEDIATE",
            "timeout": env.int("SQLITE_BUSY_TIMEOUT", 20),
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        }
    )
    DATABASES["default"]["CONN_MAX_AGE"] = 0

# --- Static files and request bodies -------------------------------------------------------------
STATIC_URL = "static/"
STATIC_ROOT = DATA_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
MEDIA_ROOT = DATA_DIR / "media"
# Serve static files from the app folders too (no collectstatic for runserver and tests).
WHITENOISE_USE_FINDERS = env.bool("WHITENOISE_USE_FINDERS", True)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "whitenoise.storage.CompressedManifestStaticFilesStorage"
            if env.bool("STATIC_MANIFEST", False)
            else "django.contrib.staticfiles.storage.StaticFilesStorage"
        )
    },
}
DATA_UPLOAD_MAX_MEMORY_SIZE = env.int("DATA_UPLOAD_MAX_MEMORY_SIZE", 8 * 1024 * 1024)
REQUEST_BODY_MAX_BYTES = env.int(
    "REQUEST_BODY_MAX_BYTES", max(16 * 1024 * 1024, 2 * DATA_UPLOAD_MAX_MEMORY_SIZE)
)

# --- Logging: one line per event (common/logging.py), JSON in production -------------------------
LOG_FORMAT = env.str("LOG_FORMAT") or ("text" if DEBUG or not env.str("DATABASE_URL") else "json")
LOGGING = logging_config(format=LOG_FORMAT, level=env.str("LOG_LEVEL", "INFO"))

# --- Email (change requests' @mentions): the console unless EMAIL_BACKEND says otherwise ---------
EMAIL_BACKEND = env.str("EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
EMAIL_HOST = env.str("EMAIL_HOST", "localhost")
EMAIL_PORT = env.int("EMAIL_PORT", 25)
DEFAULT_FROM_EMAIL = env.str("DEFAULT_FROM_EMAIL", "redline@localhost")

# --- Celery and Redis: a broker URL means real workers; without one, tasks run eagerly ----------
CELERY_BROKER_URL = env.str("CELERY_BROKER_URL")
CELERY_RESULT_BACKEND = env.str("CELERY_RESULT_BACKEND", CELERY_BROKER_URL) or None
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
# Periodic reapers (`celery -A config beat`, or a worker with -B), seconds apart.
CELERY_BEAT_SCHEDULE = {
    name: {"task": task, "schedule": every}
    for name, task, every in [
        ("playground-runs-reap-stale", "playground.runs_reap_stale", 60.0),
        ("playground-runs-redispatch", "playground.runs_redispatch", 30.0),
        ("playground-uploads-expire", "playground.uploads_expire", 600.0),
        ("evals-reap", "evals.evaluations_reap", 60.0),
    ]
}
# The cache (rate limits, stream slots, hot reads): Redis when REDIS_URL is set.
REDIS_URL = env.str("REDIS_URL")
CACHES = {
    "default": (
        {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}
        if REDIS_URL
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "redline"}
    )
}

# --- In-process caches (bytes): each a share of PROCESS_CACHE_BYTES unless set ------------------
PROCESS_CACHE_BYTES = env.int("PROCESS_CACHE_BYTES", 64 * 1024 * 1024)
TEXTSTORE_CACHE_BYTES = env.int("TEXTSTORE_CACHE_BYTES", PROCESS_CACHE_BYTES * 3 // 8)
TEXTSTORE_BASE_CACHE_BYTES = env.int("TEXTSTORE_BASE_CACHE_BYTES", PROCESS_CACHE_BYTES // 4)
TEXTSTORE_DELTA_OPS_CACHE_BYTES = env.int(
    "TEXTSTORE_DELTA_OPS_CACHE_BYTES", PROCESS_CACHE_BYTES // 16
)
PLAYGROUND_FETCH_CACHE_BYTES = env.int("PLAYGROUND_FETCH_CACHE_BYTES", PROCESS_CACHE_BYTES // 8)
PLAYGROUND_DIFF_CACHE_BYTES = env.int("PLAYGROUND_DIFF_CACHE_BYTES", PROCESS_CACHE_BYTES // 8)
REVIEWS_ANCHOR_CACHE_BYTES = env.int("REVIEWS_ANCHOR_CACHE_BYTES", PROCESS_CACHE_BYTES // 16)
EVAL_CELL_CACHE_BYTES = env.int("EVAL_CELL_CACHE_BYTES", PROCESS_CACHE_BYTES // 32)

# --- accounts: log-in and sign-up limits (per window of seconds, then 429) ----------------------
LOGIN_FAILURE_LIMIT_ACCOUNT = env.int("LOGIN_FAILURE_LIMIT_ACCOUNT", 10)
LOGIN_FAILURE_LIMIT_ADDRESS = env.int("LOGIN_FAILURE_LIMIT_ADDRESS", 50)
LOGIN_FAILURE_WINDOW = env.int("LOGIN_FAILURE_WINDOW", 900)
SIGNUP_RATE_LIMIT = env.int("SIGNUP_RATE_LIMIT", 10)
SIGNUP_RATE_WINDOW = env.int("SIGNUP_RATE_WINDOW", 3600)

# --- questionbank: estimators ------------------------------------------------------------------
ESTIMATE_RATE_LIMIT = env.int("ESTIMATE_RATE_LIMIT", 240)
ESTIMATE_RATE_WINDOW = env.int("ESTIMATE_RATE_WINDOW", 60)
ESTIMATE_ANON_RATE_LIMIT = env.int("ESTIMATE_ANON_RATE_LIMIT", 60)
ESTIMATE_SIM_MAX_REQUESTS = env.int("ESTIMATE_SIM_MAX_REQUESTS", 20_000)

# --- textstore: object storage (S3 when S3_BUCKET is set, else local disk) and storage policy ---
S3_ENDPOINT_URL = env.str("S3_ENDPOINT_URL")
S3_BUCKET = env.str("S3_BUCKET")
S3_REGION = env.str("S3_REGION", "us-east-1")
S3_ACCESS_KEY_ID = env.str("S3_ACCESS_KEY_ID")
S3_SECRET_ACCESS_KEY = env.str("S3_SECRET_ACCESS_KEY")
OBJECT_STORE_DIR = Path(env.str("OBJECT_STORE_DIR", str(DATA_DIR / "objects")))
# A silent S3 must not hold a web worker: bounded calls, then a circuit breaker (503 at once).
S3_CONNECT_TIMEOUT = env.float("S3_CONNECT_TIMEOUT", 2.0)
S3_READ_TIMEOUT = env.float("S3_READ_TIMEOUT", 2.0)
S3_MAX_ATTEMPTS = env.int("S3_MAX_ATTEMPTS", 1)
S3_BREAKER_FAILURES = env.int("S3_BREAKER_FAILURES", 3)
S3_BREAKER_COOLDOWN = env.float("S3_BREAKER_COOLDOWN", 15.0)
S3_MAX_IN_FLIGHT = env.int("S3_MAX_IN_FLIGHT", 4)
S3_IN_FLIGHT_WAIT = env.float("S3_IN_FLIGHT_WAIT", 0.5)
TEXTSTORE_GC_GRACE = env.int("TEXTSTORE_GC_GRACE", 24 * 3600)
TEXTSTORE_MAX_CHAIN = env.int("TEXTSTORE_MAX_CHAIN", 100)
TEXTSTORE_INLINE_MAX = env.int("TEXTSTORE_INLINE_MAX", 256 * 1024)
TEXTSTORE_CHUNK_CHARS = env.int("TEXTSTORE_CHUNK_CHARS", 256 * 1024)
TEXTSTORE_REBUILD_BUDGET_CHARS = env.int("TEXTSTORE_REBUILD_BUDGET_CHARS", 160_000_000)

# --- playground: uploads and the editor ---------------------------------------------------------
UPLOAD_MAX_BYTES = env.int("UPLOAD_MAX_BYTES", 100 * 1024 * 1024)
UPLOAD_EXPIRES_SECONDS = env.int("UPLOAD_EXPIRES_SECONDS", 900)
UPLOAD_USER_RESERVED_MAX_BYTES = env.int("UPLOAD_USER_RESERVED_MAX_BYTES", 500 * 1024 * 1024)
UPLOAD_USER_RATE_LIMIT = env.int("UPLOAD_USER_RATE_LIMIT", 30)
UPLOAD_USER_RATE_WINDOW = env.int("UPLOAD_USER_RATE_WINDOW", 60)
EDITOR_UPLOAD_THRESHOLD_BYTES = env.int("EDITOR_UPLOAD_THRESHOLD_BYTES", 256 * 1024)
EDITOR_INPLACE_MAX_BYTES = env.int("EDITOR_INPLACE_MAX_BYTES", 4 * 1024 * 1024)

# --- playground: pages, long texts, diffs, exports, sharing (characters unless named) ----------
PLAYGROUND_TREE_WINDOW = env.int("PLAYGROUND_TREE_WINDOW", 50)
PLAYGROUND_TREE_ANCESTRY = env.int("PLAYGROUND_TREE_ANCESTRY", 50)
PLAYGROUND_TREE_MAX = env.int("PLAYGROUND_TREE_MAX", 2000)
PLAYGROUND_TEXT_HEAD_CHARS = env.int("PLAYGROUND_TEXT_HEAD_CHARS", 16 * 1024)
PLAYGROUND_TEXT_PAGE_CHARS = env.int("PLAYGROUND_TEXT_PAGE_CHARS", 64 * 1024)
PLAYGROUND_TEXT_RANGE_MAX_CHARS = env.int("PLAYGROUND_TEXT_RANGE_MAX_CHARS", 1024 * 1024)
PLAYGROUND_TEXT_STREAM_CHARS = env.int("PLAYGROUND_TEXT_STREAM_CHARS", 256 * 1024)
PLAYGROUND_JSON_TEXT_HEAD_CHARS = env.int("PLAYGROUND_JSON_TEXT_HEAD_CHARS", 64 * 1024)
PLAYGROUND_DOWNLOAD_PRESIGN_MIN_CHARS = env.int(
    "PLAYGROUND_DOWNLOAD_PRESIGN_MIN_CHARS", 1024 * 1024
)
PLAYGROUND_PAGE_FULL_TEXT_MAX_CHARS = env.int("PLAYGROUND_PAGE_FULL_TEXT_MAX_CHARS", 256 * 1024)
PLAYGROUND_EXPORT_INLINE_MAX_CHARS = env.int("PLAYGROUND_EXPORT_INLINE_MAX_CHARS", 256 * 1024)
PLAYGROUND_DIFF_LARGE_CHARS = env.int("PLAYGROUND_DIFF_LARGE_CHARS", 1024 * 1024)
PLAYGROUND_DIFF_FOLD_ALL_MAX = env.int("PLAYGROUND_DIFF_FOLD_ALL_MAX", 2000)
PLAYGROUND_DIFF_PAGE_ROWS = env.int("PLAYGROUND_DIFF_PAGE_ROWS", 400)
PLAYGROUND_DIFF_BUDGET_LINES = env.int("PLAYGROUND_DIFF_BUDGET_LINES", 20_000)
PLAYGROUND_DIFF_BUDGET_ROWS = env.int("PLAYGROUND_DIFF_BUDGET_ROWS", 150_000)
PLAYGROUND_DIFF_BUDGET_SECONDS = env.float("PLAYGROUND_DIFF_BUDGET_SECONDS", 1.0)
SHARE_PRESIGNED_TTL = env.int("SHARE_PRESIGNED_TTL", 300)
SHARE_GUESS_LIMIT = env.int("SHARE_GUESS_LIMIT", 30)
SHARE_GUESS_WINDOW = env.int("SHARE_GUESS_WINDOW", 60)

# --- playground: runs, providers and run streams ------------------------------------------------
# Provider keys and base URLs, under the SDKs' own names (OPENAI_BASE_URL alone is enough for a
# keyless OpenAI-compatible server).
ANTHROPIC_API_KEY = env.str("ANTHROPIC_API_KEY")
ANTHROPIC_BASE_URL = env.str("ANTHROPIC_BASE_URL")
OPENAI_API_KEY = env.str("OPENAI_API_KEY")
OPENAI_BASE_URL = env.str("OPENAI_BASE_URL")
RUN_PROVIDER_TIMEOUT = env.float("RUN_PROVIDER_TIMEOUT", 60.0)
RUN_RETRY_ATTEMPTS = env.int("RUN_RETRY_ATTEMPTS", 3)
RUN_RETRY_MAX_WAIT = env.float("RUN_RETRY_MAX_WAIT", 20.0)
RUN_ECHO_DELAY_MS = env.int("RUN_ECHO_DELAY_MS", 30)
RUN_FIXTURE_DELAY_MS = env.int("RUN_FIXTURE_DELAY_MS", 15)
RUN_FLUSH_INTERVAL_MS = env.int("RUN_FLUSH_INTERVAL_MS", 50)
RUN_STALE_SECONDS = env.int("RUN_STALE_SECONDS", 300)
RUN_QUEUED_MAX_SECONDS = env.int("RUN_QUEUED_MAX_SECONDS", 900)
RUN_REDISPATCH_SECONDS = env.int("RUN_REDISPATCH_SECONDS", 120)
RUN_TASK_QUEUE = env.str("RUN_TASK_QUEUE", "celery")
RUN_EAGER_MODE = env.str("RUN_EAGER_MODE", "thread")
RUN_USER_RATE_LIMIT = env.int("RUN_USER_RATE_LIMIT", 60)
RUN_USER_RATE_WINDOW = env.int("RUN_USER_RATE_WINDOW", 60)
RUN_USER_ACTIVE_MAX = env.int("RUN_USER_ACTIVE_MAX", 20)
RUN_FAIR_QUEUE = env.bool("RUN_FAIR_QUEUE", True)
RUN_STREAMS_PER_USER = env.int("RUN_STREAMS_PER_USER", 8)
RUN_STREAM_MAX_SECONDS = env.int("RUN_STREAM_MAX_SECONDS", 600)
RUN_STREAM_RECHECK_SECONDS = min(30, max(1, env.int("RUN_STREAM_RECHECK_SECONDS", 30)))
RUN_STREAM_DB_THREADS = max(1, env.int("RUN_STREAM_DB_THREADS", 2))

# --- reviews ------------------------------------------------------------------------------------
REVIEW_CARDS_WINDOW = env.int("REVIEW_CARDS_WINDOW", 10)

# --- evals (docs/evals.md) ----------------------------------------------------------------------
EVAL_TESTSET_ROWS_MAX = env.int("EVAL_TESTSET_ROWS_MAX", 1000)
EVAL_TESTSET_STORAGE_PER_USER = env.int("EVAL_TESTSET_STORAGE_PER_USER", 100 * 1024 * 1024)
EVAL_CELLS_MAX = env.int("EVAL_CELLS_MAX", 5000)
EVALS_ACTIVE_PER_USER = env.int("EVALS_ACTIVE_PER_USER", 3)
EVAL_USER_CELLS_IN_FLIGHT = env.int("EVAL_USER_CELLS_IN_FLIGHT", 2)
EVAL_USER_CELLS_PER_DAY = env.int("EVAL_USER_CELLS_PER_DAY", 20_000)
EVAL_RETRY_SECONDS = env.int("EVAL_RETRY_SECONDS", 30)
EVAL_STALL_SECONDS = env.float("EVAL_STALL_SECONDS", 120.0)
EVAL_TASK_QUEUE = env.str("EVAL_TASK_QUEUE", "celery")
EVAL_EAGER_MODE = env.str("EVAL_EAGER_MODE", "thread")
# Cells running at once per provider across every worker: "echo=16 anthropic=4".
EVAL_PROVIDER_CONCURRENCY_DEFAULT = env.int("EVAL_PROVIDER_CONCURRENCY_DEFAULT", 4)
EVAL_PROVIDER_CONCURRENCY = env.pairs("EVAL_PROVIDER_CONCURRENCY", "echo=16", int)
EVAL_REGEX_BUDGET_SECONDS = env.float("EVAL_REGEX_BUDGET_SECONDS", 0.25)
EVAL_CELL_SOFT_TIME_LIMIT = env.int("EVAL_CELL_SOFT_TIME_LIMIT", 300)
EVAL_CELL_TIME_LIMIT_GRACE = env.int("EVAL_CELL_TIME_LIMIT_GRACE", 30)
EVAL_CELL_GRADE_ATTEMPTS_MAX = env.int("EVAL_CELL_GRADE_ATTEMPTS_MAX", 3)
# Prices per million tokens for the results' cost column: "provider/model=input,output ...".
EVAL_PRICES = env.pairs("EVAL_PRICES", "", lambda v: [float(x) for x in v.split(",")])

# --- changes ------------------------------------------------------------------------------------
CHANGE_REVIEWERS_MAX = env.int("CHANGE_REVIEWERS_MAX", 20)
CHANGE_MENTIONS_MAX = env.int("CHANGE_MENTIONS_MAX", 10)

# --- webhooks -----------------------------------------------------------------------------------
WEBHOOKS_PER_USER = env.int("WEBHOOKS_PER_USER", 20)
WEBHOOK_ALLOW_PRIVATE_URLS = env.bool("WEBHOOK_ALLOW_PRIVATE_URLS", False)
WEBHOOK_TIMEOUT_SECONDS = env.float("WEBHOOK_TIMEOUT_SECONDS", 5.0)
WEBHOOK_MAX_ATTEMPTS = env.int("WEBHOOK_MAX_ATTEMPTS", 6)
WEBHOOK_RETRY_BASE_SECONDS = env.float("WEBHOOK_RETRY_BASE_SECONDS", 30.0)
WEBHOOK_TASK_QUEUE = env.str("WEBHOOK_TASK_QUEUE", "celery")
WEBHOOK_EAGER_MODE = env.str("WEBHOOK_EAGER_MODE", "thread")
WEBHOOK_EAGER_THREADS = env.int("WEBHOOK_EAGER_THREADS", 4)
# Webhook secrets derive from this (default: SECRET_KEY); changing it changes every secret.
WEBHOOK_SECRET_KEY = env.str("WEBHOOK_SECRET_KEY")

# --- Content-Security-Policy (django-csp, config/security.py): the editor may also PUT uploads to
# the S3 endpoint's origin, or to UPLOAD_CONNECT_ORIGINS (space-separated) when set.
UPLOAD_CONNECT_ORIGINS = upload_connect_origins(
    bucket=S3_BUCKET, endpoint=S3_ENDPOINT_URL, explicit=env.str("UPLOAD_CONNECT_ORIGINS")
)
CONTENT_SECURITY_POLICY = content_security_policy(connect_origins=UPLOAD_CONNECT_ORIGINS)
