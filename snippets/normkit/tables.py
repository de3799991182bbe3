"""Result tables in every language of the site: the same numbers, the labels translated.

A chapter's report renders a table once per language through write_localized(); English is
written as NAME.md, the others as NAME.<lang>.md. Pages include NAME.md, and the site build
picks the file of the page's language (hooks/measurements.py).
"""

from pathlib import Path

LANGUAGES = ("en", "zh", "vi")


def localized_name(name, language):
    stem, dot, suffix = name.rpartition(".")
    return name if language == "en" else f"{stem}.{language}{dot}{suffix}"


def write_localized(out_dir, name, render, labels):
    """render(label) -> Markdown, where label(key) is the text of key in one language."""
    for language in LANGUAGES:
        words = labels[language]
        text = render(lambda key: words[key])
        (Path(out_dir) / localized_name(name, language)).write_text(text, encoding="utf-8")
