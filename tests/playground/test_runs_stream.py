"""Run streams on the production server (issue 21, "Streams that hold no thread").

The stream tests talk HTTP to gunicorn with uvicorn workers over `config.asgi`, started as
`make serve` starts it, on a database of its own: a SQLite file in the embedded pass, a fresh
PostgreSQL database (plus Redis pub/sub and a cap counted across two worker processes) in the
services pass. The worker's append is checked in-process with the queries it sends.
"""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.test.utils import CaptureQueriesContext

from tests.conftest import EXPECT_SERVICES, free_port, migrate, sqlite_copy, wait_for_port
from tests.schemacheck import sse_event_problem

STREAM_TEMPLATE = "/api/v1/runs/{run_id}/stream/"

ROOT = Path(__file__).resolve().parents[2]
CAP = 3
EMOJI_OUTPUT = "Résumé: 😀 ranks the risks, worst first — then the rest. ✅"

SEED = """
import json
import django
django.setup()
from accounts.services import api_token_create, user_create
from playground.models import Run
from playground.services import grant_set, prompt_create

content = {
    "provider": "echo",
    "model": "echo-1",
    "system": "You review designs.",
    "messages": [{"role": "user", "content": "Critique 😀 this design: a queue in front of one database"}],
}
out = {"tokens": {}, "runs": {}}
users = {}
for name in ("owner", "viewer", "capper", "other"):
    users[name] = user_create(username=name, password="correct-horse-battery-staple")
    out["tokens"][name] = api_token_create(actor=users[name])[1]
prompt, version = prompt_create(actor=users["owner"], title="Streams", content=content)
grant_set(actor=users["owner"], prompt=prompt, username="viewer", role="viewer")
out["prompt"], out["version"] = prompt.pk, version.pk
mine, capped = prompt_create(actor=users["capper"], title="Mine", content=content)
theirs, other_version = prompt_create(actor=users["other"], title="Theirs", content=content)

def run(version, user, status, output):
    return Run.objects.create(
        version=version, created_by=user, provider="echo", model="echo-1", variables={},
        status=status, output=output,
    ).pk

out["runs"]["done"] = run(version, users["owner"], "done", EMOJI_OUTPUT)
out["runs"]["watched"] = run(version, users["owner"], "running", "Thinking")
out["runs"]["capped"] = run(capped, users["capper"], "running", "Still going")
out["runs"]["other"] = run(other_version, users["other"], "running", "Elsewhere")
print(json.dumps(out))
"""


@dataclass(frozen=True)
class Server:
    port: int
    tokens: dict[str, str]
    runs: dict[str, int]
    prompt: int
    version: int
    workers: int
    pid: int

    def connect(self, timeout: float = 60.0) -> http.client.HTTPConnection:
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)

    def open(
        self, user: str, path: str, headers: dict[str, str] | None = None
    ) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
        conn = self.connect()
        conn.request(
            "GET", path, headers={"Authorization": f"Token {self.tokens[user]}", **(headers or {})}
        )
        return conn, conn.getresponse()

    def call(self, user: str, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        conn = self.connect()
        try:
            conn.request(
                method,
                path,
                body=json.dumps(body) if body is not None else None,
                headers={
                    "Authorization": f"Token {self.tokens[user]}",
                    "Content-Type": "application/json",
                },
            )
            response = conn.getresponse()
            raw = response.read()
            return response.status, json.loads(raw) if raw else None
        finally:
            conn.close()


def _events(response: http.client.HTTPResponse) -> Iterator[tuple[str, Any, int | None]]:
    """(event, data, id) for each event of an SSE body, until the server closes it."""
    fields: dict[str, str] = {}
    while True:
        line = response.readline()
        if not line:
            return
        text = line.decode("utf-8").rstrip("\n")
        if text == "":
            if "event" in fields:
                ident = int(fields["id"]) if "id" in fields else None
                data = json.loads(fields.get("data", "null"))
                # Every event's data is what the schema lists for it (x-sse-events).
                problem = sse_event_problem(STREAM_TEMPLATE, fields["event"], data)
                assert problem is None, problem
                yield fields["event"], data, ident
            fields = {}
        elif not text.startswith(":") and ": " in text:
            key, value = text.split(": ", 1)
            fields[key] = value


def _server_env(data: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "PYTEST", "S3_"))}
    for name in ("DATABASE_URL", "CELERY_BROKER_URL", "CELERY_RESULT_BACKEND"):
        env.pop(name, None)  # no broker: runs execute on threads of the server (eager)
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        REDLINE_DATA_DIR=str(data),
        OBJECT_STORE_DIR=str(data / "objects"),
        RUN_STREAMS_PER_USER=str(CAP),
        RUN_STREAM_RECHECK_SECONDS="1",
        RUN_ECHO_DELAY_MS="40",
        DB_CONN_MAX_AGE="0",
    )
    return env


