"""The read path of a very large prompt: ranges, pages and diffs, with the memory they take.

Run: `.venv/bin/python bench/text_ranges.py [--mb 50] [--requests 30] [--s3]` (a throwaway
SQLite database and local object store in a temporary folder; with `--s3`, a moto S3 server
on loopback started for the run, so chunks are fetched with ranged GETs over HTTP).

A child process stores a prompt whose system text is `--mb` MB (v1, a chunked snapshot) and a
one-line edit of it (v2, a delta), plus a 50 KB prompt. A fresh process then measures, through
Django's handler with the caches emptied before every request (cold reads):

- the range API (`GET /api/v1/versions/{id}/text/`, 64 Ki characters at random offsets) on v1
  and v2: p50/p99 against the baseline of rebuilding v2's whole text once (`blob_read`);
- the shared page of the 50 KB and of the large prompt: bytes of each (should be about equal);
- the diff page v1 → v2: bytes and time, against reading both whole texts once;
- the process's peak RSS growth over idle across all of the above (ru_maxrss), which must stay
  well under the text's size (the pages and ranges never hold a whole text).
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._django import setup_django  # noqa: E402


def _text(chars: int, seed: int) -> str:
    rng = random.Random(seed)
    words = ["cache", "queue", "shard", "grüße", "replica", "lease", "quorum", "budget"]
    lines, size, number = [], 0, 0
    while size < chars:
        line = f"{number:07d} " + " ".join(rng.choice(words) for _ in range(10))
        lines.append(line)
        size += len(line) + 1
        number += 1
    return "\n".join(lines)[:chars]


def _setup(workdir: Path) -> None:
    setup_django(workdir)
    endpoint = (workdir / "s3-endpoint").read_text() if (workdir / "s3-endpoint").exists() else ""
    if endpoint:
        from django.conf import settings

        settings.S3_ENDPOINT_URL = endpoint
        settings.S3_BUCKET = "bench"
        settings.S3_ACCESS_KEY_ID = "test"
        settings.S3_SECRET_ACCESS_KEY = "test"  # noqa: S105 - moto's


def create(workdir: Path, megabytes: int) -> None:
    _setup(workdir)
    from textstore import objects

    if objects.object_presign_available():
        objects.object_store().client.create_bucket(Bucket="bench")  # type: ignore[attr-defined]
    from accounts.services import user_create
    from playground.selectors import version_content
    from playground.services import prompt_create, prompt_version_create, share_link_create

    owner = user_create(username="bench", password="bench-password-123")  # noqa: S106
    big = _text(megabytes * 1_000_000, 1)
    prompt, v1 = prompt_create(
        actor=owner, title="big", content={"provider": "echo", "model": "echo-1", "system": big}
    )
    lines = big.split("\n")
    lines[len(lines) // 2] = "THE EDITED LINE"
    content = version_content(version=v1)
    content["system"] = "\n".join(lines)
    v2 = prompt_version_create(actor=owner, prompt=prompt, parent=v1, content=content).version
    small, s1 = prompt_create(
        actor=owner,
        title="small",
        content={"provider": "echo", "model": "echo-1", "system": _text(50_000, 2)},
    )
    _, big_token = share_link_create(actor=owner, prompt=prompt, access="public", version=v1)
    _, small_token = share_link_create(actor=owner, prompt=small, access="public", version=s1)
    ids = {
        "prompt": prompt.pk,
        "v1": v1.pk,
        "v2": v2.pk,
        "chars": len(big),
        "big_token": big_token,
        "small_token": small_token,
    }
    (workdir / "ids.json").write_text(json.dumps(ids))


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def measure(workdir: Path, requests: int) -> None:
    _setup(workdir)
    from django.contrib.auth.models import User
    from django.test import Client

    from playground.models import PromptVersion
    from textstore.cache import caches_clear
    from textstore.selectors import blob_read

    ids = json.loads((workdir / "ids.json").read_text())
    client = Client()
    client.force_login(User.objects.get(username="bench"))
    anonymous = Client()
    # Warm up: URL resolver, templates, the session, and the object-store client (boto3 loads
    # its service models on first use) with one small range; "idle" is the peak after that.
    client.get("/playground/")
    client.get(f"/api/v1/versions/{ids['v1']}/text/?field=system&length=10")
    idle = _peak_mb()
    rng = random.Random(3)

    def range_ms(version: int) -> list[float]:
        times = []
        for _ in range(requests):
            offset = rng.randrange(ids["chars"])
            caches_clear()
            start = time.perf_counter()
            response = client.get(
                f"/api/v1/versions/{version}/text/?field=system&offset={offset}&length=65536"
            )
            times.append((time.perf_counter() - start) * 1000)
            assert response.status_code == 200
        return sorted(times)

    snapshot = range_ms(ids["v1"])
    delta = range_ms(ids["v2"])
    pages = {}
    for name in ("small", "big"):
        caches_clear()
        response = anonymous.get(f"/s/{ids[name + '_token']}")
        assert response.status_code == 200
        pages[name] = len(response.content)
    caches_clear()
    start = time.perf_counter()
    diff = client.get(f"/playground/p/{ids['prompt']}/diff/?a={ids['v1']}&b={ids['v2']}")
    diff_ms = (time.perf_counter() - start) * 1000
    assert diff.status_code == 200 and b"EDITED" in diff.content
    peak_growth = _peak_mb() - idle

    # Baselines last: they hold whole texts and would hide the figures above in ru_maxrss.
    v2 = PromptVersion.objects.get(pk=ids["v2"])
    v1 = PromptVersion.objects.get(pk=ids["v1"])
    caches_clear()
    start = time.perf_counter()
    blob_read(sha=v2.system_sha)
    rebuild_ms = (time.perf_counter() - start) * 1000
    caches_clear()
    start = time.perf_counter()
    blob_read(sha=v1.system_sha)
    blob_read(sha=v2.system_sha)
    both_ms = (time.perf_counter() - start) * 1000

    def pct(values: list[float], q: float) -> float:
        return values[min(len(values) - 1, int(q * len(values)))]

    mb = ids["chars"] / 1e6
    store = "S3 (moto over HTTP)" if (workdir / "s3-endpoint").exists() else "local disk"
    print(f"text: {mb:.0f} MB on {store}; v2 is a one-line edit stored as a delta; cold reads")
    for name, values in (("snapshot v1", snapshot), ("delta v2", delta)):
        print(
            f"range 64Ki chars, {name}: p50={statistics.median(values):.1f} ms"
            f" p99={pct(values, 0.99):.1f} ms  (baseline whole rebuild of v2: {rebuild_ms:.0f} ms,"
            f" ratio p50/baseline={statistics.median(values) / rebuild_ms:.3f})"
        )
    print(
        f"shared page bytes: 50 KB text {pages['small']:,}, {mb:.0f} MB text {pages['big']:,}"
        f" (ratio {pages['big'] / pages['small']:.3f})"
    )
    print(
        f"diff page v1->v2: {len(diff.content):,} bytes in {diff_ms:.0f} ms"
        f" (baseline: reading both whole texts {both_ms:.0f} ms,"
        f" ratio {diff_ms / both_ms:.3f})"
    )
    print(f"peak RSS growth over idle for ranges, pages and the diff: {peak_growth:.1f} MB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=50)
    parser.add_argument("--requests", type=int, default=30)
    parser.add_argument("--phase", choices=["all", "create", "measure"], default="all")
    parser.add_argument("--workdir", type=Path)
    parser.add_argument("--s3", action="store_true", help="object storage on a moto server")
    args = parser.parse_args()
    if args.phase == "create":
        create(args.workdir, args.mb)
        return
    if args.phase == "measure":
        measure(args.workdir, args.requests)
        return
    with tempfile.TemporaryDirectory(prefix="redline-bench-") as tmp:
        moto = None
        if args.s3:
            port = _free_port()
            moto = subprocess.Popen(  # noqa: S603 - moto on loopback
                [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            _wait_for(port)
            (Path(tmp) / "s3-endpoint").write_text(f"http://127.0.0.1:{port}")
        try:
            for phase in ("create", "measure"):
                command = [sys.executable, __file__, "--phase", phase, "--workdir", tmp]
                command += ["--mb", str(args.mb), "--requests", str(args.requests)]
                subprocess.run(command, check=True)  # noqa: S603 - this script, our arguments
        finally:
            if moto is not None:
                moto.terminate()
                moto.wait(timeout=10)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_for(port: int) -> None:
    for _ in range(200):
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"moto did not start on port {port}")


if __name__ == "__main__":
    main()
