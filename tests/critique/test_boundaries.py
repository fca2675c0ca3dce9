"""The playground and the review desk never import the critique bridge (docs/critique.md)."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_playground_reviews_and_evals_do_not_import_critique():
    offenders = [
        str(path.relative_to(ROOT))
        for app in ("playground", "reviews", "evals")
        for path in (ROOT / app).rglob("*.py")
        if any(name == "critique" or name.startswith("critique.") for name in _imports(path))
    ]
    assert offenders == []
    for template in ("reviews",):
        for path in (ROOT / "templates" / template).rglob("*.html"):
            assert "critique" not in path.read_text(encoding="utf-8"), path


def test_critique_selectors_never_reach_a_service():
    """A selector reads; the starter's version, created on first use, is the service
    `starter_version_ensure` that callers call first (issue #35)."""
    tree = ast.parse((ROOT / "critique" / "selectors.py").read_text(encoding="utf-8"))
    services = [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        and (node.module or "").split(".")[-1] == "services"
        and (node.level > 0 or (node.module or "").startswith("critique"))
    ]
    assert services == []
