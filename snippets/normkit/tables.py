"""Rendered files in every language of the site: the same numbers, in each language's words and format.

A report renders a file once per language through write_localized(); English is written as NAME.md
(or NAME.json), the others as NAME.<lang>.md. Pages include NAME.md, and the site build picks the
file of the page's language (hooks/measurements.py).
"""

from pathlib import Path

from normkit.words import LANGUAGES, Words


def localized_name(name, language):
    stem, dot, suffix = name.rpartition(".")
    return name if language == "en" else f"{stem}.{language}{dot}{suffix}"


def write_localized(out_dir, name, render):
    """render(t) -> text, where t is normkit.words.Words of one language: t("key"), t.number(), t.times()."""
    for language in LANGUAGES:
        text = render(Words(language))
        (Path(out_dir) / localized_name(name, language)).write_text(text, encoding="utf-8")
