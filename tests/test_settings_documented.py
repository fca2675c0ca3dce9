"""Settings and their documentation (issue #35).

- docs/operations.md, "Settings reference", names exactly the environment variables that
  config/settings.py reads (each through `config.env.env`), so the table cannot drift;
- the one reader of the environment (`config.env.Env`) keeps its promises: typed defaults, an
  empty number read as unset, a bad value stopping start-up with the variable's name, a value
  starting with `$` taken as it is.
"""

import ast
import re
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from config.env import Env

ROOT = Path(__file__).resolve().parent.parent
READS = {"str", "int", "float", "bool", "list", "pairs"}


def _variables_read() -> set[str]:
    """Names passed to `env.<read>("NAME", ...)` anywhere in config/settings.py."""
    tree = ast.parse((ROOT / "config" / "settings.py").read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "env"
        ):
            assert node.func.attr in READS, ast.unparse(node)
            first = node.args[0]
            assert isinstance(first, ast.Constant), ast.unparse(node)
            assert isinstance(first.value, str), ast.unparse(node)
            names.add(first.value)
    return names


def _variables_documented() -> set[str]:
    """Names in the first column of the tables under "## Settings reference"."""
    text = (ROOT / "docs" / "operations.md").read_text(encoding="utf-8")
    section = text.split("\n## Settings reference\n", 1)[1].split("\n## ", 1)[0]
    names = set()
    for line in section.splitlines():
        if line.startswith("| `"):
            first_cell = line.split("|")[1]
            names.update(re.findall(r"`([A-Z][A-Z0-9_]+)`", first_cell))
    return names


def test_the_settings_reference_names_every_variable_read_and_no_other():
    read = _variables_read()
    documented = _variables_documented()
    assert len(read) > 100  # the walk found the reads at all
    assert sorted(read - documented) == [], "read in config/settings.py, not documented"
    assert sorted(documented - read) == [], "documented, not read by config/settings.py"


def test_settings_read_the_environment_only_through_env():
    source = (ROOT / "config" / "settings.py").read_text(encoding="utf-8")
    assert "os.environ" not in source
    assert "getenv" not in source


def _env(**values: str) -> Env:
    reader = Env()
    reader.ENVIRON = values
    return reader


def test_unset_and_empty_numbers_take_the_default():
    assert _env().int("A", 5) == 5
    assert _env(A="").int("A", 5) == 5
    assert _env(A=" 7 ").int("A", 5) == 7
    assert _env(A="").float("A", 0.5) == 0.5
    assert _env(A="").bool("A", True) is True
    assert _env(A="").str("A", "x") == ""  # a string may be empty on purpose


@pytest.mark.parametrize(
    ("read", "raw", "message"),
    [
        ("int", "ten", "A must be an integer, not 'ten'"),
        ("float", "1.5s", "A must be a number, not '1.5s'"),
        ("int", "1.5", "A must be an integer, not '1.5'"),
    ],
)
def test_a_bad_value_stops_start_up_naming_the_variable(read, raw, message):
    with pytest.raises(ImproperlyConfigured, match=re.escape(message)):
        getattr(_env(A=raw), read)("A", 1)


def test_pairs_and_lists():
    assert _env(A="echo=16 anthropic=4").pairs("A", "", int) == {"echo": 16, "anthropic": 4}
    assert _env().pairs("A", "echo=16", int) == {"echo": 16}
    with pytest.raises(ImproperlyConfigured, match="A must be name=value items"):
        _env(A="echo=many").pairs("A", "", int)
    assert _env(A=" a.example , b.example,,").list("A", []) == ["a.example", "b.example"]
    assert _env().list("A", ["x"]) == ["x"]


def test_switches():
    for raw in ("1", "true", "TRUE", "yes", "on"):
        assert _env(A=raw).bool("A", False) is True
    for raw in ("0", "false", "no", "off"):
        assert _env(A=raw).bool("A", True) is False


def test_a_value_starting_with_a_dollar_is_taken_as_it_is():
    # django-environ would read "$B" as "the value of B"; a secret may start with "$".
    assert _env(A="$B", B="other").str("A") == "$B"
