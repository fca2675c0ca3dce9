"""What webhooks cost a save: version saves with no webhook (the baseline, same run) against
saves on a prompt with 3 webhooks whose receiver never answers (each save writes 3 delivery
rows per event; the sends run on the eager sender's thread pool after commit and are never
waited for).

Prints the median and p95 of one save (`prompt_version_create`, which also moves `main`: two
events) for each case, the ratio to the baseline, and how many requests the hanging receiver
had been sent by the end. Run: `.venv/bin/python bench/webhooks.py [--saves N]`.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._django import setup_django  # noqa: E402


def _hanging_receiver() -> tuple[ThreadingHTTPServer, threading.Event, list[int]]:
    release = threading.Event()
    seen: list[int] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            seen.append(1)
            release.wait(60)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, release, seen


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--saves", type=int, default=60)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        setup_django(Path(tmp))
        from django.conf import settings

        from accounts.services import user_create
        from playground.services import prompt_create, prompt_version_create
        from webhooks.dispatch import eager_drain
        from webhooks.models import Delivery, Webhook

        settings.WEBHOOK_ALLOW_PRIVATE_URLS = True
        settings.WEBHOOK_TIMEOUT_SECONDS = 30
        settings.WEBHOOK_MAX_ATTEMPTS = 1  # once released, each delivery ends at its first try
        server, release, seen = _hanging_receiver()
        owner = user_create(username="bench", password="bench-password-1")
        content = {
            "provider": "echo",
            "model": "echo-1",
            "system": "You review designs.",
            "messages": [{"role": "user", "content": "Review it."}],
        }

        def saves(title: str, hooks: int) -> list[float]:
            prompt, parent = prompt_create(actor=owner, title=title, content=content)
            for _ in range(hooks):
                Webhook.objects.create(
                    prompt=prompt,
                    owner=owner,
                    url=f"http://127.0.0.1:{server.server_port}/hook",
                    events=["version.created", "label.moved"],
                    secret_salt="bench",
                )
            samples = []
            for i in range(args.saves):
                started = time.perf_counter()
                saved = prompt_version_create(
                    actor=owner,
                    prompt=prompt,
                    parent=parent,
                    content={**content, "system": f"You review designs, take {i}."},
                )
                samples.append(time.perf_counter() - started)
                parent = saved.version
            return samples

        baseline = saves("no hooks", 0)
        hooked = saves("three hanging hooks", 3)
        deliveries = Delivery.objects.count()
        holding = len(seen)
        release.set()
        drained = eager_drain(timeout=120)
        server.shutdown()

    def line(name: str, samples: list[float]) -> str:
        ordered = sorted(samples)
        p95 = ordered[int(len(ordered) * 0.95) - 1]
        median = statistics.median(samples) * 1000
        return f"{name:<34} median {median:7.2f} ms   p95 {p95 * 1000:7.2f} ms"

    print(f"{args.saves} version saves each (SQLite, in-process)")
    print(line("no webhook (baseline)", baseline))
    print(line("3 webhooks, receiver never answers", hooked))
    print(f"ratio of medians: {statistics.median(hooked) / statistics.median(baseline):.2f}x")
    print(
        f"deliveries written: {deliveries}; requests the receiver held at once: {holding}"
        f" (WEBHOOK_EAGER_THREADS={settings.WEBHOOK_EAGER_THREADS}); drained after release:"
        f" {drained}"
    )


if __name__ == "__main__":
    main()
