"""The glossary: one data file for three languages, rendered into each language's glossary page.

snippets/normkit/glossary.toml holds every term the site uses, with its form and a one-line
definition in en, zh and vi, and the forms each language rejects. docs/<lang>/glossary.md writes
`{{ glossary }}` where the table goes and this hook puts the terms of the page's language there, so
the page is always the data that tests/test_glossary.py checks the other pages against.
"""

import tomllib
from functools import cache
from pathlib import Path

from mkdocs.exceptions import PluginError

GLOSSARY = Path(__file__).resolve().parent.parent / "snippets" / "normkit" / "glossary.toml"
LANGUAGES = ("en", "zh", "vi")
MARKER = "{{ glossary }}"
# Column titles of the rendered table; the English page has no "English" column.
COLUMNS = {
    "en": ("Term", "Definition"),
    "zh": ("术语", "英文", "释义"),
    "vi": ("Thuật ngữ", "Tiếng Anh", "Giải thích"),
}


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


def _cell(text):
    return text.replace("|", "\\|")


def table(language):
    header = COLUMNS[language]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for key, entry in terms().items():
        own = entry[language]
        # the same anchor in every language, so a page can link to glossary.md#lane
        cells = [f'<span id="{key.replace("_", "-")}"></span>**{own["term"]}**']
        if language != "en":
            cells.append(entry["en"]["term"])
        cells.append(own["definition"])
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return "\n".join(lines)


def on_page_markdown(markdown, page, config, **kwargs):
    if MARKER not in markdown:
        return markdown
    missing = problems()
    if missing:
        raise PluginError(f"{GLOSSARY.name} is incomplete:\n  " + "\n  ".join(missing))
    return markdown.replace(MARKER, table(config["theme"]["language"]))


def on_serve(server, **kwargs):
    # mkdocs serve rebuilds when the glossary changes (snippets/ is watched); read it again then.
    entries.cache_clear()
    return server
