"""The built pages read as written sentences: no template leftovers where a number was inserted.

A page sentence that quotes a measured number ({{ chapter.key }}) or a table a report renders must
read as prose once the number is in: no "row(s)", no count said twice ("3 / 4 of the four"), no
article that does not fit the number after it ("an 141 GB"), no unfilled placeholder or formatting
field, and no number that is not a number (nan, inf). Checked on the visible text of every built
page of every language, code blocks and math left out (a listing may print anything, TeX has braces).
"""

import re
from html import unescape

import pytest

from sitecheck import LANGUAGES, built_page, pages

CODE = re.compile(r"<(pre|code|script|style)\b.*?</\1>", re.DOTALL)
MATH = re.compile(r"\\\(.*?\\\)|\\\[.*?\\\]", re.DOTALL)  # \( \) and \[ \]: TeX braces are not placeholders
NUMBER_WORDS = "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
LEFTOVERS = {
    "a plural in parentheses": re.compile(r"\w\((?:s|es)\)"),
    "a count said twice": re.compile(rf"\b\d+ ?/ ?\d+ (?:of|on|at) (?:the )?(?:{NUMBER_WORDS}|\d+)\b"),
    "an unfilled placeholder": re.compile(r"\{\{|\}\}|\{[a-z_]+\}"),
    # Python's spellings of a failed number, or NaN where a number with its unit belongs (the prose may
    # speak of NaN, as the lock tests' poisoned buffers do)
    "a number that is not one": re.compile(r"(?<![\w-])(?:nan|inf|Infinity)(?![\w-])|NaN ?(?:%|µs|GB/s|×|倍)"),
}


def visible_text(html):
    body = html.split("<article", 1)[-1].split("</article>", 1)[0]
    return " ".join(MATH.sub(" ", unescape(re.sub(r"<[^>]+>", " ", CODE.sub(" ", body)))).split())


def spoken_with_a_vowel(number):
    """Whether English says the number starting with a vowel sound: eight, eleven, eighteen, eighty..."""
    digits = number.replace(",", "")
    group = len(digits) % 3 or 3  # the leading group is what is said first: 18 in 18,432; 141 in 141
    lead = digits[:group]
    return lead.startswith("8") or lead in ("11", "18")


def wrong_articles(text):
    """'a' or 'an' before a number whose spoken form needs the other one."""
    for match in re.finditer(r"\b([Aa]n?) (\d[\d,]*)", text):
        article, number = match.groups()
        if (article.lower() == "an") != spoken_with_a_vowel(number):
            yield match.group(0)


def test_the_article_rule_reads_numbers_as_spoken():
    assert list(wrong_articles("an 141 GB GPU, a 8-bit value, an 8192-wide block, a 4096-wide tile")) == [
        "an 141", "a 8"]
    assert not list(wrong_articles("an 18,432-wide row, an 11 µs call, a 12288-wide row"))


@pytest.mark.parametrize("language", LANGUAGES)
def test_no_template_leftovers_on_the_built_pages(site_dir, language):
    found = []
    for page in pages(language):
        if not page.endswith(".md"):
            continue
        text = visible_text(built_page(site_dir, language, page).read_text(encoding="utf-8"))
        for what, pattern in LEFTOVERS.items():
            found += [f"{language}/{page}: {what}: …{text[max(0, m.start() - 40):m.end() + 40]}…"
                      for m in pattern.finditer(text)]
        if language == "en":
            found += [f"en/{page}: an article that does not fit the number: '{hit}'" for hit in wrong_articles(text)]
    assert not found, "template leftovers in the built pages (fix the sentence in the page source):\n" + "\n".join(found)
