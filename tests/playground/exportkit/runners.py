"""Run exported snippets the way a user would: bash + curl, the venv's Python, node.

The npm SDKs are installed once into `var/export-sdks/` at the repository root (a cache shared
by test sessions, never committed) and reused while the pinned versions match.

Python exports run in children forked from one interpreter that imported both SDKs once
(`PythonForkServer`): importing the anthropic SDK alone takes about 1.5 s, which was most of
the export suite's time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests import npmcache

REPO_ROOT = Path(__file__).resolve().parents[3]
NODE_CACHE = REPO_ROOT / "var" / "export-sdks"

# Pinned so a new SDK release cannot change the suite's outcome overnight. openai 7 needs
# Node >= 22; 6.x is the newest line that supports the Node 20 these machines have.
# TypeScript 5.x (the JS compiler) type-checks the exports.
NPM_PACKAGES = {
    "@anthropic-ai/sdk": "1.14.0",
    "openai": "6.49.0",
    "typescript": "5.9.3",
}

# What a run may see of the machine: no inherited keys, proxies, base URLs or SDK profiles.
_PASSED_THROUGH = ("PATH", "LANG", "LC_ALL", "SYSTEMROOT", "TMPDIR")


class SdkInstallError(RuntimeError):
    """The npm SDKs could not be installed (no network, registry error)."""


def run_env(home: Path, **values: str) -> dict[str, str]:
    """A minimal environment for a snippet: PATH and locale, a private HOME, then `values`."""
    env = {name: os.environ[name] for name in _PASSED_THROUGH if name in os.environ}
    env.setdefault("LANG", "C.UTF-8")
    env["HOME"] = str(home)
    env.update(values)
    return env


def run(
    argv: list[str], *, env: dict[str, str], cwd: Path, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """Run and return the finished process; a non-zero exit fails with its stderr."""
    proc = subprocess.run(
        argv,
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=timeout,
        check=False,
    )
    return _succeeded(proc)


def _succeeded(proc: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    if proc.returncode != 0:
        raise AssertionError(
            f"{proc.args[0]} exited {proc.returncode}\n--- stderr ---\n{proc.stderr[-4000:]}"
            f"\n--- stdout ---\n{proc.stdout[-2000:]}"
        )
    return proc


# The fork server: reads one job (JSON) per line, forks, and the child runs the script as
# `python <path>` would: a fresh `__main__` namespace (so nothing the script forgot to import
# leaks in from here), its own argv, sys.path[0], cwd, environment, stdin from /dev/null and
# stdout/stderr to files. SIGALRM ends a child that runs past its timeout.
_FORK_SERVER = r"""
import json, os, runpy, signal, sys, traceback

import anthropic, openai  # the slow imports, paid once


def child(job):
    signal.alarm(job["timeout"])
    os.chdir(job["cwd"])
    os.environ.clear()
    os.environ.update(job["env"])
    for fd, path in ((0, os.devnull), (1, job["stdout"]), (2, job["stderr"])):
        flags = os.O_RDONLY if fd == 0 else os.O_WRONLY | os.O_CREAT | os.O_TRUNC
        target = os.open(path, flags, 0o600)
        os.dup2(target, fd)
        os.close(target)
    sys.argv = [job["path"]]
    sys.path[0] = os.path.dirname(job["path"])
    try:
        runpy.run_path(job["path"], run_name="__main__")
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        print(exc.code, file=sys.stderr)
        return 1
    except BaseException:
        traceback.print_exc()
        return 1
    return 0


for line in sys.stdin:
    job = json.loads(line)
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            code = child(job)
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    sys.stdout.write(json.dumps({"returncode": os.waitstatus_to_exitcode(status)}) + "\n")
    sys.stdout.flush()
"""


class PythonForkServer:
    """`python export.py` without paying the SDK imports each time; see `_FORK_SERVER`."""

    def __init__(self, home: Path) -> None:
        self._proc = subprocess.Popen(
            [python_executable(), "-c", _FORK_SERVER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=run_env(home),  # the locale and stdio encoding the children inherit
            text=True,
            encoding="utf-8",
        )

    def run(
        self, path: Path, *, env: dict[str, str], cwd: Path, timeout: int = 60
    ) -> subprocess.CompletedProcess[str]:
        """Like `run([python, path], ...)`: the finished run; a non-zero exit fails."""
        assert self._proc.stdin is not None
        assert self._proc.stdout is not None
        out, err = cwd / ".python-stdout", cwd / ".python-stderr"
        job = {
            "path": str(path),
            "cwd": str(cwd),
            "env": env,
            "stdout": str(out),
            "stderr": str(err),
            "timeout": timeout,
        }
        self._proc.stdin.write(json.dumps(job) + "\n")
        self._proc.stdin.flush()
        reply = self._proc.stdout.readline()
        if not reply:
            raise AssertionError(f"the Python fork server exited ({self._proc.poll()})")
        proc = subprocess.CompletedProcess(
            [python_executable(), str(path)],
            json.loads(reply)["returncode"],
            out.read_text(encoding="utf-8"),
            err.read_text(encoding="utf-8"),
        )
        return _succeeded(proc)

    def close(self) -> None:
        assert self._proc.stdin is not None
        self._proc.stdin.close()
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()


def python_executable() -> str:
    """The interpreter running the tests: the project's venv, which has both SDKs."""
    return sys.executable


def ensure_node_sdks(cache: Path = NODE_CACHE) -> Path:
    """The cache's node_modules with the pinned SDKs, installing them with npm if needed."""
    try:
        return npmcache.ensure_npm_packages(
            cache,
            NPM_PACKAGES,
            description="npm SDKs the export tests run TypeScript exports against (a cache).",
        )
    except npmcache.NpmInstallError as exc:
        raise SdkInstallError(str(exc)) from exc


def link_node_modules(workdir: Path, node_modules: Path) -> None:
    """Let ES modules in `workdir` import the cached SDKs (ESM ignores NODE_PATH)."""
    link = workdir / "node_modules"
    if not link.exists():
        link.symlink_to(node_modules, target_is_directory=True)
