"""One glossary for three languages: complete, and no page uses a form its language rejects.

Also: a page that has a description in English has one in every language, and the comments of the
shell commands typed into a page are in the page's language (code listings stay English).
"""

import importlib.util
import re

import pytest
import yaml

from sitecheck import DOCS, LANGUAGES, ROOT, markdown_pages, reader_texts, untranslated

# the same module renders the glossary pages: load it from hooks/, which is no package
_spec = importlib.util.spec_from_file_location("glossary_hook", ROOT / "hooks" / "glossary.py")
glossary = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(glossary)

FENCE = re.compile(r"^(\s*)(`{3,}|~{3,}).*?^\1\2[ \t]*$", re.MULTILINE | re.DOTALL)
INLINE_CODE = re.compile(r"(`+)(?!`).+?(?<!`)\1")
SNIPPET_LINE = re.compile(r"^\s*;?-{1,}8<-{1,}.*$", re.MULTILINE)
FRONT_MATTER = re.compile(r"\A---\n(.*?)\n---\n", re.DOTALL)


def readable(text):
    """The text a reader sees as prose: code blocks, inline code and snippet includes blanked out,
    line breaks kept so that line numbers still point into the file."""
    text = FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    text = SNIPPET_LINE.sub("", text)
    return INLINE_CODE.sub("", text)


def sources(language):
    """(name, text) of everything a reader of this language reads (sitecheck.reader_texts: pages,
    notebook prose, rendered tables) and the navigation titles."""
    yield from reader_texts(language)
    config = "mkdocs.yml" if language == "en" else f"mkdocs.{language}.yml"
    yield config, (ROOT / config).read_text(encoding="utf-8")


def pattern(form, language):
    if language == "zh":  # Chinese has no spaces between words: any occurrence is the form
        return re.compile(re.escape(form))
    return re.compile(rf"(?<!\w){re.escape(form)}(?!\w)", re.IGNORECASE)


def rejected_uses(language):
    forms = [(pattern(form, language), form, key, use) for form, key, use in glossary.rejected_forms(language)]
    for name, text in sources(language):
        for number, line in enumerate(readable(text).splitlines(), start=1):
            for regex, form, key, use in forms:
                if regex.search(line):
                    advice = f"use '{use}'" if not key.startswith("_") else "reword"
                    yield f"{name}:{number}: '{form}' ({key}: {advice}): {line.strip()[:120]}"


def test_every_term_has_a_form_and_a_definition_in_every_language():
    assert glossary.problems() == []


def rendered_terms(language):
    """(anchor, term) of each entry, in the order the glossary page lists them."""
    return re.findall(r'^<span id="([\w-]+)"></span>\*\*(.+?)\*\*', glossary.listing(language), re.MULTILINE)


def test_the_glossary_renders_every_term_in_every_language_with_one_anchor_each():
    for language in LANGUAGES:
        shown = rendered_terms(language)
        assert sorted(term for _, term in shown) == sorted(e[language]["term"] for e in glossary.terms().values())
        # the same anchors in every language, one per term: a page links to glossary/#lane
        assert sorted(a for a, _ in shown) == sorted(glossary.anchor(k) for k in glossary.terms())


def test_the_glossary_is_in_alphabetical_order():
    english = [term.casefold() for _, term in rendered_terms("en")]
    assert english == sorted(english)
    # Chinese by the English term shown beside each one
    terms = glossary.terms()
    by_anchor = {glossary.anchor(k): e["en"]["term"].casefold() for k, e in terms.items()}
    chinese = [by_anchor[a] for a, _ in rendered_terms("zh")]
    assert chinese == sorted(chinese)
    # Vietnamese: ă after a, đ after d, ơ after ô; tone marks only break ties
    assert sorted(["đường", "dữ", "ơ", "ô", "ă", "b", "à"], key=glossary.vietnamese_key) == \
        ["à", "ă", "b", "dữ", "đường", "ô", "ơ"]


def test_every_language_has_a_glossary_page_with_its_table():
    for language in LANGUAGES:
        page = DOCS / language / "glossary.md"
        assert glossary.MARKER in page.read_text(encoding="utf-8"), f"{page}: no {glossary.MARKER}"


def test_a_form_is_never_both_used_and_rejected_in_one_language():
    for language in LANGUAGES:
        used = {entry[language]["term"] for entry in glossary.terms().values()}
        rejected = {form for form, _, _ in glossary.rejected_forms(language)}
        assert not used & rejected, f"{language}: {sorted(used & rejected)}"


@pytest.mark.parametrize("language", LANGUAGES)
def test_no_page_uses_a_form_the_glossary_rejects(language):
    found = list(rejected_uses(language))
    assert not found, f"{len(found)} rejected forms in {language}:\n" + "\n".join(found)


def test_the_check_finds_a_rejected_form_outside_code_only():
    form, _, _ = next(glossary.rejected_forms("zh"))
    text = f"正文里的{form}\n\n```python\n# {form}\n```\n\n`{form}` 行内代码\n"
    hits = [n for n, line in enumerate(readable(text).splitlines(), 1) if pattern(form, "zh").search(line)]
    assert hits == [1]


SHELL_FENCE = re.compile(r"^(\s*)(`{3,})(?:bash|sh|shell|console)[ \t]*\n(.*?)^\1\2[ \t]*$", re.MULTILINE | re.DOTALL)


def shell_comments(markdown):
    """The comments of the shell commands typed into a page (snippet includes are source files, not typed)."""
    return [line.split("#", 1)[1].strip()
            for block in SHELL_FENCE.findall(markdown) for line in block[2].splitlines()
            if "#" in line and "--8<--" not in line]


TRANSLATED_PAGES = [(language, page) for language in LANGUAGES if language != "en"
                    for page in sorted(p for lang, p, _ in markdown_pages() if lang == "en")]


@pytest.mark.parametrize("language,page", TRANSLATED_PAGES)
def test_shell_comments_are_in_the_language_of_the_page(language, page):
    path = DOCS / language / page
    english = set(shell_comments((DOCS / "en" / page).read_text(encoding="utf-8")))
    if not path.is_file() or untranslated(path.read_text(encoding="utf-8")):
        return  # a missing page is make check's; an untranslated one is English until a native writer writes it
    left = [c for c in shell_comments(path.read_text(encoding="utf-8")) if c in english]
    assert not left, f"{language}/{page}: shell comments still in English: {left}"


def _description(markdown):
    front = FRONT_MATTER.match(markdown)
    return (yaml.safe_load(front.group(1)) or {}).get("description") if front else None


ENGLISH_DESCRIBED = sorted(page for language, page, text in markdown_pages() if language == "en" and _description(text))


@pytest.mark.parametrize("language", [lang for lang in LANGUAGES if lang != "en"])
@pytest.mark.parametrize("page", ENGLISH_DESCRIBED)
def test_a_page_described_in_english_is_described_in_every_language(language, page):
    path = DOCS / language / page
    assert path.is_file(), f"{language}/{page} is missing"
    description = _description(path.read_text(encoding="utf-8"))
    assert description and description.strip(), f"{language}/{page} has no description; en/{page} has one"
