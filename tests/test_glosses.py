"""English glosses: a Chinese or Vietnamese page gives a term's English name in parentheses once, at the
term's first use in its prose (the authoring guide's rule), never again further down the page.

A gloss is the English term of a glossary entry (or one of its forms, or their plurals), alone in
parentheses right after a use of that entry's term in the page's language: 原子锁（atomic lock）,
khóa nguyên tử (atomic lock). Uses and prose are found as the glossary links find them
(hooks/glossary.py: no code, headings, math, links or quotes), so "the first use" is the use that
the build links to the glossary. Checked on the pages and on the notebooks' sources.
"""

import re

import pytest

from sitecheck import DOCS, LANGUAGES, ROOT, reader_texts
from test_glossary import glossary, sources

GLOSS = re.compile(r"\s*[(（]\s*([^()（）\n]+?)\s*[)）]")
FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n", re.DOTALL)  # MkDocs hands the hooks a page without it


def english_names():
    """{id: the English forms of its term, plurals included, casefolded}."""
    names = {}
    for key, entry in glossary.terms().items():
        forms = entry["en"].get("forms", [entry["en"]["term"]]) + [entry["en"]["term"]]
        names[key] = {plural.casefold() for form in forms for plural in glossary._english_plurals(form)}
    return names


def glosses(markdown, language, names):
    """[(key, form, is_first_use)] for every English gloss of a term in the page's prose, in order. A term
    with several forms (获取 / 释放: acquire / release) may gloss each form, at that form's first use."""
    markdown = FRONT_MATTER.sub("", markdown)
    seen, found = set(), []
    for match, key in glossary.term_uses(markdown, language):
        form = match.group(0).casefold()
        gloss = GLOSS.match(markdown, match.end())
        if gloss and gloss.group(1).casefold() in names[key]:
            found.append((key, form, (key, form) not in seen))
        seen.add((key, form))
    return found


def gloss_problems(markdown, language, names):
    problems, counted = [], set()
    for key, form, first in glosses(markdown, language, names):
        english = glossary.terms()[key]["en"]["term"]
        if (key, form) in counted:
            problems.append(f"'{english}' glossed more than once")
        elif not first:
            problems.append(f"'{english}' glossed after its first use")
        counted.add((key, form))
    return problems


def pages_and_notebooks(language):
    for name, text in reader_texts(language):
        if name.endswith(".md") and (name.startswith(f"docs/{language}/") or name.startswith("notebooks/")):
            yield name, text


@pytest.mark.parametrize("language", [language for language in LANGUAGES if language != "en"])
def test_an_english_gloss_only_at_the_first_use_of_a_term(language):
    names = english_names()
    found = [f"{name}: {problem}" for name, text in pages_and_notebooks(language)
             for problem in gloss_problems(text, language, names)]
    assert not found, (f"{len(found)} English glosses where the authoring guide allows none (keep the one "
                       "at the term's first use, drop the others):\n" + "\n".join(found))


def test_the_gloss_check_finds_a_repeated_or_late_gloss():
    names = english_names()
    first_only = "原子锁（atomic lock）保护缓冲区。之后的原子锁不再注明英文。"
    assert gloss_problems(first_only, "zh", names) == []
    twice = "原子锁（atomic lock）保护缓冲区。原子锁（atomic lock）很慢。"
    assert gloss_problems(twice, "zh", names) == ["'atomic lock' glossed more than once"]
    late = "Khóa nguyên tử bảo vệ bộ đệm. Khóa nguyên tử (atomic lock) chậm."
    assert gloss_problems(late, "vi", names) == ["'atomic lock' glossed after its first use"]
    in_code = "原子锁保护缓冲区。\n\n```python\n# 原子锁（atomic lock）\n```\n"
    assert gloss_problems(in_code, "zh", names) == []


def test_the_glossary_checks_read_pages_notebooks_tables_and_navigation():
    for language in LANGUAGES:
        names = [name for name, _ in sources(language)]
        config = "mkdocs.yml" if language == "en" else f"mkdocs.{language}.yml"
        assert any(n.startswith(f"docs/{language}/") and n.endswith(".md") for n in names)
        assert any(n.startswith(f"notebooks/{language}/") for n in names), f"{language}: no notebook source"
        assert any(n.startswith("docs/data/") for n in names), f"{language}: no rendered table"
        assert config in names
        assert (ROOT / config).is_file() and (DOCS / language).is_dir()
