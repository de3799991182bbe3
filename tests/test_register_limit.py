"""The register limits the Going faster pages state come from the launch tables, through quotes.

Where a program's registers run out (the row design stops prefetching the next row; a row gets two
programs) is read by faster.quotes.launch_limits from the table the kernels use, and the pages quote
it: the rendered quotes must be what the current tables say, and no page may type the number instead.
"""

import json
import re
import sys

import pytest

from sitecheck import DOCS, LANGUAGES, SNIPPETS

sys.path.insert(0, str(SNIPPETS))

from faster.quotes import launch_limits  # noqa: E402
from faster.results import OPS  # noqa: E402

KEYS = ("bwd_prefetch_max_n", "bwd_split_from_n", "bwd_one_program_max_n")


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_quoted_limits_are_those_of_the_launch_tables(language):
    name = "quotes.json" if language == "en" else f"quotes.{language}.json"
    quotes = json.loads((DOCS / "data" / "faster" / name).read_text(encoding="utf-8"))
    for op, p in OPS.items():
        limits = launch_limits(op, p)
        assert set(limits) == {f"{p}_{key}" for key in KEYS}, f"{op}: the launch table gives {limits}"
        for key, value in limits.items():
            assert quotes.get(key) == value, f"docs/data/faster/{name}: {key} is {quotes.get(key)}, the table says {value}"
        prefetch, split, one = (int(limits[f"{p}_{key}"]) for key in KEYS)
        assert prefetch <= one < split, f"{op}: prefetch up to {prefetch}, one program up to {one}, split from {split}"


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("page", ["layernorm/faster.md", "rmsnorm/faster.md"])
def test_the_pages_quote_the_limit_where_they_state_it(language, page):
    text = (DOCS / language / page).read_text(encoding="utf-8")
    p = OPS[page.split("/")[0]]
    assert f"{{{{ faster.{p}_bwd_prefetch_max_n }}}}" in text and f"{{{{ faster.{p}_bwd_one_program_max_n }}}}" in text
    # the old typed forms of the limit
    typed = re.findall(r"Past about 8192 columns|Past 8192 columns|超过约 8192 列|超过 8192 列|quá khoảng 8192 cột|quá 8192 cột", text)
    assert not typed, f"{language}/{page}: the register limit typed, not quoted: {typed}"