def _postgres_database(env: dict[str, str]) -> Generator[str, None, None]:
    """A fresh PostgreSQL database beside the test database, dropped afterwards."""
    import psycopg

    db = settings.DATABASES["default"]
    name = f"{db['NAME']}_streams_{os.getpid()}"[:60]
    auth = db.get("USER") or "postgres"
    if db.get("PASSWORD"):
        auth += f":{db['PASSWORD']}"
    where = f"{db.get('HOST') or '127.0.0.1'}:{db.get('PORT') or 5432}"
    admin = f"postgresql://{auth}@{where}/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"postgres://{auth}@{where}/{name}"
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="module")
def server(tmp_path_factory, request) -> Iterator[Server]:
    """`gunicorn -c gunicorn.conf.py config.asgi` (uvicorn workers) on its own database."""
    data = tmp_path_factory.mktemp("asgi")
    env = _server_env(data)
    postgres = settings.DATABASES["default"]["ENGINE"].endswith("postgresql")
    if EXPECT_SERVICES and not (postgres and settings.REDIS_URL):
        pytest.fail("the services pass must stream on PostgreSQL with Redis")
    databases = _postgres_database(env) if postgres else None
    env["DATABASE_URL"] = next(databases) if databases else f"sqlite:///{data / 'redline.sqlite3'}"
    # With Redis the cap is counted across processes: two workers prove it. Without it the
    # in-memory cache counts per process, so one worker.
    workers = 2 if settings.REDIS_URL else 1
    proc = None
    try:
        if databases is None:
            sqlite_copy(request.getfixturevalue("migrated_sqlite"), data / "redline.sqlite3")
        else:
            migrate(env)
        seed = f"EMOJI_OUTPUT = {EMOJI_OUTPUT!r}\n" + textwrap.dedent(SEED)
        out = subprocess.run(
            [sys.executable, "-c", seed],
            cwd=ROOT,
            env=env,
            check=True,
            capture_output=True,
            text=True,
            timeout=300,
        )
        seeded = json.loads(out.stdout.strip().splitlines()[-1])
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
                str(workers),
                "--access-logfile",
                str(data / "access.log"),
                "--error-logfile",
                str(data / "error.log"),
            ],
            cwd=ROOT,
            env=env,
        )
        wait_for_port(port, process=proc)
        yield Server(
            port=port,
            tokens=seeded["tokens"],
            runs=seeded["runs"],
            prompt=seeded["prompt"],
            version=seeded["version"],
            workers=workers,
            pid=proc.pid,
        )
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=60)
        if databases is not None:
            databases.close()  # runs the generator's finally: drops the database


def stream_path(run_id: int, query: str = "") -> str:
    return f"/api/v1/runs/{run_id}/stream/{query}"


# --- on the ASGI server ---------------------------------------------------------------------


def test_a_finished_run_streams_its_output_then_done_and_resumes_exactly(server):
    run_id = server.runs["done"]
    conn, response = server.open("owner", stream_path(run_id))
    assert response.status == 200
    assert response.getheader("Content-Type").startswith("text/event-stream")
    events = list(_events(response))
    conn.close()
    assert [
        (name, data["text"] if name == "token" else data["status"]) for name, data, _ in events
    ] == [
        ("token", EMOJI_OUTPUT),
        ("done", "done"),
    ]
    # Offsets count characters (code points): resume after the emoji, from the header or the
    # query, and get exactly the rest.
    cut = EMOJI_OUTPUT.index("😀") + 1
    for headers, query in (({"Last-Event-ID": str(cut)}, ""), ({}, f"?offset={cut}")):
        conn, response = server.open("owner", stream_path(run_id, query), headers)
        rest = list(_events(response))
        conn.close()
        assert rest[0][0] == "token"
        assert rest[0][1] == {"text": EMOJI_OUTPUT[cut:], "offset": len(EMOJI_OUTPUT)}
        assert rest[-1][0] == "done"
    # At the end: nothing but `done`.
    conn, response = server.open("owner", stream_path(run_id, f"?offset={len(EMOJI_OUTPUT)}"))
    assert [name for name, _, _ in _events(response)] == ["done"]
    conn.close()


