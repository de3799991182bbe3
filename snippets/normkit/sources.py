"""The identity of source files: what they run, not how they are written.

A measurement and a GPU test run record the fingerprints of the files they ran; a later file is the
same source when its fingerprint is. A Python file's fingerprint is its syntax tree without
docstrings (so comments, docstrings, line breaks and spacing do not count), a JSON file's its
parsed value; anything else counts byte for byte. The tree is written out by `_canonical` rather
than `ast.dump`, whose text changes between Python versions (3.12 added `type_params=[]` to every
function): the GPU machine and the machine that checks the record run different Pythons.

Tooling only: nothing here runs in a kernel, a benchmark or a test, and no measured source imports it.
"""

import ast
import hashlib
import json
import os
import subprocess
from pathlib import Path


def _without_docstring(body):
    first = body[0] if body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        return body[1:]
    return body


def _canonical(node):
    """A node as nested lists of its type and non-empty fields, docstrings dropped; no positions."""
    if isinstance(node, ast.AST):
        fields = []
        for name, value in ast.iter_fields(node):
            if name == "body" and isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                value = _without_docstring(value)
            if value is None or value == []:
                continue  # fields a newer Python adds empty (type_params) or an older one leaves out
            fields.append([name, _canonical(value)])
        return [type(node).__name__, fields]
    if isinstance(node, list):
        return [_canonical(item) for item in node]
    return repr(node)  # a constant: its value and type (1 and 1.0 and '1' differ)


def fingerprint(path):
    """A short hex digest of what a file runs (see the module's docstring)."""
    path = Path(path)
    data = path.read_bytes()
    if path.suffix == ".py":
        data = json.dumps(_canonical(ast.parse(data, filename=str(path)))).encode()
    elif path.suffix == ".json":
        data = json.dumps(json.loads(data), sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(data).hexdigest()[:16]


def fingerprints(files, root):
    """{file: fingerprint} for files named relative to root."""
    return {name: fingerprint(Path(root) / name) for name in sorted(files)}


def combined(prints):
    """One digest for a {file: fingerprint} map."""
    return hashlib.sha256(json.dumps(prints, sort_keys=True).encode()).hexdigest()


def tree_files(root):
    """Every Python and JSON file under root (a snippets/ folder), relative to it, caches left out."""
    root = Path(root)
    return sorted(p.relative_to(root).as_posix() for suffix in ("*.py", "*.json") for p in root.rglob(suffix)
                  if "__pycache__" not in p.parts and not any(part.startswith(".") for part in p.parts))


def changed(recorded, now):
    """The files whose fingerprint differs between two {file: fingerprint} maps, added and removed included."""
    return sorted(name for name in recorded.keys() | now.keys() if recorded.get(name) != now.get(name))


def git_commit(root):
    """The commit the sources came from; a copy without .git (the GPU machine's) passes NORMKERNELS_COMMIT."""
    if os.environ.get("NORMKERNELS_COMMIT"):
        return os.environ["NORMKERNELS_COMMIT"]
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
