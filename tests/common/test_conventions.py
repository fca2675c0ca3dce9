"""Code-health guards that read the source (docs/style.md rules 12 and 13, docs/architecture.md layering).

- Reads return typed objects: no selector, view, page builder or API module sets an attribute on
  an object it did not create as `self` (model instances with bolted-on facts were the habit).
- View functions stay thin: none is 40 lines or longer.
- The shared kernel depends on no app: `common` imports neither an app of ours nor `config`.
- A version's content is typed: in playground, whatever is named `content` (a parameter or a
  field) is a `VersionContent` once validated, or `Any` while it is raw input — never a
  `dict[str, Any]` or `Mapping[str, Any]` standing in for it.
- Limits are named once: API serializers take `max_length` from a named constant, not a number.
"""

import ast
from pathlib import Path

import pytest

from tests.common.tree import APPS, ROOT

READ_MODULES = ("selectors.py", "views.py", "pages.py", "api.py", "sharing/links.py")
MAX_VIEW_LINES = 40


def _read_modules() -> list[Path]:
    paths: list[Path] = []
    for app in APPS:
        paths += [ROOT / app / name for name in READ_MODULES if (ROOT / app / name).exists()]
        for package in ("api", "views", "pages"):  # a module split by concept
            paths += sorted((ROOT / app / package).glob("*.py"))
    return paths


def _attribute_stores(path: Path) -> list[str]:
    """`name.attr = ...` (any name but `self`) and `setattr(...)` in the module, as lines."""
    found = []
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        for target in targets:
            for part in ast.walk(target):
                if (
                    isinstance(part, ast.Attribute)
                    and isinstance(part.ctx, ast.Store)
                    and not (isinstance(part.value, ast.Name) and part.value.id == "self")
                ):
                    found.append(f"{path.name}:{target.lineno}: {ast.unparse(target)}")
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "setattr"
        ):
            found.append(f"{path.name}:{node.lineno}: setattr(...)")
    return found


def test_the_guard_sees_what_it_guards():
    modules = {p.relative_to(ROOT).as_posix() for p in _read_modules()}
    assert "playground/selectors.py" in modules
    assert "playground/api/prompts.py" in modules
    assert "reviews/views/reviews.py" in modules
    assert "reviews/pages/threads.py" in modules
    assert "playground/views/sharing.py" in modules


def test_the_guard_catches_a_bolted_on_attribute(tmp_path):
    sample = tmp_path / "selectors.py"
    sample.write_text("def f(prompt):\n    prompt.role = 'owner'\n    setattr(prompt, 'x', 1)\n")
    assert _attribute_stores(sample) == [
        "selectors.py:2: prompt.role",
        "selectors.py:3: setattr(...)",
    ]