def test_a_live_run_resumed_from_last_event_id_is_exact(server):
    status, created = server.call("owner", "POST", f"/api/v1/versions/{server.version}/runs/", {})
    assert status == 201, created
    path = stream_path(created["id"])
    conn, response = server.open("owner", path)
    assert response.status == 200
    received = ""
    last_id = None
    for name, data, ident in _events(response):
        assert name == "token", (name, data)
        received += data["text"]
        assert data["offset"] == ident == len(received)
        last_id = ident
        if len(received) >= 20:
            break
    conn.close()  # the client goes away mid-run
    conn, response = server.open("owner", path, {"Last-Event-ID": str(last_id)})
    final = None
    for name, data, ident in _events(response):
        if name == "token":
            assert data["offset"] == ident == len(received) + len(data["text"])
            received += data["text"]
        else:
            assert name == "done", (name, data)
            final = data
    conn.close()
    assert final is not None and final["status"] == "done"
    assert received == final["output"]
    assert "😀" in received


@pytest.mark.parametrize(
    ("headers", "query", "named"),
    [
        ({}, "?offset=2147483647", "offset"),
        ({}, "?offset=99999999999999999999999", "offset"),
        ({}, "?offset=-1", "offset"),
        ({}, "?offset=abc", "offset"),
        ({}, "?offset=1e3", "offset"),
        ({}, "?offset=", "offset"),
        ({"Last-Event-ID": "2147483647"}, "", "Last-Event-ID"),
        ({"Last-Event-ID": "not-a-number"}, "", "Last-Event-ID"),
        ({}, "?offset=%D9%A3", "offset"),  # a digit, but not an ASCII one
    ],
)
def test_a_huge_or_malformed_offset_is_a_400_naming_it(server, headers, query, named):
    conn, response = server.open("owner", stream_path(server.runs["done"], query), headers)
    body = json.loads(response.read())
    conn.close()
    assert response.status == 400, body
    assert response.getheader("Content-Type") == "application/json"
    assert body["field"] == named
    assert body["detail"].startswith(f"{named}: ")


def test_an_offset_past_the_output_of_a_finished_run_is_a_400(server):
    past = len(EMOJI_OUTPUT) + 1
    conn, response = server.open("owner", stream_path(server.runs["done"], f"?offset={past}"))
    body = json.loads(response.read())
    conn.close()
    assert response.status == 400
    assert body == {
        "detail": f"offset: {past} is past the end of the run's output"
        f" ({len(EMOJI_OUTPUT)} characters so far).",
        "field": "offset",
    }


def _server_threads(pid: int) -> int:
    """Threads of the gunicorn master and its worker processes."""
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    total = 0
    for each in (pid, *map(int, children)):
        status = Path(f"/proc/{each}/status").read_text()
        total += int(
            next(line for line in status.splitlines() if line.startswith("Threads:")).split()[1]
        )
    return total


def test_open_streams_hold_no_thread_and_share_one_subscription_per_process(server):
    """Nine streams (three accounts, each at its cap, on three running runs): the server's
    threads grow by at most its stream-read pools, not by a thread per stream, and with Redis
    each run's channel has one subscriber per worker process at most, not one per stream."""
    import redis

    before = _server_threads(server.pid)
    held = []
    try:
        for user, run in (("owner", "watched"), ("capper", "capped"), ("other", "other")):
            for _ in range(CAP):
                conn, response = server.open(user, stream_path(server.runs[run]))
                assert response.status == 200
                assert next(_events(response))[0] == "token"  # open, and past the view
                held.append(conn)
        pools = server.workers * settings.RUN_STREAM_DB_THREADS
        assert _server_threads(server.pid) - before <= pools < len(held)
        if settings.REDIS_URL:
            client = redis.Redis.from_url(settings.REDIS_URL)
            for run in ("watched", "capped", "other"):
                channels = client.pubsub_channels(f"redline:*:run:{server.runs[run]}")
                assert len(channels) == 1
                ((_, subscribers),) = client.pubsub_numsub(*channels)
                assert 1 <= subscribers <= server.workers < CAP
    finally:
        for conn in held:
            conn.close()


