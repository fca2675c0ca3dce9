"""A 50 MB prompt through the upload flow, against a real server process (issue #14).

    .venv/bin/python bench/large_prompt.py [--mb 50] [--ranges 25]

Starts gunicorn (one sync worker, the embedded default: SQLite and the local object store in a
temporary folder), then, as an API client with a token and as a signed-in browser would:

1. creates an upload and PUTs a generated text of `--mb` MB to the URL it was given;
2. saves a version naming it (`{"upload": id}`): the server streams the object, checks size,
   SHA-256 and UTF-8, and stores it in textstore;
3. renders the version's page;
4. edits one line in the middle, uploads and saves that as a child version.

For each of upload, verification+store and page render it prints the web worker's peak RSS
growth over its idle RSS (VmHWM after resetting it through /proc/<pid>/clear_refs, against
VmRSS when idle), and then: the bytes the one-line edit added to storage (its blob's stored
size and the growth of the object store on disk), the p50 latency of the first range
(`GET /api/v1/versions/{id}/text/?field=system&offset=0`) for the original and the edited
version, and the version page's HTML size for a 50 KB and a 50 MB text (the baseline measured
in the same run). Targets (issue #14): RSS growth < 20 MB, edit < 1% of the text, first range
p50 < 200 ms, HTML size the same for both.
"""

import argparse
import hashlib
import http.client
import http.cookiejar
import json
import os
import re
import signal
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._servers import (  # noqa: E402
    django_script,
    free_port,
    gunicorn,
    migrate,
    wait_for_port,
)

MB = 1024 * 1024


def status_kb(pid: int, field: str) -> int:
    text = Path(f"/proc/{pid}/status").read_text()
    match = re.search(rf"^{field}:\s+(\d+) kB", text, re.M)
    if not match:
        raise SystemExit(f"no {field} for {pid}")
    return int(match.group(1))


def reset_peak(pid: int) -> bool:
    """Reset VmHWM to the current RSS (Linux ≥ 4.0); False if not allowed."""
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def worker_pid(master: int) -> int:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        children = Path(f"/proc/{master}/task/{master}/children").read_text().split()
        if children:
            return int(children[0])
        time.sleep(0.1)
    raise SystemExit("no gunicorn worker")


def generate(path: Path, size: int) -> None:
    """A prose-like text of `size` bytes with numbered lines (some non-ASCII)."""
    words = "prompt model token latency cache shard replica queue budget review ünïcode".split()
    with path.open("w", encoding="utf-8") as handle:
        written, number = 0, 0
        while written < size:
            line = f"{number:08d} " + " ".join(words[(number + i) % len(words)] for i in range(12))
            data = line + "\n"
            handle.write(data)
            written += len(data.encode())
            number += 1


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(MB), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass
class Client:
    port: int
    key: str

    def request(self, method: str, path: str, body=None, headers=None) -> tuple[int, bytes]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=600)
        all_headers = {"Authorization": f"Token {self.key}", **(headers or {})}
        conn.request(method, path, body=body, headers=all_headers)
        response = conn.getresponse()
        data = response.read()
        conn.close()
        return response.status, data

    def json(self, method: str, path: str, payload) -> tuple[int, dict]:
        status, data = self.request(
            method, path, json.dumps(payload).encode(), {"Content-Type": "application/json"}
        )
        return status, json.loads(data or b"{}")


def upload(client: Client, path: Path) -> str:
    size = path.stat().st_size
    status, ticket = client.json(
        "POST", "/api/v1/uploads/", {"size": size, "sha256": sha256_file(path)}
    )
    assert status == 201, ticket
    url = urllib.parse.urlsplit(ticket["url"])
    conn = http.client.HTTPConnection("127.0.0.1", client.port, timeout=600)
    with path.open("rb") as handle:  # streamed from disk by http.client
        conn.request(
            "PUT",
            url.path,
            body=handle,
            headers={**ticket["headers"], "Content-Length": str(size)},
        )
        response = conn.getresponse()
        response.read()
    conn.close()
    assert response.status == 200, response.status
    return ticket["id"]


def save(client: Client, prompt_id: int, parent: int, system) -> int:
    status, body = client.json(
        "POST",
        f"/api/v1/prompts/{prompt_id}/versions/",
        {
            "parent": parent,
            "content": {
                "provider": "echo",
                "system": system,
                "messages": [{"role": "user", "content": "Summarise the context."}],
            },
        },
    )
    assert status in (200, 201), body
    return int(body["id"])


def browser_session(port: int, username: str, password: str) -> urllib.request.OpenerDirector:
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    base = f"http://127.0.0.1:{port}"
    html = opener.open(f"{base}/accounts/login/").read().decode()
    found = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html)
    if found is None:
        raise SystemExit("no CSRF token on the login page")
    token = found.group(1)
    form = urllib.parse.urlencode(
        {"username": username, "password": password, "csrfmiddlewaretoken": token}
    ).encode()
    request = urllib.request.Request(f"{base}/accounts/login/", data=form)
    request.add_header("Referer", f"{base}/accounts/login/")
    opener.open(request).read()
    return opener


