"""Fixtures of the browser tests that several modules share: the embedded server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import free_port, sqlite_copy, wait_for_port
from tests.factories import PASSWORD

ROOT = Path(__file__).resolve().parents[2]
CONTENT = {
    "provider": "echo",
    "model": "echo-1",
    "system": "You review system designs. Rank the risks, worst first.",
    "messages": [{"role": "user", "content": "Critique this design: {{design}}"}],
    "variables": {"design": "a URL shortener on one PostgreSQL node"},
}
SETUP = """
import json, django
django.setup()
from accounts.services import api_token_create, user_create
from playground.services import grant_set, prompt_create
content = json.loads(CONTENT)
out = {"prompts": {}, "versions": {}, "tokens": {}}
for name in ("ada", "lin", "kim", "vic"):
    user = user_create(username=name, password=PASSWORD)
    out["tokens"][name] = api_token_create(actor=user)[1]
    if name != "vic":
        prompt, version = prompt_create(actor=user, title=f"Critic of {name}", content=content)
        out["prompts"][name], out["versions"][name] = prompt.pk, version.pk
from django.contrib.auth import get_user_model
from playground.models import Prompt
kim = get_user_model().objects.get(username="kim")
prompt = Prompt.objects.get(pk=out["prompts"]["kim"])
grant_set(actor=kim, prompt=prompt, username="vic", role="viewer")
print(json.dumps(out))
"""


@dataclass(frozen=True)
class Embedded:
    url: str
    data: dict[str, Any]

    def api(self, user: str, path: str) -> Any:
        request = urllib.request.Request(
            self.url + path, headers={"Authorization": f"Token {self.data['tokens'][user]}"}
        )
        with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310 (loopback)
            return json.loads(response.read())


@pytest.fixture(scope="module")
def embedded(request, tmp_path_factory, chromium_path, migrated_sqlite) -> Iterator[Embedded]:
    """`manage.py runserver` on a fresh SQLite file (migrated) with no broker: the embedded
    default, one per test module. The echo provider waits the module's ECHO_DELAY_MS between
    tokens (`make run`'s 30 ms unless the module says otherwise)."""
    delay_ms = getattr(request.module, "ECHO_DELAY_MS", 30)
    data_dir = tmp_path_factory.mktemp("embedded")
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DATABASE_URL", "CELERY_BROKER_URL", "CELERY_RESULT_BACKEND", "REDIS_URL")
        and not k.startswith("S3_")
    }
    env.update(REDLINE_DATA_DIR=str(data_dir), RUN_ECHO_DELAY_MS=str(delay_ms), DEBUG="0")
    manage = [sys.executable, "manage.py"]
    sqlite_copy(migrated_sqlite, data_dir / "redline.sqlite3")
    script = f"PASSWORD = {PASSWORD!r}\nCONTENT = {json.dumps(json.dumps(CONTENT))}\n" + SETUP
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    data = json.loads(out.stdout.strip().splitlines()[-1])
    port = free_port()
    log = (data_dir / "server.log").open("w")  # the server's log, for a failing test
    server = subprocess.Popen(
        [*manage, "runserver", "--noreload", f"127.0.0.1:{port}"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=log,
    )
    try:
        wait_for_port(port, process=server, log=data_dir / "server.log")
        yield Embedded(url=f"http://127.0.0.1:{port}", data=data)
    finally:
        server.terminate()
        server.wait(timeout=20)
        log.close()
