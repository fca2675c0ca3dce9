"""Every third-party module the code imports is declared in pyproject.toml, and the locks pin
every declared package at a version its specifier allows (Makefile: `make install` installs
from the lock only, so an undeclared import would be missing on a fresh install).

App packages (everything a server runs) may use only `[project].dependencies`; tests and
bench/ may also use the `dev` extra. Import names are mapped to distributions through the
installed packages' metadata (`yaml` → PyYAML, `rest_framework` → djangorestframework).
"""

import ast
import re
import sys
import tomllib
from collections.abc import Mapping
from functools import cache
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent
TOOLS = {"tests", "bench"}  # may import the dev extra too
# What is not an app package: folders without Python code of the server's.
NOT_APPS = TOOLS | {"clients", "docs", "static", "templates", "var"}


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def _requirements(group: str) -> list[Requirement]:
    project = _project()
    lines = project["dependencies"] if group == "main" else project["optional-dependencies"][group]
    return [Requirement(line) for line in lines]


def _client_requirements() -> list[Requirement]:
    client = tomllib.loads((ROOT / "clients/python/pyproject.toml").read_text())["project"]
    return [Requirement(line) for line in client["dependencies"]]


def _local_names() -> set[str]:
    names = {path.stem for path in ROOT.glob("*.py")}
    names |= {path.name for path in ROOT.iterdir() if path.is_dir()}
    return names | {"redline"}  # the Python client's package (clients/python)


def _app_sources() -> list[Path]:
    apps = [
        path
        for path in ROOT.iterdir()
        if path.is_dir() and path.name not in NOT_APPS and (path / "__init__.py").exists()
    ]
    files = [path for app in apps for path in app.rglob("*.py")]
    return files + sorted(ROOT.glob("*.py"))


def _tool_sources() -> list[Path]:
    return [path for folder in TOOLS for path in (ROOT / folder).rglob("*.py")]


def _third_party_imports(files: list[Path]) -> dict[str, str]:
    """Top-level module → the first file importing it, for modules neither stdlib nor ours."""
    local = _local_names()
    found: dict[str, str] = {}
    for path in files:
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules = [node.module]
            else:
                continue
            for module in modules:
                top = module.split(".")[0]
                if top in sys.stdlib_module_names or top in local:
                    continue
                where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name
                found.setdefault(top, str(where))
    return found


@cache
def _distributions() -> Mapping[str, list[str]]:
    return packages_distributions()


def _undeclared(files: list[Path], declared: set[str]) -> list[str]:
    problems = []
    for module, where in sorted(_third_party_imports(files).items()):
        dists = {_normalized(d) for d in _distributions().get(module, [])}
        if not dists:
            problems.append(f"{module} (imported in {where}) is not installed")
        elif not dists & declared:
            problems.append(f"{module} (imported in {where}) comes from {sorted(dists)}")
    return problems


def test_the_apps_import_only_declared_runtime_dependencies():
    declared = {_normalized(r.name) for r in _requirements("main")}
    problems = _undeclared(_app_sources(), declared)
    assert not problems, "declare in [project].dependencies:\n" + "\n".join(problems)


def test_tests_and_bench_import_only_declared_dependencies():
    declared = {
        _normalized(r.name)
        for r in _requirements("main") + _requirements("dev") + _client_requirements()
    }
    problems = _undeclared(_tool_sources(), declared)
    assert not problems, "declare in the dev extra:\n" + "\n".join(problems)


def test_the_check_sees_an_undeclared_import(tmp_path):
    source = tmp_path / "module.py"
    source.write_text("import yaml\nfrom rest_framework import serializers\nimport json\n")
    assert _undeclared([source], {"djangorestframework"}) == [
        "yaml (imported in module.py) comes from ['pyyaml']"
    ]


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