def p50(values: list[float]) -> float:
    return sorted(values)[len(values) // 2]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=int, default=50)
    parser.add_argument("--ranges", type=int, default=25)
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="redline-large-"))
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "PYTHONPATH": str(ROOT),
        "REDLINE_DATA_DIR": str(work / "data"),
        "OBJECT_STORE_DIR": str(work / "objects"),
        "DATABASE_URL": f"sqlite:///{work / 'bench.sqlite3'}",
        "S3_BUCKET": "",
        "CELERY_BROKER_URL": "",
        "LOG_LEVEL": "WARNING",
        "UPLOAD_MAX_BYTES": str((args.mb + 10) * MB),
    }
    migrate(env)
    out = django_script(
        env,
        """
        from accounts.services import api_token_create, user_create
        from playground.services import prompt_create
        user = user_create(username="bench", password="bench-pass-123")
        small = "A 50 KB system prompt line, for the baseline page.\\n" * 1000
        prompt, root = prompt_create(actor=user, title="large", content={
            "provider": "echo", "system": small,
            "messages": [{"role": "user", "content": "Summarise the context."}]})
        _, key = api_token_create(actor=user)
        print(prompt.pk, root.pk, key)
        """,
    ).split()
    prompt_id, root_id, key = int(out[-3]), int(out[-2]), out[-1]

    text = work / "large.txt"
    generate(text, args.mb * MB)
    size = text.stat().st_size

    port = free_port()
    server = gunicorn(
        port, env, "-w", "1", "-k", "sync", "--timeout", "600", "--access-logfile", "/dev/null"
    )
    try:
        wait_for_port(port)
        pid = worker_pid(server.pid)
        client = Client(port=port, key=key)
        browser = browser_session(port, "bench", "bench-pass-123")
        base = f"http://127.0.0.1:{port}"

        def page_html(version: int) -> bytes:
            url = f"{base}/playground/p/{prompt_id}/?v={version}"
            return browser.open(url).read()

        # Warm up every path once (imports, templates, connections), then take idle RSS.
        small_html = page_html(root_id)
        client.request("GET", f"/api/v1/versions/{root_id}/text/?field=system&offset=0")
        warm = work / "warm.txt"
        warm.write_text("warm-up text\n" * 10_000)
        warm_version = save(client, prompt_id, root_id, {"upload": upload(client, warm)})
        page_html(warm_version)
        time.sleep(0.5)

        def measured(label: str, action):
            idle = status_kb(pid, "VmRSS")
            if not reset_peak(pid):
                raise SystemExit("cannot reset VmHWM (/proc/<pid>/clear_refs)")
            start = time.perf_counter()
            result = action()
            elapsed = time.perf_counter() - start
            peak = status_kb(pid, "VmHWM")
            growth = (peak - idle) / 1024
            print(f"{label:<34} peak RSS growth {growth:7.1f} MB  ({elapsed:6.2f} s)")
            return result, growth

        print(f"text: {size / MB:.1f} MB, {size} bytes")
        upload_id, g_upload = measured(
            "upload (PUT, streamed to disk)", lambda: upload(client, text)
        )
        version, g_verify = measured(
            "verify + store + save", lambda: save(client, prompt_id, root_id, {"upload": upload_id})
        )
        html, g_page = measured("version page render", lambda: page_html(version))

        # One-line edit in the middle.
        edited = work / "edited.txt"
        with text.open("rb") as source, edited.open("wb") as target:
            middle = size // 2
            target.write(source.read(middle))
            rest = source.read()
            cut = rest.index(b"\n") + 1
            target.write(rest[:cut] + b"THIS LINE WAS EDITED IN THE BENCHMARK\n")
            target.write(rest[rest.index(b"\n", cut) + 1 :])
        objects_dir = work / "objects" / "blobs"

        def disk() -> int:
            return sum(p.stat().st_size for p in objects_dir.rglob("*") if p.is_file())

        before = disk()
        edit_upload = upload(client, edited)
        edit_version, g_edit = measured(
            "edit: verify + store + save",
            lambda: save(client, prompt_id, version, {"upload": edit_upload}),
        )
        _, g_edit_page = measured("edited version page render", lambda: page_html(edit_version))
        disk_growth = disk() - before
        stored = django_script(
            env,
            f"""
            from playground.models import PromptVersion
            from textstore.models import Blob
            v = PromptVersion.objects.get(pk={edit_version})
            b = Blob.objects.get(pk=v.system_sha)
            print(b.kind, b.stored_size, len(bytes(b.chunk_index or b"")))
            """,
        ).split()

        def first_range(version_id: int) -> list[float]:
            times = []
            for _ in range(args.ranges):
                start = time.perf_counter()
                status, _ = client.request(
                    "GET", f"/api/v1/versions/{version_id}/text/?field=system&offset=0"
                )
                times.append(time.perf_counter() - start)
                assert status == 200, status
            return times

        range_original = first_range(version)
        range_edited = first_range(edit_version)
        deep_times = []
        for _ in range(args.ranges):
            start = time.perf_counter()
            status, _ = client.request(
                "GET",
                f"/api/v1/versions/{edit_version}/text/?field=system&offset={size * 3 // 4}",
            )
            deep_times.append(time.perf_counter() - start)
            assert status == 200, status
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)

    worst = max(g_upload, g_verify, g_page, g_edit, g_edit_page)
    print(f"peak RSS growth, worst phase:       {worst:.1f} MB (target < 20 MB)")
    print(
        f"edit: {stored[0]} blob, stored_size {stored[1]} bytes (index {stored[2]}), "
        f"object store grew {disk_growth} bytes; "
        f"{100 * int(stored[1]) / size:.5f}% of the text (target < 1%)"
    )
    print(
        f"first range p50: original {p50(range_original) * 1e3:.1f} ms, "
        f"edited {p50(range_edited) * 1e3:.1f} ms; 3/4 deep in the edited text "
        f"{p50(deep_times) * 1e3:.1f} ms (target < 200 ms)"
    )
    print(
        f"version page HTML: 50 KB text {len(small_html)} bytes, {args.mb} MB text "
        f"{len(html)} bytes (ratio {len(html) / len(small_html):.2f})"
    )
    print(f"peak_rss_growth_mb={worst:.1f}")


if __name__ == "__main__":
    main()
