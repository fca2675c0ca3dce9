"""Shared fixtures: real parts wherever a user has them.

- `s3_server`: a moto S3 server over HTTP on loopback (one per test session), with a bucket.
- `s3_storage`: points the app's object storage at that server for one test.
- `chromium_path`: Debian's Chromium, or a skip with the reason.
- `migrated_sqlite`: a SQLite database with every migration applied, made once per test run,
  for tests that start the app in a subprocess on a fresh database (`sqlite_copy` it).
- `_answers_match_the_schema` (every test): each `/api/v1/` answer is checked against its
  operation in the OpenAPI schema (tests/schemacheck.py).
"""

import contextlib
import copy
import fcntl
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import time
import uuid
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from config.security import upload_connect_origins

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = os.environ.get("REDLINE_CHROMIUM", "/usr/bin/chromium")
ARTIFACTS = Path(
    os.environ.get(
        "REDLINE_TEST_ARTIFACTS", Path(__file__).parent.parent / "var" / "test-artifacts"
    )
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# How long a test's server process may take to listen (issue 33: on a busy machine, at load ~14
# on 2 cores, a fixed 20 s was not enough). Generous by default; a process that has died fails
# the wait at once, with its exit code and the end of its log.
READY_TIMEOUT = float(os.environ.get("REDLINE_TEST_READY_TIMEOUT", "180"))


def wait_for_port(
    port: int,
    timeout: float | None = None,
    *,
    process: subprocess.Popen | None = None,
    log: Path | None = None,
) -> None:
    """Until something listens on 127.0.0.1:`port`: at most `timeout` seconds (by default
    REDLINE_TEST_READY_TIMEOUT, 180), failing early only when `process` has exited."""
    timeout = READY_TIMEOUT if timeout is None else max(timeout, READY_TIMEOUT)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        if process is not None and process.poll() is not None:
            tail = log.read_text(errors="replace")[-2000:] if log and log.exists() else ""
            raise RuntimeError(
                f"the server for 127.0.0.1:{port} exited with {process.returncode} before it "
                f"listened{': ' + tail if tail else ''}"
            )
        time.sleep(0.05)
    raise RuntimeError(
        f"nothing listened on 127.0.0.1:{port} within {timeout:.0f}s "
        "(REDLINE_TEST_READY_TIMEOUT raises the wait)"
    )


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix, tmp_path_factory):
    """On SQLite the test database is a file (WAL, the busy timeout), as `make run` uses, not
    Django's shared-cache in-memory database: there a write from one thread (a run's worker,
    the live server) fails at once with "database table is locked" while another thread
    reads the same table, where a file database waits its turn."""
    from django.conf import settings

    database = settings.DATABASES["default"]
    if database["ENGINE"] == "django.db.backends.sqlite3":
        folder = tmp_path_factory.mktemp("database")
        database.setdefault("TEST", {})["NAME"] = str(folder / "test.sqlite3")


@pytest.fixture(scope="session")
def s3_server() -> Iterator[dict[str, str]]:
    """A moto S3 server process on loopback. Reuses one given by S3_ENDPOINT_URL (CI)."""
    if os.environ.get("S3_ENDPOINT_URL"):
        yield {
            "endpoint_url": os.environ["S3_ENDPOINT_URL"],
            "access_key": os.environ.get("S3_ACCESS_KEY_ID", "test"),
            "secret_key": os.environ.get("S3_SECRET_ACCESS_KEY", "test"),
        }
        return
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, process=proc)
        yield {
            "endpoint_url": f"http://127.0.0.1:{port}",
            "access_key": "test",
            "secret_key": "test",
        }
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def sqlite_copy(source: Path, target: Path) -> None:
    """Copy a SQLite database consistently (its WAL included), through SQLite's backup API."""
    with (
        contextlib.closing(sqlite3.connect(source)) as src,
        contextlib.closing(sqlite3.connect(target)) as dst,
    ):
        src.backup(dst)


def migrate(env: dict[str, str]) -> None:
    """`manage.py migrate` in a subprocess, on the database `env` names."""
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"],
        cwd=ROOT,
        env=env,
        check=True,
        timeout=600,
    )


