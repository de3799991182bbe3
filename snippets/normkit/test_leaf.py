"""normkit is a leaf: the chapters and the benchmarks import it, it imports none of them; and the arrows
between snippet packages run one way (the pages' data <- faster <- the chapters <- normkit)."""

import ast
import json
import subprocess
import sys
from pathlib import Path

SNIPPETS = Path(__file__).resolve().parent.parent
KIT = Path(__file__).resolve().parent


def test_normkit_imports_no_other_snippet_package():
    others = sorted(p.parent.name for p in SNIPPETS.glob("*/__init__.py") if p.parent != KIT)
    modules = sorted(f"normkit.{p.stem}" for p in KIT.glob("*.py") if p.stem != "__init__")
    assert {"layernorm", "rmsnorm", "faster"} <= set(others)  # the discovery finds the packages
    # a fresh process: what this one has imported says nothing about normkit
    script = (
        f"import importlib, json, sys; [importlib.import_module(m) for m in {modules!r}]; "
        f"print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in {others!r})))"
    )
    run = subprocess.run([sys.executable, "-c", script], cwd=SNIPPETS, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    imported = json.loads(run.stdout.strip().splitlines()[-1])
    assert imported == [], f"importing {modules} imported {imported}: normkit must not depend on a chapter"


def _imported_packages(package, packages):
    """The other snippet packages that any module of package imports (read from the source, not run)."""
    found = set()
    for path in (SNIPPETS / package).glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level else [])
            found |= {n.split(".")[0] for n in names} & packages
    return found - {package}


def test_the_arrows_between_packages_run_one_way():
    packages = {p.parent.name for p in SNIPPETS.glob("*/__init__.py")}
    graph = {package: _imported_packages(package, packages) for package in packages}
    assert graph["normkit"] == set(), f"normkit imports {graph['normkit']}"
    # peel off packages that import nothing left; what remains is a cycle
    remaining = dict(graph)
    while remaining:
        leaves = {p for p, deps in remaining.items() if not deps & remaining.keys()}
        assert leaves, f"packages that import each other: { {p: sorted(d) for p, d in remaining.items()} }"
        remaining = {p: d for p, d in remaining.items() if p not in leaves}
