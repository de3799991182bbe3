"""The glossary: one data file for three languages, rendered into each language's glossary page.

snippets/normkit/glossary.toml holds every term the site uses, with its form and a one-line
definition in en, zh and vi, and the forms each language rejects. docs/<lang>/glossary.md writes
`{{ glossary }}` where the terms go and this hook puts the terms of the page's language there, so
the page is always the data that tests/test_glossary.py checks the other pages against.

The terms are a definition list (legible on a phone, where Material shrinks table text), in the
alphabetical order of the page's language: English by the term; Chinese by the English term shown
beside each one (a reader looks a term up by the name the literature uses); Vietnamese by its own
alphabet. Each term has the same anchor in every language (glossary/#lane).
"""

import unicodedata

import tomllib
from functools import cache
from pathlib import Path

from mkdocs.exceptions import PluginError

GLOSSARY = Path(__file__).resolve().parent.parent / "snippets" / "normkit" / "glossary.toml"
LANGUAGES = ("en", "zh", "vi")
MARKER = "{{ glossary }}"


@cache
def entries():
    """{id: {language: {"term", "definition", "rejected"?}}}, in the order of the file."""
    return tomllib.loads(GLOSSARY.read_text(encoding="utf-8"))


def terms():
    """The entries shown on the glossary pages: ids starting with '_' only list wording to avoid."""
    return {key: entry for key, entry in entries().items() if not key.startswith("_")}


def problems():
    """Every way the data falls short of its schema, as readable lines (empty when complete)."""
    found = []
    for key, entry in entries().items():
        for language in LANGUAGES:
            fields = entry.get(language)
            if fields is None:
                found.append(f"{key}: no [{key}.{language}] table")
                continue
            for field in ("term", "definition"):
                if not str(fields.get(field, "")).strip():
                    found.append(f"{key}.{language}: '{field}' is missing or empty")
            rejected = fields.get("rejected", [])
            if not isinstance(rejected, list) or not all(isinstance(f, str) and f.strip() for f in rejected):
                found.append(f"{key}.{language}: 'rejected' must be a list of non-empty strings")
        unknown = set(entry) - set(LANGUAGES)
        if unknown:
            found.append(f"{key}: unknown language tables {sorted(unknown)}")
    return found


def rejected_forms(language):
    """(form, id, the form to use instead) for every form the language rejects."""
    for key, entry in entries().items():
        fields = entry.get(language, {})
        for form in fields.get("rejected", []):
            yield form, key, fields.get("term", "")


# The Vietnamese alphabet's order: a ă â b c d đ e ê g h i k l m n o ô ơ p q r s t u ư v x y. Its
# letters with a breve, circumflex or horn (and đ) are letters of their own; the five tone marks only
# break ties. A collation library (PyICU) is a C++ build for this one sort: the rule is short.
VI_LETTER_MARKS = {"\u0306": 1, "\u0302": 2, "\u031b": 3}  # breve, circumflex, horn


def vietnamese_key(text):
    letters, tones = [], []
    for char in text.casefold():
        if char == "đ":
            letters.append(("d", 1))
            continue
        base, *marks = unicodedata.normalize("NFD", char)
        letters.append((base, max((VI_LETTER_MARKS.get(m, 0) for m in marks), default=0)))
        tones.append("".join(m for m in marks if m not in VI_LETTER_MARKS))
    return letters, tones


def sort_key(entry, language):
    if language == "vi":
        return vietnamese_key(entry["vi"]["term"])
    return entry["en"]["term"].casefold(), entry[language]["term"]


def anchor(key):
    return key.replace("_", "-")


def listing(language):
    """The terms as a definition list: the term (and the English one), then its definition."""
    lines = []
    for key, entry in sorted(terms().items(), key=lambda item: sort_key(item[1], language)):
        own = entry[language]
        same = entry["en"]["term"].casefold() == own["term"].casefold()
        english = "" if language == "en" or same else f" ({entry['en']['term']})"
        lines += [f'<span id="{anchor(key)}"></span>**{own["term"]}**{english}', "", f":   {own['definition']}", ""]
    return "\n".join(lines)


def on_page_markdown(markdown, page, config, **kwargs):
    if MARKER not in markdown:
        return markdown
    missing = problems()
    if missing:
        raise PluginError(f"{GLOSSARY.name} is incomplete:\n  " + "\n  ".join(missing))
    return markdown.replace(MARKER, listing(config["theme"]["language"]))


def on_serve(server, **kwargs):
    # mkdocs serve rebuilds when the glossary changes (snippets/ is watched); read it again then.
    entries.cache_clear()
    return server
