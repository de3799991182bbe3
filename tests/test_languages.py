"""Every page says the same thing in every language: the same structure, listings, figures and math."""

import json
import re

import pytest

from sitecheck import DOCS, LANGUAGES, markdown_pages, pages, snippet_includes

FENCE = re.compile(r"^(\s*)(`{3,}|~{3,}).*?^\1\2[ \t]*$", re.MULTILINE | re.DOTALL)
FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n", re.DOTALL)


def without_code(markdown):
    return FENCE.sub("", FRONT_MATTER.sub("", markdown))


def structure(markdown):
    """What must match across languages, in order where order matters."""
    prose = without_code(markdown)
    return {
        "headings (levels in order)": [len(h) for h in re.findall(r"^(#{1,6}) ", prose, re.MULTILINE)],
        "snippet includes (in order)": snippet_includes(markdown),
        "figures (in order)": re.findall(r"!\[[^\]]*\]\(([^)\s]+)", prose),
        "display math blocks": len(re.findall(r"^\s*\$\$", prose, re.MULTILINE)) // 2,
        "inline math": len(re.findall(r"(?<![$\\])\$(?!\$)[^$\n]+?(?<!\\)\$", prose)),
        "tables": len(re.findall(r"^\s*\|?\s*:?-{3,}", prose, re.MULTILINE)),
        "admonitions": len(re.findall(r"^\s*(?:!!!|\?\?\?\+?) ", prose, re.MULTILINE)),
        "content tabs": len(re.findall(r"^\s*=== ", prose, re.MULTILINE)),
        "code blocks": len(FENCE.findall(markdown)),
        "measured quotes (in order)": re.findall(r"\{\{\s*([a-z0-9_.]+)\s*\}\}", markdown),
    }


ENGLISH = {page: markdown for language, page, markdown in markdown_pages() if language == "en"}
TRANSLATIONS = [(language, page) for language in LANGUAGES if language != "en" for page in ENGLISH]


@pytest.mark.parametrize("language,page", TRANSLATIONS)
def test_translation_has_the_structure_of_the_english_page(language, page):
    path = DOCS / language / page
    assert path.is_file(), f"{page}: missing in {language}"
    expected = structure(ENGLISH[page])
    actual = structure(path.read_text(encoding="utf-8"))
    for what in expected:
        assert actual[what] == expected[what], (
            f"{language}/{page} drifted from en/{page} in its {what}: {actual[what]} != {expected[what]}"
        )


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
