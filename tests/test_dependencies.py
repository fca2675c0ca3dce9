"""The locks pin every declared package at a version its specifier allows, with its hashes
(Makefile: `make install` installs from the lock only, `--require-hashes`).

Which packages the code imports is deptry's job (`make lint`, `[tool.deptry]` in pyproject.toml):
the server's code only `[project].dependencies`, tests and bench/ the `dev` extra too.
"""

import re
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirements(group: str) -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    lines = project["dependencies"] if group == "main" else project["optional-dependencies"][group]
    return [Requirement(line) for line in lines]


def _client_requirements() -> list[Requirement]:
    client = tomllib.loads((ROOT / "clients/python/pyproject.toml").read_text())["project"]
    return [Requirement(line) for line in client["dependencies"]]


def _pins(lock: str) -> dict[str, str]:
    text = (ROOT / lock).read_text()
    return {
        _normalized(name): version
        for name, version in re.findall(r"^([A-Za-z0-9._-]+)==([^\s\\]+)", text, re.M)
    }


@pytest.mark.parametrize(
    ("lock", "groups"),
    [("requirements.lock", ("main",)), ("requirements-dev.lock", ("main", "dev"))],
)
def test_the_locks_pin_every_declared_package_within_its_bounds(lock, groups):
    pins = _pins(lock)
    wanted = [r for group in groups for r in _requirements(group)] + _client_requirements()
    problems = []
    for requirement in wanted:
        pinned = pins.get(_normalized(requirement.name))
        if pinned is None:
            problems.append(f"{requirement.name} is not in {lock}")
        elif not requirement.specifier.contains(pinned, prereleases=True):
            problems.append(f"{requirement.name}=={pinned} is outside {requirement.specifier}")
    assert not problems, "run `make lock`:\n" + "\n".join(problems)


def test_every_pin_has_a_hash():
    for lock in ("requirements.lock", "requirements-dev.lock", "requirements-uv.lock"):
        blocks = re.split(r"\n(?=[A-Za-z0-9])", (ROOT / lock).read_text())
        pinned = [block for block in blocks if "==" in block.split("\n")[0]]
        assert pinned
        assert all("--hash=sha256:" in block for block in pinned), lock


def test_the_bootstrap_lock_installs_the_uv_the_dev_lock_pins():
    # `make install` installs uv from requirements-uv.lock with pip, then the dev lock with it.
    assert _pins("requirements-uv.lock") == {"uv": _pins("requirements-dev.lock")["uv"]}
