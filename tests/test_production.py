"""Production settings and the production server (issue #10 §3 and §6).

- every page carries the Content-Security-Policy; HTTPS settings switch on from the
  environment and `manage.py check --deploy` is clean with the documented production
  environment;
- gunicorn with the shipped `gunicorn.conf.py` (uvicorn workers over `config.asgi`) never writes
  a share token to its access log;
- on the embedded SQLite default, 16 parallel saves from one parent through gunicorn all
  succeed (WAL, IMMEDIATE transactions, a busy timeout).
"""

import json
import os
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.test import Client

from tests.conftest import free_port, sqlite_copy, wait_for_port

ROOT = Path(__file__).resolve().parent.parent

# The production environment the README documents (values are examples).
PRODUCTION_ENV = {
    "SECRET_KEY": "k3y-" + "x7Qp2vLm9sTz4wRb8nYc6dHf1gJk5" * 2,
    "ALLOWED_HOSTS": "redline.example.com",
    "CSRF_TRUSTED_ORIGINS": "https://redline.example.com",
    "SECURE_SSL_REDIRECT": "1",
    "SESSION_COOKIE_SECURE": "1",
    "CSRF_COOKIE_SECURE": "1",
    "SECURE_HSTS_SECONDS": "31536000",
    "SECURE_HSTS_INCLUDE_SUBDOMAINS": "1",
    "SECURE_HSTS_PRELOAD": "1",
    "SECURE_PROXY_SSL_HEADER": "HTTP_X_FORWARDED_PROTO,https",
    "TRUSTED_PROXY_COUNT": "1",
    "WHITENOISE_USE_FINDERS": "0",
    "STATIC_MANIFEST": "1",
}


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "PYTEST"))}
    env.pop("DATABASE_URL", None)
    env.pop("CELERY_BROKER_URL", None)
    env.pop("REDIS_URL", None)
    env.pop("S3_BUCKET", None)
    env.update(extra)
    return env


@pytest.mark.django_db
def test_every_page_has_the_content_security_policy():
    for url in ("/", "/accounts/login/", "/questions/", "/s/rl_not_a_real_token_at_all"):
        response = Client().get(url)
        policy = response["Content-Security-Policy"]
        directives = dict(
            part.strip().split(" ", 1) for part in policy.split(";") if " " in part.strip()
        )
        assert directives["default-src"] == "'self'", url
        assert directives["script-src"] == "'self'"
        assert directives["img-src"] == "'self' data:"
        assert "unsafe-inline" not in directives["script-src"]
        assert "unsafe-inline" not in directives["style-src"]
        assert directives["frame-ancestors"] == "'none'"


