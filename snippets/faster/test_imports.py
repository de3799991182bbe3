"""The faster package's modules import one another in one direction: no circle. The measurement
(benchmark) knows nothing of the report, the report reads the results it wrote, and the tuner builds
on the benchmark's providers (issue 39: benchmark, report and tune once imported one another)."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent


def faster_imports(path):
    """The faster modules a file imports anywhere in it (a function's lazy import too)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module == "faster":
            out |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("faster."):
            out.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            out |= {a.name.split(".")[1] for a in node.names if a.name.startswith("faster.")}
    return out


def test_the_faster_modules_import_one_another_without_a_circle():
    modules = {p.stem: p for p in PACKAGE.glob("*.py") if not p.stem.startswith("test_")}
    graph = {name: faster_imports(path) & modules.keys() for name, path in modules.items()}
    assert graph["report"] and graph["tune"]  # the reading finds the imports it checks
    done, active = set(), []

    def visit(name):
        assert name not in active, f"faster modules import one another in a circle: {' -> '.join(active + [name])}"
        if name not in done:
            active.append(name)
            for other in sorted(graph[name]):
                visit(other)
            active.pop()
            done.add(name)

    for name in sorted(graph):
        visit(name)
