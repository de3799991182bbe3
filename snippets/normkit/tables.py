"""Rendered files in every language of the site: the same numbers, in each language's words and format.

A report renders a file once per language through write_localized(); English is written as NAME.md
(or NAME.json), the others as NAME.<lang>.md. Pages include NAME.md, and the site build picks the
file of the page's language (hooks/measurements.py).
"""

import json
from pathlib import Path

from normkit import claims
from normkit.words import LANGUAGES, Words

# The text size of every plot a report draws (5 in = 360 pt wide): a 390-px phone shows the figure about
# 358 px wide, so 12 pt comes out at 11.9 px, over the 11 px a label needs there (tests/test_browser.py).
PLOT_FONT_PT = 12
# The faces a plot's text asks for: matplotlib lays text out with the first (bundled with it, so the
# layout is the same on every machine), and a reader's browser takes the first it has, then a
# Chinese face for a Chinese label rather than whatever its own fallback picks (issue 40); the hand-
# drawn figures in docs/assets/images name the same Chinese faces
PLOT_FONTS = ["DejaVu Sans", "Noto Sans", "Noto Sans CJK SC", "PingFang SC", "Microsoft YaHei", "sans-serif"]


def plot_style(**more):
    """matplotlib settings every report's plot shares: text stays text (svg.fonttype none: selectable,
    and its size can be checked by tests/test_browser.py), at PLOT_FONT_PT in PLOT_FONTS, and the same
    file for the same data (svg.hashsalt); `more` adds a plot's own."""
    return {"svg.hashsalt": "normkernels", "svg.fonttype": "none", "font.size": PLOT_FONT_PT,
            "font.family": "sans-serif", "font.sans-serif": PLOT_FONTS, **more}


def localized_name(name, language):
    stem, dot, suffix = name.rpartition(".")
    return name if language == "en" else f"{stem}.{language}{dot}{suffix}"


def write_localized(out_dir, name, render):
    """render(t) -> text, where t is normkit.words.Words of one language: t("key"), t.number(), t.times()."""
    for language in LANGUAGES:
        text = render(Words(language))
        (Path(out_dir) / localized_name(name, language)).write_text(text, encoding="utf-8")


def write_quotes(out_dir, quotes):
    """quotes.json in every language from quotes(t), a {key: text}; and basis.json, what each verdict
    quote rests on (normkit.claims.cite), the same in every language, for the page test."""
    def dump(data):
        return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    with claims.citing() as basis:
        write_localized(out_dir, "quotes.json", lambda t: dump(quotes(t)))
    (Path(out_dir) / "basis.json").write_text(dump(basis), encoding="utf-8")