@pytest.mark.parametrize("path", _read_modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_attributes_are_set_on_model_instances(path):
    assert _attribute_stores(path) == []


def _view_modules() -> list[Path]:
    """Every module of views: `views.py`, `views_*.py`, `*_views.py`, or in a `views/` package."""
    found = []
    for app in APPS:
        for path in sorted((ROOT / app).rglob("*.py")):
            name = path.stem
            if "migrations" in path.parts:
                continue
            if name.startswith("views") or name.endswith("_views") or path.parent.name == "views":
                found.append(path)
    return found


def test_the_view_guard_reads_every_module_of_views():
    modules = {p.relative_to(ROOT).as_posix() for p in _view_modules()}
    assert {
        "playground/views/prompts.py",
        "playground/runs/views.py",
        "reviews/views/threads.py",
        "evals/views.py",
    } <= modules


@pytest.mark.parametrize("path", _view_modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_view_functions_are_under_40_lines(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    long = {
        node.name: node.end_lineno - node.lineno + 1
        for node in tree.body
        if isinstance(node, ast.FunctionDef)
        and node.end_lineno is not None
        and node.end_lineno - node.lineno + 1 >= MAX_VIEW_LINES
    }
    assert long == {}


def test_the_shared_kernel_imports_no_app():
    forbidden = (*APPS, "config")
    imports = []
    for path in sorted((ROOT / "common").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                imports.append((path.name, node.module))
            elif isinstance(node, ast.Import):
                imports += [(path.name, alias.name) for alias in node.names]
    assert imports  # the walk found the kernel's imports at all
    assert [(f, m) for f, m in imports if m.split(".")[0] in forbidden] == []


def test_the_readme_names_no_file_outside_the_repository():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "beside this repository" not in readme
    for name in ("DESIGN", "STYLE"):  # the design files outside the repository
        assert f"{name}.md" not in readme
    for doc in ("docs/architecture.md", "docs/api.md", "docs/operations.md"):
        assert f"]({doc})" in readme
        assert (ROOT / doc).is_file()


# `VersionContent | None`: a page that does not load a long version whole (playground.pages);
# `object`: the client's JSON, before the service has validated it into a VersionContent.
CONTENT_ANNOTATIONS = {"VersionContent", "VersionContent | None", "object"}


def _content_annotations(path: Path) -> list[str]:
    """Annotations of parameters and annotated names called `content`, as `file:line: type`
    (a TypedDict's own `content` key, a message's text, is not a version's content)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typed_dict_keys = {
        id(item)
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef)
        and any(isinstance(base, ast.Name) and base.id == "TypedDict" for base in node.bases)
        for item in node.body
    }
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.arg) and node.arg == "content" and node.annotation is not None:
            found.append((node.lineno, node.annotation))
        elif (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and node.target.id == "content"
            and id(node) not in typed_dict_keys
        ):
            found.append((node.lineno, node.annotation))
    return [
        f"{path.name}:{line}: {ast.unparse(annotation)}"
        for line, annotation in sorted(found, key=lambda f: f[0])
    ]


def test_the_content_guard_sees_the_typed_content():
    typed = _content_annotations(ROOT / "playground" / "exports" / "api_calls.py")
    assert typed
    assert all(entry.endswith(": VersionContent") for entry in typed)


def test_the_content_guard_catches_a_dict(tmp_path):
    sample = tmp_path / "diffing.py"
    sample.write_text(
        "class Message(TypedDict):\n    content: str\n\n\n"
        "def f(*, content: dict[str, Any]) -> None:\n    content: Mapping = {}\n"
    )
    assert _content_annotations(sample) == [
        "diffing.py:5: dict[str, Any]",
        "diffing.py:6: Mapping",
    ]


@pytest.mark.parametrize(
    "path",
    sorted((ROOT / "playground").rglob("*.py")),
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_prompt_content_is_typed(path):
    loose = [
        entry
        for entry in _content_annotations(path)
        if entry.rsplit(": ", 1)[1] not in CONTENT_ANNOTATIONS
    ]
    assert loose == []


def _literal_max_lengths(path: Path) -> list[str]:
    """`max_length=<number>` keyword arguments in the module, as `file:line: value`."""
    return [
        f"{path.name}:{node.value.lineno}: {ast.unparse(node.value)}"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.keyword)
        and node.arg == "max_length"
        and isinstance(node.value, ast.Constant)
    ]


def _api_modules() -> list[Path]:
    paths: list[Path] = []
    for app in APPS:
        paths += [ROOT / app / "api.py"] if (ROOT / app / "api.py").exists() else []
        paths += sorted((ROOT / app).rglob("api/*.py")) + sorted((ROOT / app).rglob("*/api.py"))
    return paths


def test_the_limit_guard_catches_a_number(tmp_path):
    sample = tmp_path / "api.py"
    sample.write_text("title = CharField(max_length=200)\nbody = CharField(max_length=LIMIT)\n")
    assert _literal_max_lengths(sample) == ["api.py:1: 200"]


@pytest.mark.parametrize("path", _api_modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_api_limits_are_named_constants(path):
    assert _literal_max_lengths(path) == []