def test_streams_past_the_per_user_cap_get_429_with_retry_after(server):
    run_id = server.runs["capped"]
    held = []
    try:
        for _ in range(CAP):
            conn, response = server.open("capper", stream_path(run_id))
            assert response.status == 200
            name, data, _ = next(_events(response))  # the stream is really open
            assert (name, data["text"]) == ("token", "Still going")
            held.append(conn)
        # Past the cap (on whichever worker process answers): 429, Retry-After, JSON detail.
        for _ in range(2 * server.workers):
            conn, response = server.open("capper", stream_path(run_id))
            body = json.loads(response.read())
            conn.close()
            assert response.status == 429, body
            assert int(response.getheader("Retry-After")) > 0
            assert body["detail"].startswith("Too many open run streams: at most 3")
        # The cap is per account: someone else streams their own run meanwhile.
        conn, response = server.open("other", stream_path(server.runs["other"]))
        assert response.status == 200
        conn.close()
        # Closing a stream frees its slot once the server has seen the disconnect.
        held.pop().close()
        for _attempt in range(200):
            conn, response = server.open("capper", stream_path(run_id))
            if response.status == 200:
                held.append(conn)
                break
            response.read()
            conn.close()
        assert response.status == 200
    finally:
        for conn in held:
            conn.close()


def test_a_revoked_grant_ends_the_open_stream_with_an_error_event(server):
    run_id = server.runs["watched"]
    conn, response = server.open("viewer", stream_path(run_id))
    assert response.status == 200
    events = _events(response)
    name, data, _ = next(events)
    assert (name, data["text"]) == ("token", "Thinking")
    status, _ = server.call("owner", "DELETE", f"/api/v1/prompts/{server.prompt}/grants/viewer/")
    assert status in (200, 204)
    # The stream re-checks access (every second here) and ends: an `error` event, then EOF.
    rest = list(events)
    conn.close()
    assert rest == [("error", {"detail": "Not found."}, None)]
    # And it cannot be reopened.
    conn, response = server.open("viewer", stream_path(run_id))
    assert response.status == 404
    assert json.loads(response.read()) == {"detail": "Not found."}
    conn.close()


# --- the worker's write path (in-process) --------------------------------------------------------


@pytest.mark.django_db
def test_the_worker_appends_each_piece_instead_of_rewriting_the_output(settings):
    from django.db import connection

    from playground.models import Run
    from playground.runs.services import run_create, run_execute
    from tests.factories import make_user
    from tests.playground.factories import make_prompt

    settings.RUN_EAGER_MODE = "inline"
    settings.RUN_ECHO_DELAY_MS = 0
    settings.RUN_FLUSH_INTERVAL_MS = 0  # one write per token: the worst case for rewriting
    owner = make_user()
    words = [f"w{n:02d}x" for n in range(40)]
    _, version = make_prompt(
        owner,
        provider="echo",
        model="echo-1",
        messages=[{"role": "user", "content": " ".join(words)}],
        variables={},
    )
    run = run_create(actor=owner, version=version).run
    with CaptureQueriesContext(connection) as queries:
        assert run_execute(run_id=run.pk) == "done"
    output = Run.objects.get(pk=run.pk).output
    assert all(word in output for word in words)
    writes = [
        q["sql"]
        for q in queries.captured_queries
        if q["sql"].startswith("UPDATE") and "playground_run" in q["sql"] and "output" in q["sql"]
    ]
    assert len(writes) > len(words)  # a write per token
    # Each write carries its own piece only: every word of the reply is sent exactly once.
    assert all(sum(word in sql for word in words) <= 1 for sql in writes)
    assert sum(sql.count(word) for sql in writes for word in words) == len(words)
