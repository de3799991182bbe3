"""Chinese prose takes full-width punctuation: ，；：！？ after a Chinese word and （） around Chinese
text, as a Chinese technical writer sets them (issue 40). Read from everything a Chinese reader reads
(sitecheck.reader_texts: the pages, the notebooks' sources and Markdown cells, the tables rendered
under docs/data) and from the catalogue's Chinese words (every generated table and sentence, the next
render's included), with what is not prose left out: code, inline code, math, link targets, quotes ({{ ... }}) and front matter. A tuple
or a shape in half-width parentheses, "(GROUP_SIZE, N)" or "(N,)", holds no Chinese and stays.
"""

import re
import tomllib

import pytest

from sitecheck import SNIPPETS, reader_texts

CJK = r"[\u4e00-\u9fff]"
NOT_PROSE = [re.compile(pattern, re.DOTALL) for pattern in (
    r"\A---\n.*?\n---\n",   # front matter
    r"^```.*?^```",         # code blocks
    r"`[^`\n]*`",           # inline code
    r"\$\$.*?\$\$", r"\$[^$\n]*\$",  # math
    r"\{\{[^}]*\}\}",       # quotes
    r"\]\([^)\n]*\)",       # link targets
    r"<[^>\n]+>",           # HTML tags
)]
MISTAKES = {
    "a half-width , ; : ! or ? after a Chinese word": re.compile(CJK + r"[,;:!?]"),
    "Chinese text in half-width parentheses": re.compile(r"\([^()\n]*" + CJK + r"[^()\n]*\)"),
}


def prose(text):
    for pattern in NOT_PROSE:
        text = re.sub(pattern.pattern, " ", text, flags=re.DOTALL | re.MULTILINE)
    return text


def mistakes(text):
    """(what, the words around it) for each punctuation mistake in a Chinese text."""
    clean = prose(text)
    for what, pattern in MISTAKES.items():
        for match in pattern.finditer(clean):
            yield what, clean[max(0, match.start() - 12):match.end() + 12].replace("\n", " ")


def test_the_rule_finds_half_width_marks_beside_chinese_only():
    assert [what for what, _ in mistakes("拷贝带宽:4190, 前向(单独)")] == [
        "a half-width , ; : ! or ? after a Chinese word", "Chinese text in half-width parentheses"]
    assert not list(mistakes("形状为 (GROUP_SIZE, N) 的缓冲区，`x[:, 0]` 与 $f(x)$；{{ faster.copy_gbps }}"))
    assert not list(mistakes("---\ndescription: 用 Triton\n---\n正文。"))


TEXTS = dict(reader_texts("zh"))


def test_the_check_reads_pages_notebooks_and_rendered_tables():
    assert any(name.startswith("docs/zh/") and name.endswith(".md") for name in TEXTS)
    assert any(name.startswith("notebooks/zh/") for name in TEXTS)
    assert any(name.endswith(")") and ".ipynb (cell " in name for name in TEXTS), "no notebook cell"
    assert any(name.startswith("docs/data/") and name.endswith(".zh.md") for name in TEXTS), "no rendered table"


@pytest.mark.parametrize("name", sorted(TEXTS))
def test_chinese_text_takes_full_width_punctuation(name):
    found = list(mistakes(TEXTS[name]))
    assert not found, (f"{name}: " + "; ".join(f"{what}: …{words}…" for what, words in found)
                       + " (write ，；：！？ and （） beside Chinese text)")


def test_the_catalogues_chinese_takes_full_width_punctuation():
    labels = tomllib.loads(SNIPPETS.joinpath("normkit", "catalogue.toml").read_text(encoding="utf-8"))["labels"]
    found = [f"[labels.{key}]: {what}: …{words}…" for key, entry in labels.items() if "zh" in entry
             for what, words in mistakes(entry["zh"])]
    assert not found, "snippets/normkit/catalogue.toml: " + "; ".join(found)
