"""The notebooks: built from their sources in notebooks/<lang>/<name>.md, and runnable on a CPU.

Each docs/<lang>/notebooks/<name>.ipynb must hold exactly the cells of its source (outputs aside: they
come from the GPU build), every language must share the same code cells, which import the kernels
from snippets/ and never define one, and every notebook must execute with a real Jupyter kernel
under Triton's interpreter.
"""

import nbformat
import pytest

from sitecheck import DOCS, LANGUAGES

import notebooks  # scripts/notebooks.py (sitecheck puts scripts/ on sys.path)

NAMES = notebooks.names()
BUILD = "run `python scripts/notebooks.py build` (add --execute on a GPU when code changed)"


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
    assert "Triton's interpreter" in "".join(code[0].outputs[0].text)
