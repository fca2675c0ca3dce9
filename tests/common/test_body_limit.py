"""Request bodies refused before they are read (issue #31; common/bodylimit.py, common/asgi.py).

An anonymous client starts a 1 GiB body — declared with Content-Length, or chunked with no
length — and the server answers 413 having read at most the limit: on the production server
(gunicorn with uvicorn workers over `config.asgi`, as `make serve` runs it) and on the WSGI
live server. The client pumps the body from a thread and stops when the server answers or
closes; before the change the server waited for the whole body (spooling it to its temporary
directory) and the answer never came within the read timeout.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import free_port, sqlite_copy, wait_for_port

ROOT = Path(__file__).resolve().parent.parent.parent
GIB = 1024**3
LIMIT = 1024 * 1024  # the servers' REQUEST_BODY_MAX_BYTES here
# The client stops pumping here at the latest, so an unfixed server (which waits for the whole
# body) leaves the client waiting for an answer instead of filling the disk with 1 GiB.
PUMP_MAX = 256 * 1024 * 1024
BLOCK = 64 * 1024


def _post_big(port: int, path: str, *, chunked: bool) -> tuple[int, bytes, int]:
    """POST a 1 GiB body to `path` as an anonymous client; (status, response head and body
    start, body bytes sent before the server answered or closed)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    head = [
        f"POST {path} HTTP/1.1",
        "Host: 127.0.0.1",
        "Content-Type: multipart/form-data; boundary=xxxxxxxx",
        "Transfer-Encoding: chunked" if chunked else f"Content-Length: {GIB}",
    ]
    sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode())
    sent = 0
    answered = threading.Event()

    def pump() -> None:
        nonlocal sent
        block = b"x" * BLOCK
        framed = b"%x\r\n" % BLOCK + block + b"\r\n" if chunked else block
        try:
            while sent < PUMP_MAX and not answered.is_set():
                sock.sendall(framed)
                sent += BLOCK
        except OSError:
            pass  # the server closed the connection: what we wanted

    pumper = threading.Thread(target=pump, daemon=True)
    pumper.start()
    response = b""
    try:
        while b"\r\n\r\n" not in response or b"}" not in response:  # the JSON detail too
            data = sock.recv(65536)
            if not data:
                break
            response += data
    except TimeoutError:
        pytest.fail(f"no answer within 30 s after {sent:,} body bytes: the server reads it all")
    finally:
        answered.set()
        pumper.join(30)
        sock.close()
    assert response, f"the server closed without an answer after {sent:,} body bytes"
    return int(response.split()[1]), response, sent


def _assert_refused_early(status: int, response: bytes, sent: int) -> None:
    assert status == 413, response[:300]
    assert b"larger than 1,048,576 bytes" in response
    # What the client managed to write is the limit plus what the sockets buffer, far from the
    # body's 1 GiB (and from PUMP_MAX, where an unfixed server's client would stop).
    assert sent < 64 * 1024 * 1024, sent


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "PYTEST"))}
    for name in ("DATABASE_URL", "CELERY_BROKER_URL", "REDIS_URL", "S3_BUCKET"):
        env.pop(name, None)
    env.update(extra)
    return env


@pytest.fixture(scope="module")
def asgi_server(tmp_path_factory, migrated_sqlite) -> Iterator[dict]:
    """gunicorn -c gunicorn.conf.py config.asgi with its own temporary directory."""
    data = tmp_path_factory.mktemp("bodylimit")
    spool = data / "tmp"
    spool.mkdir()
    sqlite_copy(migrated_sqlite, data / "redline.sqlite3")
    env = _env(
        REDLINE_DATA_DIR=str(data),
        DATABASE_URL=f"sqlite:///{data / 'redline.sqlite3'}",
        OBJECT_STORE_DIR=str(data / "objects"),
        REQUEST_BODY_MAX_BYTES=str(LIMIT),
        TMPDIR=str(spool),
    )
    port = free_port()
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
            "1",
            "--access-logfile",
            str(data / "access.log"),
            "--error-logfile",
            str(data / "error.log"),
        ],
        cwd=ROOT,
        env=env,
    )
    try:
        wait_for_port(port, timeout=60)
        yield {"port": port, "spool": spool}
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
@pytest.mark.parametrize("path", ["/accounts/login/", "/api/v1/prompts/"])
def test_asgi_refuses_a_1_gib_body_before_reading_it(asgi_server, path, chunked):
    status, response, sent = _post_big(asgi_server["port"], path, chunked=chunked)
    _assert_refused_early(status, response, sent)
    # Nothing was spooled: the refused bodies never reached the server's temporary directory.
    assert list(asgi_server["spool"].iterdir()) == []


def test_asgi_upload_endpoint_takes_up_to_its_own_limit(asgi_server):
    """The embedded default's signed upload PUT may carry UPLOAD_MAX_BYTES, not the general
    limit: 2 MiB reaches the view (an unknown token: 404); past UPLOAD_MAX_BYTES is a 413."""
    sock = socket.create_connection(("127.0.0.1", asgi_server["port"]), timeout=30)
    body = b"x" * (2 * LIMIT)
    sock.sendall(
        b"PUT /api/v1/uploads/put/not-a-token/ HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        b"Content-Type: application/octet-stream\r\n"
        b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body
    )
    answer = b""
    while chunk := sock.recv(65536):
        answer += chunk
    sock.close()
    assert answer.split()[1] == b"404", answer[:300]
    sock = socket.create_connection(("127.0.0.1", asgi_server["port"]), timeout=30)
    sock.sendall(
        b"PUT /api/v1/uploads/put/not-a-token/ HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        b"Content-Length: %d\r\n\r\n" % (GIB,)
    )
    assert sock.recv(65536).split()[1] == b"413"
    sock.close()


def test_wsgi_refuses_a_declared_1_gib_body_before_reading_it(live_server, settings):
    """Django's WSGI server (the live server of the browser tests): the CSRF middleware would
    read the multipart form, spooling its file part, before the login view ran."""
    settings.REQUEST_BODY_MAX_BYTES = LIMIT
    port = int(live_server.url.rsplit(":", 1)[1])
    for path in ("/accounts/login/", "/api/v1/prompts/"):
        status, response, sent = _post_big(port, path, chunked=False)
        _assert_refused_early(status, response, sent)
