"""Insert measured numbers into prose from the data the GPU build wrote.

A page writes `{{ rmsnorm.fwd_diff_pct_128x257 }}`; this hook replaces it with the string stored
under that key in docs/data/rmsnorm/quotes.json. An unknown chapter or key fails the build, so a
sentence can never quote a number that the current measurements do not contain.
"""

import json
import re
from functools import cache
from pathlib import Path

from mkdocs.exceptions import PluginError

DATA_ROOT = Path(__file__).resolve().parent.parent / "docs" / "data"
PLACEHOLDER = re.compile(r"\{\{\s*([a-z][a-z0-9_]*)\.([A-Za-z0-9_]+)\s*\}\}")


@cache
def quotes(chapter):
    path = DATA_ROOT / chapter / "quotes.json"
    if not path.is_file():
        raise PluginError(f"no measured quotes for chapter '{chapter}': {path} is missing")
    return json.loads(path.read_text(encoding="utf-8"))


def quote(match, page_path):
    chapter, key = match.groups()
    values = quotes(chapter)
    if key not in values:
        raise PluginError(f"{page_path}: '{chapter}.{key}' is not in docs/data/{chapter}/quotes.json")
    return values[key]


def on_page_markdown(markdown, page, **kwargs):
    return PLACEHOLDER.sub(lambda m: quote(m, page.file.src_uri), markdown)


def on_serve(server, **kwargs):
    # mkdocs serve rebuilds on a data change; read the quotes again then.
    quotes.cache_clear()
    return server
