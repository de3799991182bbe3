"""Search works in each language: the built index finds each chapter by a word of that language.

The index is what the browser's search worker loads. Material splits text on the configured
separator (Chinese text arrives pre-segmented by jieba, with zero-width spaces between words);
a page matches a query when every term of the query is one of its words.
"""

import json
import re

import pytest

from sitecheck import output_dir

# (language, query, the chapter it must find)
QUERIES = [
    ("en", "atomic lock", "layernorm/"),
    ("en", "partial reduction", "rmsnorm/"),
    ("zh", "原子锁", "layernorm/"),
    ("zh", "部分归约", "rmsnorm/"),
    ("vi", "rút gọn từng phần", "rmsnorm/"),
    ("vi", "bộ đệm tổng một phần", "rmsnorm/"),
    ("vi", "khóa nguyên tử", "layernorm/"),
]


def load_index(site_dir, language):
    return json.loads((output_dir(site_dir, language) / "search" / "search_index.json").read_text("utf-8"))


def words(text, separator):
    plain = re.sub(r"<[^>]+>", " ", text).lower()
    return set(filter(None, re.split(separator, plain)))


@pytest.mark.parametrize("language,query,chapter", QUERIES)
def test_search_index_finds_the_chapter(site_dir, language, query, chapter):
    index = load_index(site_dir, language)
    separator = index["config"]["separator"]
    terms = set(filter(None, re.split(separator, query.lower())))
    found = {
        doc["location"].split("#")[0]
        for doc in index["docs"]
        if terms <= words(doc["title"] + " " + doc["text"], separator)
    }
    assert any(location.startswith(chapter) for location in found), (
        f"{language}: searching '{query}' finds {sorted(found) or 'nothing'}, not the {chapter} chapter"
    )
