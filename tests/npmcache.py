"""Pinned npm packages for the tests, installed once into a cache folder under `var/`.

The cache is shared by test sessions (and xdist workers, one install at a time) and reused
while the pinned versions match. Nothing here is committed; npm reaches the registry.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]


class NpmInstallError(RuntimeError):
    """The pinned npm packages could not be installed (no npm, no network, registry error)."""


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def installed_versions(cache: Path, packages: dict[str, str]) -> dict[str, str | None]:
    """The version of each pinned package present in the cache, or None."""
    found: dict[str, str | None] = {}
    for name in packages:
        manifest = cache / "node_modules" / name / "package.json"
        try:
            found[name] = json.loads(manifest.read_text())["version"]
        except (OSError, ValueError, KeyError):
            found[name] = None
    return found


def ensure_npm_packages(cache: Path, packages: dict[str, str], *, description: str) -> Path:
    """The cache's node_modules holding exactly `packages`, installing them with npm if needed."""
    npm = shutil.which("npm")
    if npm is None:
        raise NpmInstallError("npm not found on PATH")
    with _locked(cache / ".install.lock"):
        if installed_versions(cache, packages) == packages:
            return cache / "node_modules"
        cache.mkdir(parents=True, exist_ok=True)
        manifest = {
            "name": f"redline-test-cache-{cache.name}",
            "private": True,
            "description": description,
            "dependencies": packages,
        }
        (cache / "package.json").write_text(json.dumps(manifest, indent=2) + "\n")
        try:
            proc = subprocess.run(
                [npm, "install", "--no-audit", "--no-fund"],
                cwd=cache,
                capture_output=True,
                text=True,
                timeout=600,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            raise NpmInstallError(f"npm install timed out after {exc.timeout}s") from exc
        if proc.returncode != 0 or installed_versions(cache, packages) != packages:
            raise NpmInstallError(
                f"npm install in {cache.relative_to(REPO_ROOT)} failed "
                f"(exit {proc.returncode}): {proc.stderr.strip()[-800:]}"
            )
        return cache / "node_modules"
