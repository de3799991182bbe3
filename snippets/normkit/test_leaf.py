"""normkit is a leaf: the chapters and the benchmarks import it, it imports none of them."""

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
