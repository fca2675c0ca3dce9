"""Code-health guards that read the source (STYLE.md rules 12 and 12b, DESIGN.md layering).

- Reads return typed objects: no selector, view, page builder or API module sets an attribute on
  an object it did not create as `self` (model instances with bolted-on facts were the habit).
- View functions stay thin: none is 40 lines or longer.
- The shared kernel depends on no app: `common` imports neither an app of ours nor `config`.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
APPS = ("accounts", "playground", "questionbank", "reviews", "textstore")
READ_MODULES = ("selectors.py", "views.py", "pages.py", "api.py", "shared.py")
MAX_VIEW_LINES = 40


def _read_modules() -> list[Path]:
    paths: list[Path] = []
    for app in APPS:
        paths += [ROOT / app / name for name in READ_MODULES if (ROOT / app / name).exists()]
        paths += sorted((ROOT / app / "api").glob("*.py"))
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
    assert "reviews/views.py" in modules
    assert "reviews/pages.py" in modules


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


@pytest.mark.parametrize("app", ("accounts", "playground", "questionbank", "reviews"))
def test_view_functions_are_under_40_lines(app):
    tree = ast.parse((ROOT / app / "views.py").read_text(encoding="utf-8"))
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
    for name in ("DESIGN.md", "STYLE.md"):
        assert name not in readme
    for doc in ("docs/architecture.md", "docs/api.md", "docs/operations.md"):
        assert f"]({doc})" in readme
        assert (ROOT / doc).is_file()
