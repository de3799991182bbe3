"""The notebooks: built from their sources in notebooks/<lang>/<name>.md, and runnable on a CPU.

Each docs/<lang>/notebooks/<name>.ipynb must hold exactly the cells of its source (outputs aside: they
come from the GPU build, which runs each language's notebook on its own, with NORMKERNELS_LANGUAGE
set, so that its numbers are written as that language writes them), every language must share the
same code cells, which import the kernels from snippets/ and never define one, and every notebook
must execute with a real Jupyter kernel under Triton's interpreter.
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


# a timing figure as bench.figure_text prints it, in another style than the language's
FOREIGN_FIGURE = {"en": re.compile(r"\d,\d+ (?:µs|GB/s) \("), "zh": re.compile(r"\d,\d+ (?:µs|GB/s) \("),
                  "vi": re.compile(r"\d\.\d+ (?:µs|GB/s) \(")}


def output_text(cell):
    return "".join(output.get("text", "") for output in cell.outputs)


@pytest.mark.parametrize("name", NAMES)
def test_committed_notebooks_are_executed_each_in_its_language_on_one_gpu(name):
    """Every code cell carries outputs, none an error; each language shows its own run, with its
    numbers, and every language's run names the same device (one GPU build ran them all)."""
    devices = {}
    for language in LANGUAGES:
        for index, cell in code_cells(language, name):
            where = f"docs/{language}/notebooks/{name}.ipynb cell {index}"
            assert cell.outputs, f"{where}: code without output; {BUILD}"
            assert all(o.output_type != "error" for o in cell.outputs), f"{where} failed"
            foreign = FOREIGN_FIGURE[language].search(output_text(cell))
            assert not foreign, f"{where} prints {foreign[0]!r}: not this language's run; {BUILD}"
        devices[language] = output_text(code_cells(language, name)[1][1])  # the cell after the set-up
    assert len(set(devices.values())) == 1, f"{name}: the languages' runs name different devices: {devices}"


@pytest.mark.parametrize("name", NAMES)
def test_notebook_runs_on_the_cpu_interpreter(name, monkeypatch):
    """nbclient runs the notebook's English source with a real ipykernel, errors not allowed.

    English runs every notebook: the test above proves that every language has the same code cells,
    so running one language runs the code of all three (and the machine running the tests has two
    cores). The next test runs one notebook in Vietnamese, for what the language changes.
    """
    monkeypatch.setenv("TRITON_INTERPRET", "1")  # the kernel inherits it, even on a machine with a GPU
    run = notebooks.execute("en", name)
    code = [cell for cell in run.cells if cell.cell_type == "code"]
    assert code and all(cell.outputs for cell in code), f"{name}: a code cell produced no output"
    # the set-up cell first (nothing to set up here), then the cell that names the device
    assert "nothing to set up" in "".join(code[0].outputs[0].text)
    assert "Triton's interpreter" in "".join(code[1].outputs[0].text)


def test_a_language_runs_its_own_source_with_its_numbers(monkeypatch):
    """The vi notebook runs with NORMKERNELS_LANGUAGE=vi: decimal commas, the helpers' Vietnamese words."""
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    monkeypatch.setenv(notebooks.LANGUAGE_VARIABLE, "en")  # the kernel's language is the notebook's, not the caller's
    run = notebooks.execute("vi", "rmsnorm-exercise")
    assert run.cells[0].source == notebooks.source("vi", "rmsnorm-exercise").cells[0].source  # the vi prose
    printed = "".join(output_text(cell) for cell in run.cells if cell.cell_type == "code")
    assert "kernel y = 0,9999995" in printed and "BẮT ĐƯỢC LỖI" in printed
    assert "N = 257, BLOCK = 512" in printed  # sizes stay as code writes them


def test_build_writes_only_the_languages_asked_for_and_refuses_others(monkeypatch, tmp_path):
    written = []
    monkeypatch.setattr(notebooks, "notebook_path", lambda language, name: tmp_path / language / f"{name}.ipynb")
    monkeypatch.setattr(notebooks.nbformat, "write", lambda notebook, path: written.append(path.relative_to(tmp_path)))
    notebooks.build(only=["rmsnorm"], languages=["vi"])
    assert [str(path) for path in written] == ["vi/rmsnorm.ipynb"]
    with pytest.raises(ValueError, match="fr"):
        notebooks.build(languages=["fr"])
    with pytest.raises(ValueError, match="fr"):
        notebooks.execute("fr", "rmsnorm")


def test_the_kernels_language_variable_is_the_one_normkit_words_reads():
    from normkit import words

    assert notebooks.LANGUAGE_VARIABLE == words.LANGUAGE_VARIABLE
    assert notebooks.LANGUAGES == words.LANGUAGES


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
