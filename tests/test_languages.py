"""Every notebook says the same thing in every language: the same code, its prose translated.

The pages' structure (headings, listings, figures, math, tables, admonitions, quotes, in order) is
compared by scripts/check.py (make check), which tests/test_check.py runs.
"""

import json

import pytest

from sitecheck import DOCS, LANGUAGES, pages

def _notebook_cells(language, page):
    notebook = json.loads((DOCS / language / page).read_text(encoding="utf-8"))
    return notebook["cells"]


NOTEBOOKS = [page for page in pages("en") if page.endswith(".ipynb")]


@pytest.mark.parametrize("language", [lang for lang in LANGUAGES if lang != "en"])
@pytest.mark.parametrize("page", NOTEBOOKS)
def test_notebooks_share_their_code_and_translate_their_prose(language, page):
    english = _notebook_cells("en", page)
    translated = _notebook_cells(language, page)
    assert [c["cell_type"] for c in translated] == [c["cell_type"] for c in english], (
        f"{language}/{page}: its cells are not those of en/{page}"
    )
    for index, (en_cell, cell) in enumerate(zip(english, translated)):
        if cell["cell_type"] == "code":
            assert cell["source"] == en_cell["source"], f"{language}/{page}: code cell {index} differs from English"
        else:
            assert cell["source"] != en_cell["source"], f"{language}/{page}: markdown cell {index} is not translated"
