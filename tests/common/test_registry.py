"""The one registry mechanism (`common.registry`, issue #35), and how the apps use it.

- `Registry`: a key registers once (a second registration raises, naming both), reads go in
  key order, a missing key says what is registered, `override` puts everything back, a
  `view` follows the registry as it fills.
- Every registry holds what the apps put in it at start-up, and has its row in
  docs/architecture.md, Registries.
- Entries are added in an `AppConfig.ready()` and nowhere else: the source is read for calls of a
  `<noun>_register` function or of a registry's `register`.
"""

import ast
from pathlib import Path

import pytest

from common.registry import Registry, RegistryDuplicate, registries
from tests.common.tree import APPS as _APPS
from tests.common.tree import ROOT

# The apps and the kernel: `common` holds registries too.
APPS = ("common", *_APPS)


def first() -> str:
    return "first"


def second() -> str:
    return "second"


def test_items_are_read_in_key_order_whatever_the_order_of_registration():
    registry: Registry[int] = Registry("sample number")
    registry.register("b", 2)
    registry.register("c", 3)
    registry.register("a", 1)
    assert list(registry) == ["a", "b", "c"]
    assert list(registry.items()) == [("a", 1), ("b", 2), ("c", 3)]
    assert list(registry.values()) == [1, 2, 3]
    assert len(registry) == 3
    assert registry.get("b") == 2
    assert registry.get("z") is None
    assert "a" in registry and "z" not in registry


def test_a_key_registers_once_and_the_error_names_both_entries():
    registry: Registry[object] = Registry("sample greeting")
    registry.register("app", first)
    with pytest.raises(RegistryDuplicate) as refused:
        registry.register("app", second)
    message = str(refused.value)
    assert "sample greeting 'app' is already registered" in message
    assert f"{__name__}.first" in message and f"{__name__}.second" in message
    assert "AppConfig.ready()" in message
    assert registry["app"] is first  # the first registration stands
    assert isinstance(refused.value, ValueError)


def test_a_missing_key_says_what_is_registered():
    registry: Registry[int] = Registry("sample provider")
    with pytest.raises(KeyError, match=r"no sample provider 'x' \(registered: none\)"):
        registry["x"]
    registry.register("echo", 1)
    registry.register("anthropic", 2)
    with pytest.raises(KeyError, match=r"registered: anthropic, echo"):
        registry["x"]
    assert repr(registry) == "<Registry of sample provider: anthropic, echo>"


def test_override_replaces_or_adds_inside_the_block_and_restores_after():
    registry: Registry[str] = Registry("sample thing")
    registry.register("kept", "a")
    with registry.override("kept", "b"), registry.override("added", "c"):
        assert dict(registry) == {"added": "c", "kept": "b"}
    assert dict(registry) == {"kept": "a"}
    with pytest.raises(RuntimeError), registry.override("kept", "d"):
        raise RuntimeError("a failing test")
    assert dict(registry) == {"kept": "a"}


def test_a_view_reads_one_field_of_each_entry_and_follows_the_registry():
    registry: Registry[tuple[str, int]] = Registry("sample pair")
    sizes = registry.view(lambda pair: pair[1])
    assert dict(sizes) == {}
    registry.register("b", ("bee", 2))
    registry.register("a", ("ay", 1))
    assert dict(sizes) == {"a": 1, "b": 2}
    assert {**sizes, "c": 3} == {"a": 1, "b": 2, "c": 3}
    assert sizes.get("z") is None
    with pytest.raises(KeyError):
        sizes["z"]


# What each registry holds once the apps are ready, by what its entries are. The registries are
# found through `registries()`, not by module, so this holds wherever a registry's module lives.
REGISTERED = {
    "blob reference provider": ["playground", "reviews"],
    "fixture reply resolver": ["critique"],
    "gate describer": ["changes"],
    "grade reason guard": ["answer-key"],
    "grader type": ["answer-key"],
    "model provider": ["anthropic", "echo", "fixture", "openai"],
    "practice page panel": ["critique"],
    "related-items provider": ["playground", "reviews"],
    "review page panel": ["critique"],
    "version badge provider": ["evals"],
}


def _app_registries() -> dict[str, list[str]]:
    return {
        registry.what: list(registry)
        for registry in registries()
        if not registry.what.startswith("sample ")  # this module's own, if still alive
    }


def test_the_apps_fill_every_registry_at_start_up():
    assert _app_registries() == REGISTERED


def test_every_registry_has_a_row_in_the_architecture_docs():
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("\n## Registries\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ")]
    missing = [what for what in REGISTERED if not any(what in row for row in rows)]
    assert missing == []


def test_every_model_provider_a_version_may_name_has_an_adapter():
    from playground.runs.providers import provider_get

    for name in REGISTERED["model provider"]:
        assert provider_get(name).name == name


def test_a_registered_grader_may_not_take_a_built_in_type():
    from evals.graders import grade_equals
    from evals.services.grader_registry import grader_register

    with pytest.raises(RegistryDuplicate, match="'equals' is built in"):
        grader_register(type="equals", grade_fn=grade_equals, parse_fn=lambda spec, where: None)


def _sources() -> list[Path]:
    paths: list[Path] = []
    for app in APPS:
        paths += [p for p in sorted((ROOT / app).rglob("*.py")) if "migrations" not in p.parts]
    return paths


def _registrations_outside_ready(path: Path, root: Path = ROOT) -> list[str]:
    """Calls of `x_register(...)` or `y.register(...)` (not Django admin's) that are not in an
    apps.py's `ready()` nor in the body of a `*_register` function (the registry's own
    keyword-only front door)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    allowed: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and (
            (path.name == "apps.py" and node.name == "ready") or node.name.endswith("_register")
        ):
            allowed |= {id(inner) for inner in ast.walk(node)}
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or id(node) in allowed:
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
        if isinstance(func, ast.Attribute) and "admin" in ast.unparse(func.value):
            continue  # django.contrib.admin's own register
        if name.endswith("_register") or name == "register":
            found.append(f"{path.relative_to(root)}:{node.lineno}: {ast.unparse(func)}")
    return found


def test_entries_are_registered_only_in_an_app_config_ready():
    found = [line for path in _sources() for line in _registrations_outside_ready(path)]
    assert found == []


def test_the_source_check_sees_a_registration_at_import(tmp_path):
    module = tmp_path / "badges.py"
    module.write_text(
        "from playground.version_tree.badges import version_badges_register\n"
        "version_badges_register(name='x', provider=None)\n"
        "def ready():\n"
        "    version_badges_register(name='y', provider=None)\n"
    )
    assert _registrations_outside_ready(module, root=tmp_path) == [
        "badges.py:2: version_badges_register",
        "badges.py:4: version_badges_register",  # a ready() outside apps.py does not count
    ]
