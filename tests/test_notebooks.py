"""The notebooks: built from their sources in notebooks/<lang>/<name>.md, and runnable on a CPU.

Each docs/<lang>/notebooks/<name>.ipynb must hold exactly the cells of its source (outputs aside: they
come from the GPU build), every language must share the same code cells, which import the kernels
from snippets/ and never define one, and every notebook must execute with a real Jupyter kernel
under Triton's interpreter.
"""

import json
import os
import re
import subprocess
import sys

import nbformat
import pytest

from sitecheck import DOCS, LANGUAGES

import notebooks  # scripts/notebooks.py (sitecheck puts scripts/ on sys.path)

NAMES = notebooks.names()
BUILD = notebooks.FIX


def code_cells(language, name):
    """(index in the notebook, cell) of each code cell of a committed notebook."""
    cells = nbformat.read(notebooks.notebook_path(language, name), 4).cells
    return [(index, cell) for index, cell in enumerate(cells) if cell.cell_type == "code"]


def test_every_notebook_has_a_source_in_every_language():
    assert NAMES, "no notebook sources under notebooks/en/"
    for language in LANGUAGES:
        sources = sorted(path.stem for path in (notebooks.SOURCES / language).glob("*.md"))
        built = sorted(path.stem for path in (DOCS / language / "notebooks").glob("*.ipynb"))
        assert sources == NAMES, f"notebooks/{language}/ has {sources}, notebooks/en/ has {NAMES}"
        assert built == NAMES, f"docs/{language}/notebooks/ holds {built}, the sources are {NAMES}; {BUILD}"


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("name", NAMES)
def test_committed_notebook_matches_its_source(name, language):
    problems = notebooks.differences(language, name)
    assert not problems, "\n".join(problems) + f"\n{BUILD}"


@pytest.mark.parametrize("name", NAMES)
def test_code_cells_are_the_same_in_every_language_and_define_no_kernel(name):
    problems = notebooks.code_problems(name)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("name", NAMES)
def test_committed_notebooks_are_executed_and_share_one_run(name):
    """Every code cell carries outputs, none an error, and every language shows the same run."""
    runs = {}
    for language in LANGUAGES:
        for index, cell in code_cells(language, name):
            where = f"docs/{language}/notebooks/{name}.ipynb cell {index}"
            assert cell.outputs, f"{where}: code without output; {BUILD}"
            assert all(o.output_type != "error" for o in cell.outputs), f"{where} failed"
        runs[language] = [cell.outputs for _, cell in code_cells(language, name)]
    assert all(run == runs["en"] for run in runs.values()), f"{name}: the languages show different outputs"


@pytest.mark.parametrize("name", NAMES)
def test_notebook_runs_on_the_cpu_interpreter(name, monkeypatch):
    """nbclient runs the notebook's English source with a real ipykernel, errors not allowed.

    Only English runs: the test above proves that every language has the same code cells, so running
    one language runs the code of all three (and the machine running the tests has two cores).
    """
    monkeypatch.setenv("TRITON_INTERPRET", "1")  # the kernel inherits it, even on a machine with a GPU
    run = notebooks.execute(name)
    code = [cell for cell in run.cells if cell.cell_type == "code"]
    assert code and all(cell.outputs for cell in code), f"{name}: a code cell produced no output"
    # the set-up cell first (nothing to set up here), then the cell that names the device
    assert "nothing to set up" in "".join(code[0].outputs[0].text)
    assert "Triton's interpreter" in "".join(code[1].outputs[0].text)


# --- The first cell: a reader's set-up on Colab, and nothing anywhere else.

SETUP_RUN = """
import json, os, sys
before = list(sys.path)
exec(compile(open(sys.argv[1]).read(), "setup cell", "exec"), {"__name__": "__main__"})
print(json.dumps({"added": [p for p in sys.path if p not in before], "files": sorted(os.listdir("."))}))
"""
# Colab's own module, and a git that records how it is called and leaves a clone-shaped folder
FAKE_COLAB = "import sys, types; sys.modules['google.colab'] = types.ModuleType('google.colab')\n"
FAKE_GIT = """#!/bin/sh
echo "$@" > "$GIT_LOG"
for target; do :; done
mkdir -p "$target/snippets/normkit"
"""


def setup_cell(name):
    cell = next(c for c in notebooks.source("en", name).cells if c.cell_type == "code")
    assert "google.colab" in cell.source, f"notebooks/en/{name}.md: the first code cell is not the set-up"
    return cell.source


def run_setup(source, workdir, env):
    (workdir / "cell.py").write_text(source, encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", SETUP_RUN, "cell.py"], cwd=workdir, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.parametrize("name", NAMES)
def test_setup_cell_does_nothing_off_colab(name, tmp_path):
    seen = run_setup(setup_cell(name), tmp_path, {**os.environ, "PATH": str(tmp_path / "no-git")})
    assert seen == {"added": [], "files": ["cell.py"]}, f"{name}: the set-up changed a machine that is not Colab"


@pytest.mark.parametrize("name", NAMES)
def test_setup_cell_on_colab_clones_the_repository_and_imports_from_it(name, tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "git").write_text(FAKE_GIT)
    (bin_dir / "git").chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "GIT_LOG": str(tmp_path / "git.log")}
    source = FAKE_COLAB + setup_cell(name)
    seen = run_setup(source, tmp_path, env)
    repo_url = re.search(r"^repo_url: (\S+)", (notebooks.ROOT / "mkdocs.yml").read_text(encoding="utf-8"), re.M)[1]
    assert (tmp_path / "git.log").read_text().split() == ["clone", "--depth", "1", repo_url, "normkernels"]
    assert seen["added"] == [str((tmp_path / "normkernels" / "snippets").resolve())]
    # a second run (the reader runs the cell again) clones nothing
    (tmp_path / "git.log").unlink()
    run_setup(source, tmp_path, env)
    assert not (tmp_path / "git.log").exists()
