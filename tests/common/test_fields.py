"""common.fields: a serializer that reads a request body takes a string only where the schema
says string, and true/false only where it says boolean; every such serializer is strict."""

import ast
import importlib
from pathlib import Path
from typing import Any

import pytest
from rest_framework import serializers

from common.fields import StrictSerializer, is_strict

ROOT = Path(__file__).resolve().parent.parent.parent
NOT_APPS = {"tests", "bench", "clients", "docs", "static", "templates", "var"}


class Inner(StrictSerializer):
    name = serializers.CharField()


class Body(StrictSerializer):
    title = serializers.CharField(required=False)
    email = serializers.EmailField(required=False)
    flag = serializers.BooleanField(required=False)
    tags = serializers.ListField(child=serializers.CharField(), required=False)
    switches = serializers.DictField(child=serializers.BooleanField(), required=False)
    inner = Inner(required=False)
    count = serializers.IntegerField(required=False)


@pytest.mark.parametrize(
    ("body", "field", "message"),
    [
        ({"title": 0}, "title", "Not a valid string."),
        ({"email": 5}, "email", "Enter a valid email address."),  # EmailField's "invalid"
        ({"flag": 1}, "flag", "Must be true or false."),
        ({"flag": "true"}, "flag", "Must be true or false."),
        ({"flag": None}, "flag", "This field may not be null."),
    ],
)
def test_a_wrong_type_is_an_error_naming_the_field(body, field, message):
    serializer = Body(data=body)
    assert not serializer.is_valid()
    assert serializer.errors[field] == [message]


def test_fields_inside_lists_dicts_and_nested_serializers_are_strict_too():
    serializer = Body(data={"tags": ["ok", 2], "switches": {"a": 0}, "inner": {"name": 3}})
    assert not serializer.is_valid()
    assert serializer.errors["tags"] == {1: ["Not a valid string."]}
    assert serializer.errors["switches"] == {"a": ["Must be true or false."]}
    assert serializer.errors["inner"] == {"name": ["Not a valid string."]}


def test_the_right_types_are_taken_and_other_fields_keep_their_rules():
    serializer = Body(
        data={"title": " t ", "flag": False, "tags": ["a"], "switches": {"a": True}, "count": "3"}
    )
    assert serializer.is_valid(), serializer.errors
    assert serializer.validated_data["title"] == "t"  # CharField's own trimming still applies
    assert serializer.validated_data["count"] == 3


def test_plain_serializers_are_not_changed():
    class Plain(serializers.Serializer):
        title = serializers.CharField()

    serializer = Plain(data={"title": 0})
    assert serializer.is_valid()  # DRF's own behaviour, outside request bodies
    assert serializer.validated_data["title"] == "0"


# --- every serializer a view reads a body with is strict --------------------------------------


def _data_calls(node: ast.AST) -> list[ast.expr]:
    """What is called with a `data=` keyword under `node`."""
    return [
        call.func
        for call in ast.walk(node)
        if isinstance(call, ast.Call) and any(k.arg == "data" for k in call.keywords)
    ]


def _body_serializers() -> list[tuple[str, type]]:
    """(where, class) of every `self.X(data=...)` in a class and `X(data=...)` in a module of
    the apps' code, X a serializer."""
    found = []
    apps = [p for p in ROOT.iterdir() if p.is_dir() and p.name not in NOT_APPS]
    paths = sorted(f for app in apps if (app / "__init__.py").exists() for f in app.rglob("*.py"))
    for path in paths:
        name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        tree = ast.parse(path.read_text())
        candidates: list[tuple[str, object]] = []
        for func in _data_calls(tree):
            if isinstance(func, ast.Name):
                candidates.append((func.id, getattr(importlib.import_module(name), func.id, None)))
        for owner in (n for n in tree.body if isinstance(n, ast.ClassDef)):
            for func in _data_calls(owner):
                if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
                    if func.value.id == "self":
                        view = getattr(importlib.import_module(name), owner.name)
                        candidates.append((f"{owner.name}.{func.attr}", getattr(view, func.attr)))
        for where, cls in candidates:
            if isinstance(cls, type) and issubclass(cls, serializers.BaseSerializer):
                found.append((f"{name}:{where}", cls))
    return found


def _loose_fields(serializer: Any, path: str) -> list[str]:
    if isinstance(serializer, serializers.ListSerializer):
        return _loose_fields(serializer.child, path + "[]")
    if not isinstance(serializer, StrictSerializer):
        return [f"{path}: {type(serializer).__name__} is not a StrictSerializer"]
    loose = []
    for name, field in serializer.fields.items():
        loose += _loose_field(field, f"{path}.{name}")
    return loose


def _loose_field(field: serializers.Field, path: str) -> list[str]:
    if isinstance(field, serializers.BaseSerializer):
        return _loose_fields(field, path)
    if isinstance(field, (serializers.ListField, serializers.DictField)):
        return _loose_field(field.child, path + "[]")
    if isinstance(field, (serializers.CharField, serializers.BooleanField)) and not is_strict(
        field
    ):
        return [f"{path}: {type(field).__name__} is not strict"]
    return []


def test_every_serializer_that_reads_a_request_body_is_strict():
    found = _body_serializers()
    assert len(found) >= 20  # the scan sees the views' InputSerializers
    loose = [problem for where, cls in found for problem in _loose_fields(cls(), where)]
    assert not loose, "make these StrictSerializers (common/fields.py):\n" + "\n".join(loose)


def test_a_string_longer_than_its_limit_is_refused_even_when_trimming_would_fit_it():
    from rest_framework import serializers as drf

    from common.fields import StrictSerializer

    class Sample(StrictSerializer):
        title = drf.CharField(max_length=5)

    assert Sample(data={"title": " abcde"}).is_valid() is False
    assert Sample(data={"title": "abcde"}).is_valid() is True
