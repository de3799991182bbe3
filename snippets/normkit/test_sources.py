"""A source's identity is what it runs: comments, docstrings and formatting do not change it, code does."""

import glob
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from normkit import sources

KERNEL = '''
"""A module docstring."""

import triton


@triton.jit
def _scale(x_ptr, n, BLOCK: tl.constexpr):
    """A docstring."""
    offs = tl.arange(0, BLOCK)  # a comment
    tl.store(x_ptr + offs, 2 * tl.load(x_ptr + offs), mask=offs < n)
'''

# the same code written otherwise: other docstrings and comments, other line breaks and spacing
REWRITTEN = '''
# a comment before everything
import triton


@triton.jit
def _scale(x_ptr,
           n,
           BLOCK: tl.constexpr):
    """Another docstring, on
    two lines."""
    offs = tl.arange(0,BLOCK)
    # a comment of its own line
    tl.store(x_ptr + offs,
             2 * tl.load(x_ptr + offs),
             mask=offs < n)
'''


def _print(tmp_path, text, name="kernel.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return sources.fingerprint(path)


def test_comments_docstrings_and_formatting_do_not_count(tmp_path):
    assert _print(tmp_path, KERNEL) == _print(tmp_path, REWRITTEN)


@pytest.mark.parametrize("edit", [("2 * tl.load", "3 * tl.load"), ("offs < n", "offs <= n"),
                                  ("BLOCK: tl.constexpr", "BLOCK"), ("import triton", "import triton as t")])
def test_a_change_to_the_code_counts(tmp_path, edit):
    assert _print(tmp_path, KERNEL) != _print(tmp_path, KERNEL.replace(*edit))


def test_a_string_that_is_not_a_docstring_counts(tmp_path):
    moved = KERNEL.replace('    """A docstring."""\n    offs', '    offs').replace("# a comment", "")
    moved = moved.replace("    tl.store", '    "not a docstring: a statement after the first"\n    tl.store')
    assert _print(tmp_path, KERNEL) != _print(tmp_path, moved)


def test_a_json_table_counts_by_value(tmp_path):
    a = _print(tmp_path, '{"b": [1, 2], "a": 1.5}', "t.json")
    assert a == _print(tmp_path, '{\n  "a": 1.5,\n  "b": [\n    1,\n    2\n  ]\n}\n', "t.json")
    assert a != _print(tmp_path, '{"b": [1, 2], "a": 1.25}', "t.json")


def test_changed_names_the_files_edited_added_and_removed():
    assert sources.changed({"a.py": "1", "b.py": "2", "c.py": "3"}, {"a.py": "1", "b.py": "9", "d.py": "4"}) == [
        "b.py", "c.py", "d.py"]


def _other_pythons():
    """Other CPython 3.11+ interpreters on this machine (pyenv's, where there are some)."""
    found = glob.glob(str(Path.home() / ".pyenv/versions/3.1[1-9]*/bin/python3"))
    return [p for p in found if Path(p).resolve() != Path(sys.executable).resolve()]


def test_every_python_from_3_11_reads_the_same_fingerprints():
    """The GPU machine records fingerprints with its Python, the checking machine reads them with its own."""
    others = _other_pythons()
    if not others:
        pytest.skip("no other Python 3.11+ on this machine to compare with")
    kit = Path(sources.__file__).parent
    snippets = kit.parent
    script = (f"import sys, json; sys.path.insert(0, {str(kit)!r}); import sources; "
              f"print(json.dumps(sources.fingerprints(sources.tree_files({str(snippets)!r}), {str(snippets)!r})))")
    here = sources.fingerprints(sources.tree_files(snippets), snippets)
    for python in others:
        run = subprocess.run([python, "-c", script], capture_output=True, text=True, check=True)
        assert json.loads(run.stdout) == here, f"{python} fingerprints the snippets otherwise"