def test_https_settings_switch_on_from_the_environment_and_check_deploy_is_clean(tmp_path):
    env = _env(REDLINE_DATA_DIR=str(tmp_path), **PRODUCTION_ENV)
    # One process (Django starts in seconds): `manage.py check --deploy --fail-level WARNING`,
    # then the settings it read.
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "import django, json; django.setup()\n"
            "from django.core.management import call_command\n"
            "call_command('check', deploy=True, fail_level='WARNING')\n"
            "from django.conf import settings as s\n"
            "print(json.dumps([s.SECURE_SSL_REDIRECT, s.SESSION_COOKIE_SECURE, "
            "s.CSRF_COOKIE_SECURE, s.SECURE_HSTS_SECONDS, list(s.SECURE_PROXY_SSL_HEADER)]))",
        ],
        cwd=ROOT,
        env={**env, "DJANGO_SETTINGS_MODULE": "config.settings"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    checked, printed = result.stdout.strip().splitlines()
    assert "no issues" in checked
    assert json.loads(printed) == [
        True,
        True,
        True,
        31536000,
        ["HTTP_X_FORWARDED_PROTO", "https"],
    ]
    # Without that environment the embedded default reports what production must set.
    bare = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy"],
        cwd=ROOT,
        env=_env(REDLINE_DATA_DIR=str(tmp_path)),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "security.W004" in bare.stdout + bare.stderr  # HSTS off by default


# --- gunicorn on a fresh SQLite file ---------------------------------------------------------


SETUP = """
from accounts.services import api_token_create, user_create
from playground.services import prompt_create
from playground.models import PromptVersion
owner = user_create(username="racer", password="correct-horse-battery-staple")
prompt, root = prompt_create(actor=owner, title="race", content={"system": "root"})
_, key = api_token_create(actor=owner)
print(key, prompt.pk, root.pk)
"""


@pytest.fixture(scope="module")
def gunicorn_sqlite(tmp_path_factory, migrated_sqlite) -> Iterator[dict]:
    """gunicorn -c gunicorn.conf.py config.asgi (uvicorn workers, as `make serve` runs it) on
    the embedded default (a fresh SQLite file, migrated)."""
    data = tmp_path_factory.mktemp("gunicorn")
    env = _env(
        REDLINE_DATA_DIR=str(data),
        DATABASE_URL=f"sqlite:///{data / 'redline.sqlite3'}",
        OBJECT_STORE_DIR=str(data / "objects"),
    )
    sqlite_copy(migrated_sqlite, data / "redline.sqlite3")
    created = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", SETUP],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    )
    key, prompt_id, root_id = created.stdout.split()[-3:]
    port = free_port()
    access_log = data / "access.log"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "-c",
            "gunicorn.conf.py",
            "config.asgi",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            "2",
            "--access-logfile",
            str(access_log),
            "--error-logfile",
            str(data / "error.log"),
        ],
        cwd=ROOT,
        env=env,
    )
    try:
        wait_for_port(port, process=proc)
        yield {
            "url": f"http://127.0.0.1:{port}",
            "key": key,
            "prompt": int(prompt_id),
            "root": int(root_id),
            "access_log": access_log,
            "database": data / "redline.sqlite3",
        }
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _request(url: str, *, key: str = "", body: dict | None = None, headers=None):
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode() if body is not None else None,
        headers={
            "Content-Type": "application/json",
            **({"Authorization": f"Token {key}"} if key else {}),
            **(headers or {}),
        },
        method="POST" if body is not None else "GET",
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:  # noqa: S310 (loopback)
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def test_sixteen_parallel_saves_on_sqlite_all_succeed(gunicorn_sqlite):
    count = 16
    barrier = threading.Barrier(count)
    results: list = [None] * count

    def save(index: int) -> None:
        barrier.wait()
        results[index] = _request(
            f"{gunicorn_sqlite['url']}/api/v1/prompts/{gunicorn_sqlite['prompt']}/versions/",
            key=gunicorn_sqlite["key"],
            body={
                "parent": gunicorn_sqlite["root"],
                "content": {"system": f"variant {index}"},
                "message": f"save {index}",
            },
        )

    threads = [threading.Thread(target=save, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    statuses = [status for status, _ in results]
    assert statuses == [201] * count, [(s, b[:120]) for s, b in results]
    numbers = sorted(json.loads(body)["number"] for _, body in results)
    assert numbers == list(range(2, count + 2))
    tree = _request(
        f"{gunicorn_sqlite['url']}/api/v1/prompts/{gunicorn_sqlite['prompt']}/versions/",
        key=gunicorn_sqlite["key"],
    )
    listed = json.loads(tree[1])
    listed = listed["results"] if isinstance(listed, dict) else listed
    assert len(listed) == count + 1


def _log_lines(path: Path, *, count: int, containing: str, timeout: float = 10.0) -> str:
    """The log's text once it holds `count` lines containing `containing` (or at the timeout)."""
    deadline = time.monotonic() + timeout
    while True:
        text = path.read_text()
        if sum(containing in line for line in text.splitlines()) >= count:
            return text
        if time.monotonic() > deadline:
            return text
        time.sleep(0.05)


def test_gunicorn_access_log_never_holds_a_share_token(gunicorn_sqlite):
    token = "rl_" + "SecretTokenValue0123456789abcdefghijklmnopq"
    for path in (f"/s/{token}", f"/api/v1/shared/{token}/", f"/s/{token}/copy?x={token}"):
        status, _ = _request(
            gunicorn_sqlite["url"] + path,
            headers={"Referer": f"https://elsewhere.example/s/{token}"},
        )
        assert status in (404, 405)
    # gunicorn writes an access line after the response has gone out: wait for all three.
    log = _log_lines(gunicorn_sqlite["access_log"], count=3, containing="rl_")
    assert "/s/rl_[redacted]" in log
    assert "/api/v1/shared/rl_[redacted]/" in log
    assert token not in log
    assert token[3:20] not in log


def test_gunicorn_access_log_never_holds_a_percent_encoded_share_token(gunicorn_sqlite):
    token = "rl_" + "EncodedTokenValue0123456789abcdefghijklmnop"
    paths = (
        "/s/%72%6C%5F" + token[3:],
        "/api/v1/shared/rl%5F" + token[3:] + "/",
        "/%73/" + token,
    )
    # Lines, not occurrences: `_log_lines` counts lines (a line may redact two tokens, and
    # counting those twice waited for a line that never came, until the timeout).
    before = sum(
        "rl_[redacted]" in line for line in gunicorn_sqlite["access_log"].read_text().splitlines()
    )
    for path in paths:
        status, _ = _request(gunicorn_sqlite["url"] + path)
        assert status in (404, 405)
    # gunicorn writes an access line after the response has gone out: wait for all three.
    log = _log_lines(gunicorn_sqlite["access_log"], count=before + 3, containing="rl_[redacted]")
    assert token[3:20] not in log
    assert log.count("rl_[redacted]") >= 3
