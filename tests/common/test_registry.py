"""The one registry mechanism (`common.registry`, issue #35), and how the apps use it.

- `Registry`: a key registers once (a second registration raises, naming both), reads go in
  key order, a missing key says what is registered, `override` puts everything back, a
  `view` follows the registry as it fills.
"""

import pytest

from common.registry import Registry, RegistryDuplicate


def first() -> str:
    return "first"


def second() -> str:
    return "second"


def test_items_are_read_in_key_order_whatever_the_order_of_registration():
    registry: Registry[int] = Registry("number")
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
    registry: Registry[object] = Registry("greeting provider")
    registry.register("app", first)
    with pytest.raises(RegistryDuplicate) as refused:
        registry.register("app", second)
    message = str(refused.value)
    assert "greeting provider 'app' is already registered" in message
    assert f"{__name__}.first" in message and f"{__name__}.second" in message
    assert "AppConfig.ready()" in message
    assert registry["app"] is first  # the first registration stands
    assert isinstance(refused.value, ValueError)


def test_a_missing_key_says_what_is_registered():
    registry: Registry[int] = Registry("model provider")
    with pytest.raises(KeyError, match=r"no model provider 'x' \(registered: none\)"):
        registry["x"]
    registry.register("echo", 1)
    registry.register("anthropic", 2)
    with pytest.raises(KeyError, match=r"registered: anthropic, echo"):
        registry["x"]
    assert repr(registry) == "<Registry of model provider: anthropic, echo>"


def test_override_replaces_or_adds_inside_the_block_and_restores_after():
    registry: Registry[str] = Registry("thing")
    registry.register("kept", "a")
    with registry.override("kept", "b"), registry.override("added", "c"):
        assert dict(registry) == {"added": "c", "kept": "b"}
    assert dict(registry) == {"kept": "a"}
    with pytest.raises(RuntimeError), registry.override("kept", "d"):
        raise RuntimeError("a failing test")
    assert dict(registry) == {"kept": "a"}


def test_a_view_reads_one_field_of_each_entry_and_follows_the_registry():
    registry: Registry[tuple[str, int]] = Registry("pair")
    sizes = registry.view(lambda pair: pair[1])
    assert dict(sizes) == {}
    registry.register("b", ("bee", 2))
    registry.register("a", ("ay", 1))
    assert dict(sizes) == {"a": 1, "b": 2}
    assert {**sizes, "c": 3} == {"a": 1, "b": 2, "c": 3}
    assert sizes.get("z") is None
    with pytest.raises(KeyError):
        sizes["z"]
