"""Memory of the version fetch API while it reads large versions (issue #21).

Run: `.venv/bin/python bench/fetch_memory.py [--mib 8] [--versions 6]` (a throwaway SQLite
database and object store in a temporary folder).

Saves a prompt whose system text is `--mib` MiB (with one emoji, so ranges cross astral
characters) and `--versions` one-line edits of it, then reads each version through
`GET /api/v1/versions/{id}/` (long texts as heads), then each again with `?full=1` (streamed,
read to the end), in this process through Django's handler. After each phase it prints the
process's resident memory (VmRSS) growth over its RSS before the first read, and the fetch
cache's bytes. What to read: `rss_growth_heads_mb` stays small (the answers carry heads; the
fetch cache holds heads, not texts); `rss_growth_full_mb` is bounded by the textstore's own
caches (TEXTSTORE_CACHE_BYTES, TEXTSTORE_BASE_CACHE_BYTES), not by the number of versions.
"""

import argparse
import gc
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._django import setup_django  # noqa: E402


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mib", type=int, default=8)
    parser.add_argument("--versions", type=int, default=6)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        setup_django(Path(tmp))
        from django.conf import settings
        from rest_framework.test import APIClient

        from accounts.services import api_token_create, user_create
        from playground.services import prompt_create, prompt_version_create
        from playground.sharing.fetch import content_cache
        from textstore.cache import caches_clear

        user = user_create(username="bench", password="bench-pass-123")
        line = "A line of a very long system prompt, the same on every version.\n"
        lines = [line] * (args.mib * 1024 * 1024 // len(line))
        lines[len(lines) // 2] = "A line with an emoji 🙂 in the middle of it.\n"
        content = {
            "provider": "anthropic",
            "model": "claude-sonnet-4-6",
            "system": "".join(lines),
            "messages": [{"role": "user", "content": "Go."}],
        }
        prompt, version = prompt_create(actor=user, title="big", content=content)
        ids = [version.pk]
        for n in range(args.versions - 1):
            lines[n * 997 % len(lines)] = f"Edited line {n}.\n"
            content = {**content, "system": "".join(lines)}
            version = prompt_version_create(
                actor=user, prompt=prompt, parent=version, content=content, message=f"e{n}"
            ).version
            ids.append(version.pk)
        del lines, content
        _, key = api_token_create(actor=user)
        api = APIClient()
        api.credentials(HTTP_AUTHORIZATION=f"Token {key}")
        caches_clear()
        content_cache.clear()
        api.get(f"/api/v1/versions/{ids[0]}/?full=9")  # warm up imports (a 400)
        gc.collect()
        idle = rss_mb()
        print(
            f"# {args.versions} versions of a {args.mib} MiB text, head "
            f"{settings.PLAYGROUND_JSON_TEXT_HEAD_CHARS} characters; idle RSS {idle:.1f} MB"
        )
        start = time.perf_counter()
        size = 0
        for pk in ids:
            response = api.get(f"/api/v1/versions/{pk}/")
            assert response.status_code == 200, response.status_code
            size += len(response.content)
        gc.collect()
        heads = rss_mb() - idle
        print(
            f"heads: {len(ids)} answers, {size / len(ids) / 1024:.1f} KiB each, "
            f"{time.perf_counter() - start:.2f} s; RSS growth {heads:.1f} MB; "
            f"fetch cache {content_cache.used / 1024:.0f} KiB"
        )
        start = time.perf_counter()
        size = 0
        for pk in ids:
            response = api.get(f"/api/v1/versions/{pk}/?full=1")
            assert response.status_code == 200, response.status_code
            for piece in response.streaming_content:  # type: ignore[attr-defined]
                size += len(piece)
        gc.collect()
        full = rss_mb() - idle
        print(
            f"full=1: {len(ids)} answers, {size / len(ids) / 2**20:.1f} MiB each, "
            f"{time.perf_counter() - start:.2f} s; RSS growth {full:.1f} MB"
        )
        print(f"rss_growth_heads_mb={heads:.1f}")
        print(f"rss_growth_full_mb={full:.1f}")


if __name__ == "__main__":
    main()
