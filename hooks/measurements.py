"""Insert measured numbers and tables into pages from the data the GPU build wrote.

- A page writes `{{ rmsnorm.fwd_diff_pct_128x257 }}`; this hook replaces it with the string stored
  under that key in the quotes of the page's language: docs/data/rmsnorm/quotes.json in English,
  quotes.zh.json and quotes.vi.json in the others (the same numbers, written in each language's
  format by normkit.words.number). An unknown chapter or key fails the build, so a sentence can
  never quote a number that the current measurements do not contain.
- A page includes a table with `--8<-- "rmsnorm/timing.md"`; in the Chinese build this hook points
  the include at rmsnorm/timing.zh.md, the same table with translated labels, when it exists.
- A page shows a plot with `![...](../data/rmsnorm/timing.svg)`; in the Chinese build this hook
  points the image at rmsnorm/timing.zh.svg, the same plot in the page's words, when it exists.
"""

import json
import re
from functools import cache
from pathlib import Path

from mkdocs.exceptions import PluginError

DATA_ROOT = Path(__file__).resolve().parent.parent / "docs" / "data"
PLACEHOLDER = re.compile(r"\{\{\s*([a-z][a-z0-9_]*)\.([A-Za-z0-9_]+)\s*\}\}")
DATA_INCLUDE = re.compile(r'^(?P<lead>\s*-{1,}8<-{1,}\s+")(?P<stem>[\w/-]+)\.md"', re.MULTILINE)
DATA_PLOT = re.compile(r'(?P<lead>\]\((?:\.\./)*data/)(?P<stem>[\w/-]+)\.svg\)')


def quotes_path(chapter, language):
    return DATA_ROOT / chapter / ("quotes.json" if language == "en" else f"quotes.{language}.json")


@cache
def quotes(chapter, language):
    path = quotes_path(chapter, language)
    if not path.is_file():
        raise PluginError(f"no measured quotes for chapter '{chapter}' in '{language}': {path} is missing")
    return json.loads(path.read_text(encoding="utf-8"))


def quote(match, page_path, language):
    chapter, key = match.groups()
    values = quotes(chapter, language)
    if key not in values:
        raise PluginError(f"{page_path}: '{chapter}.{key}' is not in {quotes_path(chapter, language)}")
    return values[key]


def localized_include(match, language):
    localized = f"{match['stem']}.{language}.md"
    if language != "en" and (DATA_ROOT / localized).is_file():
        return f'{match["lead"]}{localized}"'
    return match.group(0)


def localized_plot(match, language):
    localized = f"{match['stem']}.{language}.svg"
    if language != "en" and (DATA_ROOT / localized).is_file():
        return f"{match['lead']}{localized})"
    return match.group(0)


def on_page_markdown(markdown, page, config, **kwargs):
    language = config["theme"]["language"]
    markdown = DATA_INCLUDE.sub(lambda m: localized_include(m, language), markdown)
    markdown = DATA_PLOT.sub(lambda m: localized_plot(m, language), markdown)
    return PLACEHOLDER.sub(lambda m: quote(m, page.file.src_uri, language), markdown)


def on_serve(server, **kwargs):
    # mkdocs serve rebuilds on a data change; read the quotes again then.
    quotes.cache_clear()
    return server
