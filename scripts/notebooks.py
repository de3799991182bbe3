"""Build the notebooks from their sources: notebooks/<lang>/<name>.md -> docs/<lang>/notebooks/<name>.ipynb.

    python scripts/notebooks.py build             # after editing a source; unchanged code cells keep their outputs
    python scripts/notebooks.py build --execute   # run the notebooks and record new outputs (the GPU build does)
    python scripts/notebooks.py build --execute --language vi   # one language's notebooks only (repeatable)
    python scripts/notebooks.py check             # fail if a .ipynb disagrees with its source

A source is a page in jupytext's Markdown format: prose, and ```python blocks that become code cells
(two blank lines split two markdown cells). Code cells import from snippets/ and are the same in
every language (code_problems), but each language's notebook runs on its own: its kernel gets
NORMKERNELS_LANGUAGE=<lang>, and what the cells print goes through normkit.words.reader(), so the
numbers and the helpers' words of docs/vi/notebooks/ are Vietnamese ("11,43 µs"), those of
docs/zh/notebooks/ Chinese. Without --execute, each language keeps the outputs of its own committed
run (committed_run): a code cell whose source changed has none until the next run.
"""

import argparse
import os
import sys
from pathlib import Path

import jupytext
import nbformat
from jupytext.combine import combine_inputs_with_outputs
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ROOT / "notebooks"
LANGUAGES = ("en", "zh", "vi")
LANGUAGE_VARIABLE = "NORMKERNELS_LANGUAGE"  # the kernel's language: normkit.words.reader() reads it
KERNELSPEC = {"display_name": "Python 3", "language": "python", "name": "python3"}
# what brings a .ipynb in step with its source, said after every problem found
FIX = ("run `.venv/bin/python scripts/notebooks.py build` (it keeps the recorded outputs of unchanged cells; "
       "a changed code cell gets new ones from `build --execute` on the GPU)")


def names():
    return sorted(path.stem for path in (SOURCES / "en").glob("*.md"))


def source(language, name):
    return jupytext.read(SOURCES / language / f"{name}.md")


def notebook_path(language, name):
    return ROOT / "docs" / language / "notebooks" / f"{name}.ipynb"


def execute(language, name, timeout=1800):
    """One language's notebook run by a Jupyter kernel through nbclient, with NORMKERNELS_LANGUAGE set
    to that language (normkit.words.reader() reads it); a failing cell raises."""
    if language not in LANGUAGES:
        raise ValueError(f"unknown language '{language}'; the notebooks are in {', '.join(LANGUAGES)}")
    notebook = source(language, name)
    notebook.metadata = {"kernelspec": KERNELSPEC}
    snippets_first = os.pathsep.join(filter(None, [str(ROOT / "snippets"), os.environ.get("PYTHONPATH")]))
    client = NotebookClient(notebook, timeout=timeout, kernel_name="python3", allow_errors=False,
                            record_timing=False, coalesce_streams=True,
                            resources={"metadata": {"path": str(notebook_path(language, name).parent)}})
    client.execute(env={**os.environ, "PYTHONPATH": snippets_first, LANGUAGE_VARIABLE: language})
    return notebook


def with_outputs(language, name, run):
    """One language's notebook: its source, with the outputs of the run's matching code cells."""
    notebook = combine_inputs_with_outputs(source(language, name), run, fmt="md")
    ran = {cell.id: cell.source for cell in run.cells}
    for index, cell in enumerate(notebook.cells):
        # jupytext also hands a cell's old outputs to the edited cell at its place (combined cells
        # keep the id of the run's cell): a changed code cell gets none until it runs again
        if cell.cell_type == "code" and ran.get(cell.id) != cell.source:
            cell.outputs, cell.execution_count = [], None
        cell.id = f"{name}-{index:02d}"  # stable ids, so that a rebuild changes only what changed
    return notebook


def committed_run(language, name):
    """The outputs a language's notebook has now: its own committed .ipynb (none before its first build)."""
    path = notebook_path(language, name)
    return nbformat.read(path, as_version=4) if path.is_file() else nbformat.v4.new_notebook()


def build(execute_cells=False, only=None, languages=None):
    """Write each language's .ipynb (all of them, or those of `languages`); the outputs come from a new
    run of that language's notebook, or from its own committed run."""
    unknown = sorted(set(languages or ()) - set(LANGUAGES))
    if unknown:
        raise ValueError(f"unknown languages {unknown}; the notebooks are in {', '.join(LANGUAGES)}")
    for name in only or names():
        for language in languages or LANGUAGES:
            print(f"{'executing' if execute_cells else 'building'} {language}/{name}", flush=True)
            run = execute(language, name) if execute_cells else committed_run(language, name)
            notebook_path(language, name).parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(with_outputs(language, name, run), notebook_path(language, name))


def differences(language, name):
    """Where the committed .ipynb of one language disagrees with its source, cell by cell."""
    where = f"docs/{language}/notebooks/{name}.ipynb"
    if not notebook_path(language, name).is_file():
        return [f"{where} is missing: notebooks/{language}/{name}.md has never been built"]
    want = [(cell.cell_type, cell.source) for cell in source(language, name).cells]
    have = [(cell.cell_type, cell.source) for cell in nbformat.read(notebook_path(language, name), 4).cells]
    problems = [f"{where} cell {index} differs from notebooks/{language}/{name}.md"
                for index, (a, b) in enumerate(zip(have, want)) if a != b]
    if len(have) != len(want):
        problems.append(f"{where} has {len(have)} cells, notebooks/{language}/{name}.md {len(want)}")
    return problems


def code_problems(name):
    """Code cells that differ from the English ones, or define a kernel (notebooks import them)."""
    def code(language):
        return [(index, cell.source) for index, cell in enumerate(source(language, name).cells)
                if cell.cell_type == "code"]

    english, problems = [text for _, text in code("en")], []
    for language in LANGUAGES:
        where = f"notebooks/{language}/{name}.md"
        problems += [f"{where} cell {index} (code) differs from English"
                     for (index, text), theirs in zip(code(language), english) if text != theirs]
        if len(code(language)) != len(english):
            problems.append(f"{where} has {len(code(language))} code cells, English {len(english)}")
        problems += [f"{where} cell {index} defines a kernel; import it from snippets/"
                     for index, text in code(language) if "@triton.jit" in text]
    return problems


def check():
    built = {(lang, path.stem) for lang in LANGUAGES for path in (ROOT / "docs" / lang / "notebooks").glob("*.ipynb")}
    problems = [f"docs/{lang}/notebooks/{name}.ipynb has no source" for lang, name in sorted(built)
                if not (SOURCES / lang / f"{name}.md").is_file()]
    for name in names():
        problems += code_problems(name) + [problem for lang in LANGUAGES for problem in differences(lang, name)]
    return problems


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=("build", "check"))
    parser.add_argument("--execute", action="store_true", help="run the notebooks (build only)")
    parser.add_argument("--only", action="append", choices=names(), help="this notebook only (repeatable)")
    parser.add_argument("--language", action="append", choices=LANGUAGES,
                        help="this language's notebooks only (repeatable; build only)")
    args = parser.parse_args(argv)
    if args.command == "build":
        build(args.execute, args.only, args.language)
    problems = check()
    print("\n".join(problems + [FIX]) if problems else "every notebook matches its source")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