def _fresh_test_database_is_migrated(config: pytest.Config) -> bool:
    """Whether pytest-django's test database is SQLite, created fresh with every migration."""
    from django.conf import settings

    return (
        settings.DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3"
        and not config.getoption("reuse_db")
        and not config.getoption("nomigrations")
    )


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, request, tmp_path_factory) -> None:
    """pytest-django's test database (when a collected test needs one); on SQLite, also a
    copy of it as its migrations left it, which `migrated_sqlite` hands out."""
    from django.conf import settings
    from django.db import connection

    test_database = Path(settings.DATABASES["default"].get("TEST", {}).get("NAME") or "-")
    if (
        _fresh_test_database_is_migrated(request.config)
        and Path(connection.settings_dict["NAME"]) == test_database
        and test_database.exists()
    ):
        sqlite_copy(test_database, _migrated_copy(tmp_path_factory))


def _migrated_copy(tmp_path_factory) -> Path:
    return tmp_path_factory.getbasetemp() / "test-database-migrated.sqlite3"


@pytest.fixture(scope="session")
def migrated_sqlite(request, tmp_path_factory, worker_id) -> Path:
    """A SQLite database with every migration applied (the question bank included). Tests that
    start the app in a subprocess on a fresh database copy it (`sqlite_copy`) instead of each
    running `manage.py migrate`, which takes seconds. On SQLite it is the copy of the test
    database that `django_db_setup` made right after migrating it; otherwise (PostgreSQL, or
    no test needs the test database) `manage.py migrate` builds it once per test run, shared
    by the xdist workers (the first one to ask builds it under a lock)."""
    if _fresh_test_database_is_migrated(request.config):
        request.getfixturevalue("django_db_setup")
        if _migrated_copy(tmp_path_factory).exists():
            return _migrated_copy(tmp_path_factory)
    root = tmp_path_factory.getbasetemp()
    if worker_id != "master":
        root = root.parent  # the run's directory, above each worker's own
    template = root / "migrated.sqlite3"
    with (root / "migrated.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not template.exists():
            build = root / "migrated-build"
            build.mkdir(exist_ok=True)
            env = {
                k: v
                for k, v in os.environ.items()
                if not k.startswith(("DJANGO_", "PYTEST", "S3_")) and k != "DATABASE_URL"
            }
            env.update(
                DJANGO_SETTINGS_MODULE="config.settings",
                REDLINE_DATA_DIR=str(build),
                DATABASE_URL=f"sqlite:///{build / 'redline.sqlite3'}",
            )
            migrate(env)
            sqlite_copy(build / "redline.sqlite3", template)
    return template


@pytest.fixture
def s3_storage(s3_server, settings) -> dict[str, str]:
    """Object storage on the moto server, in a fresh bucket for this test."""
    import boto3

    bucket = f"redline-test-{uuid.uuid4().hex[:12]}"
    client = boto3.client(
        "s3",
        endpoint_url=s3_server["endpoint_url"],
        aws_access_key_id=s3_server["access_key"],
        aws_secret_access_key=s3_server["secret_key"],
        region_name="us-east-1",
    )
    client.create_bucket(Bucket=bucket)
    settings.S3_ENDPOINT_URL = s3_server["endpoint_url"]
    settings.S3_BUCKET = bucket
    settings.S3_ACCESS_KEY_ID = s3_server["access_key"]
    settings.S3_SECRET_ACCESS_KEY = s3_server["secret_key"]
    settings.S3_REGION = "us-east-1"
    # As config/settings.py does at start-up: the editor's script may PUT presigned uploads to
    # the S3 endpoint (the moto server allows any origin through CORS, as a real bucket's CORS
    # rule does for the site's origin; docs/operations.md).
    origins = upload_connect_origins(bucket=bucket, endpoint=s3_server["endpoint_url"], explicit="")
    policy = copy.deepcopy(settings.CONTENT_SECURITY_POLICY)
    policy["DIRECTIVES"]["connect-src"] = ["'self'", *origins]
    settings.CONTENT_SECURITY_POLICY = policy
    settings.UPLOAD_CONNECT_ORIGINS = origins
    return {**s3_server, "bucket": bucket}


@pytest.fixture
def local_storage(tmp_path, settings) -> Path:
    """Object storage on local disk in a fresh folder (the embedded default)."""
    settings.S3_BUCKET = ""
    settings.OBJECT_STORE_DIR = tmp_path / "objects"
    return settings.OBJECT_STORE_DIR


# Services mode (.ci/run's second pass): every test's object storage is a bucket on the moto
# server this test run starts, instead of a local folder.
USE_S3_EVERYWHERE = os.environ.get("REDLINE_TEST_S3") == "1"
# Set by .ci/run for the services pass: the services tests must run there, not skip.
EXPECT_SERVICES = os.environ.get("REDLINE_EXPECT_SERVICES") == "1"


@pytest.fixture(autouse=True)
def _isolated_object_store(request, tmp_path_factory, settings) -> None:
    """Every test gets its own object store: a fresh local folder, or a fresh S3 bucket."""
    if USE_S3_EVERYWHERE:
        request.getfixturevalue("s3_storage")
    elif "s3_storage" not in request.fixturenames:
        settings.S3_BUCKET = ""
        settings.OBJECT_STORE_DIR = tmp_path_factory.mktemp("objects")


@pytest.fixture(scope="session")
def api_schema():
    """The app's OpenAPI document as `/api/schema/` serves it, generated once per session."""
    from tests.schemacheck import api_schema_load

    return api_schema_load()


@pytest.fixture(autouse=True)
def _answers_match_the_schema(request, monkeypatch) -> Iterator[None]:
    """Every answer under /api/v1/ in every test must match its operation's schema: status
    documented, content type documented, JSON body valid. A mismatch fails the test, naming
    the operation, method, path and status (tests/schemacheck.py). Tests marked
    `schema_checked_by_test` check answers themselves (schemathesis)."""
    if request.node.get_closest_marker("schema_checked_by_test"):
        yield
        return
    from django.core.handlers.base import BaseHandler

    from tests.schemacheck import ResponseChecker

    checker = ResponseChecker()  # the schema is generated at the first API answer
    get_response = BaseHandler.get_response

    def checked_get_response(self, http_request):
        response = get_response(self, http_request)
        checker.check(http_request, response)
        return response

    monkeypatch.setattr(BaseHandler, "get_response", checked_get_response)
    yield
    if checker.elsewhere:
        pytest.fail("\n".join(str(problem) for problem in checker.elsewhere), pytrace=False)


@pytest.fixture(autouse=True)
def _question_bank(request) -> None:
    """The question bank comes from a data migration; a transactional test's flush empties it,
    so put it back for every database test that follows."""
    marker = request.node.get_closest_marker("django_db")
    if marker is None:
        return
    transactional = marker.kwargs.get("transaction", False)
    request.getfixturevalue("transactional_db" if transactional else "db")
    from questionbank.models import Question
    from questionbank.seed import questions_load

    if not Question.objects.exists():
        questions_load()


@pytest.fixture(autouse=True)
def _empty_django_cache() -> Iterator[None]:
    """Rate-limit counters and log throttles keyed by ids must not leak between tests (SQLite
    reuses ids after a rollback)."""
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


@pytest.fixture(autouse=True)
def _closed_s3_breaker() -> Iterator[None]:
    """The object store's circuit breaker is per process: a test that hangs S3 must not leave
    it open for the next one (textstore/objects.py)."""
    from textstore.objects import breaker

    breaker.reset()
    yield
    breaker.reset()


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings) -> None:
    """Tests create many accounts; PBKDF2's deliberate slowness buys nothing here."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _eager_tasks(request) -> Iterator[None]:
    """Tasks run in-process unless a test asks for the real worker (`celery_worker`)."""
    from config.celery import app

    eager = "celery_worker" not in request.fixturenames
    previous = app.conf.task_always_eager
    app.conf.task_always_eager = eager
    yield
    app.conf.task_always_eager = previous


@pytest.fixture(scope="session")
def celery_worker(django_db_setup, django_db_blocker) -> Iterator[subprocess.Popen]:
    """A real Celery worker process on the configured broker, using the test database.

    Skips (or fails, in the services pass) when no broker is configured.
    """
    from django.conf import settings
    from django.db import connection

    from config.celery import app

    if not settings.CELERY_BROKER_URL:
        if EXPECT_SERVICES:
            pytest.fail("CELERY_BROKER_URL is not set in the services pass")
        pytest.skip("needs CELERY_BROKER_URL (Redis) for a real Celery worker")
    env = dict(os.environ)
    db = settings.DATABASES["default"]
    if db["ENGINE"].endswith("postgresql"):
        user = db.get("USER") or ""
        host = db.get("HOST") or "127.0.0.1"
        port = db.get("PORT") or 5432
        env["DATABASE_URL"] = f"postgres://{user}@{host}:{port}/{connection.settings_dict['NAME']}"
    else:
        env["DATABASE_URL"] = f"sqlite:///{connection.settings_dict['NAME']}"
    env["DB_CONN_MAX_AGE"] = "0"  # never hold a connection that would block the test DB's drop
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "config",
            "worker",
            "--pool=solo",
            "--concurrency=1",
            "--loglevel=WARNING",
            "--without-gossip",
            "--without-mingle",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + READY_TIMEOUT
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                pytest.fail(f"celery worker exited with {proc.returncode}")
            if app.control.ping(timeout=0.5):
                break
        else:
            pytest.fail(f"celery worker did not answer a ping within {READY_TIMEOUT:.0f} s")
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture(scope="session")
def chromium_path() -> str:
    if not (os.path.exists(CHROMIUM) or shutil.which(CHROMIUM)):
        pytest.skip(f"browser test skipped: {CHROMIUM} not found (apt-get install -y chromium)")
    return CHROMIUM


@pytest.fixture
def artifacts_dir(request) -> Path:
    """Where a test saves screenshots: var/test-artifacts/<test name>/."""
    path = ARTIFACTS / request.node.name.replace("/", "_").replace("[", "-").replace("]", "")
    path.mkdir(parents=True, exist_ok=True)
    return path


# --- Browser tests: Playwright driving Debian's Chromium -------------------------------------

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="session")
def browser(chromium_path):
    # Playwright's sync API runs an event loop in this thread; Django's ORM calls from the test
    # body are still synchronous, so allow them.
    os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(
            executable_path=chromium_path, headless=True, args=CHROMIUM_ARGS
        )
        yield instance
        instance.close()


# The requests each browser context has in flight (browser_context keeps it), for
# wait_for_quiet_network.
_IN_FLIGHT: "weakref.WeakKeyDictionary[Any, set[Any]]" = weakref.WeakKeyDictionary()
QUIET_NETWORK_MS = 150


def browser_context(browser, *, base_url: str, viewport: dict[str, int] | None = None, **options):
    """A new browser context (its own cookies) with the suite's default timeout, whose
    requests in flight are counted for `wait_for_quiet_network`."""
    context = browser.new_context(
        base_url=base_url, viewport=viewport or {"width": 1280, "height": 860}, **options
    )
    context.set_default_timeout(15_000)
    in_flight: set[Any] = set()

    def started(request: Any) -> None:
        in_flight.add(request)

    def ended(request: Any) -> None:
        in_flight.discard(request)

    context.on("request", started)
    context.on("requestfinished", ended)
    context.on("requestfailed", ended)
    _IN_FLIGHT[context] = in_flight
    return context


def wait_for_quiet_network(page, *, timeout_ms: float = 15_000) -> None:
    """Playwright's "networkidle" wait with a shorter quiet window: after the load event, wait
    until no request of the page's context (documents, scripts, htmx and fetch calls, ranges)
    has been in flight for QUIET_NETWORK_MS. "networkidle" always waits 500 ms of silence,
    which was most of the time an axe-checked page took; a page here starts its follow-up
    requests at once (htmx `load` triggers, an IntersectionObserver's first callback)."""
    in_flight = _IN_FLIGHT[page.context]  # a KeyError: the context was not made by browser_context
    page.wait_for_load_state("load")
    deadline = time.monotonic() + timeout_ms / 1000
    quiet_since = None
    while True:
        now = time.monotonic()
        if in_flight:
            quiet_since = None
        elif quiet_since is None:
            quiet_since = now
        elif now - quiet_since >= QUIET_NETWORK_MS / 1000:
            return
        if now > deadline:
            urls = sorted(request.url for request in in_flight)
            raise TimeoutError(f"the network was not quiet within {timeout_ms} ms: {urls}")
        page.wait_for_timeout(25)  # lets Playwright deliver the request events


@pytest.fixture
def new_page(browser, live_server):
    """A factory of pages, each in its own browser context (its own cookies)."""
    contexts = []

    def make():
        context = browser_context(browser, base_url=live_server.url)
        contexts.append(context)
        return context.new_page()

    yield make
    for context in contexts:
        context.close()


@pytest.fixture
def page(new_page):
    return new_page()
