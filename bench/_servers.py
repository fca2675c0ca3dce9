"""Process helpers shared by the benchmarks that drive a real server: a free loopback port,
migrating and seeding through `manage.py`/a Django script in a subprocess, and gunicorn."""

import os
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parent.parent
# The caller's own service URLs, never passed on to a bench's servers.
_SERVICE_VARS = ("DATABASE_URL", "CELERY_BROKER_URL", "CELERY_RESULT_BACKEND", "REDIS_URL")


def services_env(*, data_dir: Path, db: str, broker: str, **settings: str) -> dict[str, str]:
    """This process's environment for a bench's servers and workers: its own database, broker
    (also the cache) and data folder instead of the caller's, plus `settings`."""
    env = {k: v for k, v in os.environ.items() if k not in _SERVICE_VARS}
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        REDLINE_DATA_DIR=str(data_dir),
        DATABASE_URL=db,
        CELERY_BROKER_URL=broker,
        REDIS_URL=broker,
        **settings,
    )
    return env


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_port(port: int, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise SystemExit(f"gunicorn did not listen on {port}")


def migrate(env: dict[str, str]) -> None:
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"],
        cwd=ROOT,
        env=env,
        check=True,
    )


def django_script(env: dict[str, str], code: str) -> str:
    """Run `code` (dedented) after `django.setup()` in a subprocess with `env`; its stdout."""
    script = "import django\ndjango.setup()\n" + textwrap.dedent(code)
    return subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


def gunicorn(port: int, env: dict[str, str], *options: str, quiet: bool = True) -> subprocess.Popen:
    """gunicorn serving config.wsgi with sync workers on 127.0.0.1:`port` with `options`
    (workers, worker class). gunicorn reads `./gunicorn.conf.py` (uvicorn workers, for
    config.asgi) unless told otherwise: bench/gunicorn_sync.conf.py keeps its defaults."""
    output = subprocess.DEVNULL if quiet else None
    config = str(ROOT / "bench" / "gunicorn_sync.conf.py")
    command = [sys.executable, "-m", "gunicorn", "-c", config, "config.wsgi"]
    return subprocess.Popen(
        [*command, "-b", f"127.0.0.1:{port}", *options],
        cwd=ROOT,
        env=env,
        stdout=output,
        stderr=output,
        start_new_session=True,
    )


def asgi_server(
    port: int, env: dict[str, str], *options: str, quiet: bool = True
) -> subprocess.Popen:
    """The production server as `make serve` runs it: `gunicorn -c gunicorn.conf.py config.asgi`
    (uvicorn workers) on 127.0.0.1:`port`, with `options` (e.g. `--workers 2`)."""
    output = subprocess.DEVNULL if quiet else None
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "-c",
            "gunicorn.conf.py",
            "config.asgi",
            "--bind",
            f"127.0.0.1:{port}",
            *options,
        ],
        cwd=ROOT,
        env=env,
        stdout=output,
        stderr=output,
        start_new_session=True,
    )


def ensure_database(url: str) -> None:
    """Create the PostgreSQL database `url` names unless it exists."""
    import psycopg

    parts = urlparse(url)
    name = parts.path.lstrip("/")
    admin = parts._replace(path="/postgres").geturl()
    with psycopg.connect(admin, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')
