"""Every page links each glossary term it uses, once, from its first use in prose (hooks/glossary.py).

The unit tests feed the linker Markdown whose first use of a term sits where no link may go (code,
headings, math, links, admonition titles, quotes of measured values, included files). The site
tests read the built pages: every glossary link resolves to an entry of the page's own language, none
sits inside code, a heading or math, and the links are, in order, the first uses of the terms that
the page's prose uses, found in the source by a reading of its own.
"""

import importlib.util
import re
from html.parser import HTMLParser

import pytest

from sitecheck import DOCS, LANGUAGES, ROOT, built_page, markdown_pages

import check  # scripts/check.py: the glossary-use rule is make check's (sitecheck puts scripts/ on sys.path)

_spec = importlib.util.spec_from_file_location("glossary_hook", ROOT / "hooks" / "glossary.py")
glossary = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(glossary)


def link(text, key, url="glossary.md"):
    return f"[{text}]({url}#{glossary.anchor(key)})"


def linked(markdown, language="en"):
    return glossary.link_first_uses(markdown, language, "glossary.md")


# --- the linker on its own --------------------------------------------------------------------


@pytest.mark.parametrize("before", [
    "# The kernel\n\n",
    "```python\nkernel = 1\n```\n\n",
    "    ```python\n    kernel = 1\n    ```\n\n",
    "Call `kernel` here.\n\n",
    "The math $\\text{kernel}$.\n\n",
    "$$\n\\text{kernel}\n$$\n\n",
    "On the {{ layernorm.kernel }} GPU.\n\n",
    '--8<-- "layernorm/kernel.md"\n\n',
    "See [the kernel page](other.md).\n\n",
    "![a kernel](image.svg)\n\n",
    '!!! note "A kernel"\n\n',
    '??? question "A kernel"\n\n',
    '=== "kernel"\n\n',
    '<span title="kernel">x</span>\n\n',
    "A figure { title=\"kernel\" }\n\n",
])
def test_no_link_where_none_may_go_and_the_next_use_gets_it(before):
    out = linked(before + "The kernel runs.\n")
    assert out == before + f"The {link('kernel', 'kernel')} runs.\n", out


def test_a_term_is_linked_once_at_its_first_use_with_its_own_words():
    out = linked("Kernels run. A kernel runs. The Kernel ran.\n")
    assert out == f"{link('Kernels', 'kernel')} run. A kernel runs. The Kernel ran.\n"


def test_the_longest_form_wins_and_a_shorter_term_inside_it_is_no_use():
    out = linked("An atomic lock, then a lock.\n")
    assert out == f"An {link('atomic lock', 'atomic_lock')}, then a {link('lock', 'lock')}.\n"


def test_words_that_only_contain_a_form_are_no_use():
    assert linked("Every transformer block has a norm.\n") == "Every transformer block has a norm.\n"
    out = linked("它在 GPU 上运行，每行一个程序实例。\n", "zh")
    assert out == f"它在 GPU 上运行，每{link('行', 'row')}一个{link('程序实例', 'program')}。\n"


def test_a_term_the_page_links_by_hand_gets_no_second_link():
    text = f"Registers first, then the {link('registers', 'register')} list.\n"
    assert linked(text) == text


def test_parts_of_a_word_are_no_use_in_english_and_vietnamese():
    assert linked("A programming model, a lockstep, non-contiguous.\n") == \
        "A programming model, a lockstep, non-contiguous.\n"
    assert linked("Mỗi hàng đợi.\n", "vi") == "Mỗi hàng đợi.\n"


def test_every_form_belongs_to_one_term():
    for language in LANGUAGES:
        forms = {}
        for key, entry in glossary.terms().items():
            fields = entry[language]
            for form in fields.get("forms", [fields["term"]]):
                assert forms.setdefault(form, key) == key, f"{language}: '{form}' is a form of {forms[form]} and {key}"


# --- the built site ---------------------------------------------------------------------------

PAGES = [(language, page) for language, page, _ in markdown_pages() if page != "glossary.md"]
NO_LINK_INSIDE = {"code", "pre", "h1", "h2", "h3", "h4", "h5", "h6", "summary", "label"}
NO_LINK_CLASSES = {"arithmatex", "admonition-title", "katex"}

FENCE = re.compile(r"^(\s*)(`{3,}|~{3,}).*?^\1\2[ \t]*$", re.MULTILINE | re.DOTALL)
BLANKED = [  # what the test's own reading of a page's source leaves out of its prose
    re.compile(r"^\s*(?:#{1,6}\s|;?-{1,}8<-{1,}|!!!|\?\?\?|===\s|///|<).*$", re.MULTILINE),
    re.compile(r"^\s*\$\$.*?^\s*\$\$\s*$", re.MULTILINE | re.DOTALL),
    re.compile(r"(`+)(?!`).+?(?<!`)\1"),
    re.compile(r"(?<![\\$])\$(?!\$)[^$\n]+?(?<!\\)\$"),
    re.compile(r"\{\{.*?\}\}|\{\s*[:#.\w][^{}\n]*\}"),
    re.compile(r"<[^>\n]+>"),
]
MANUAL = re.compile(r"\[([^\]]+)\]\((?:\.\./)*glossary\.md#([\w-]+)\)")
OTHER_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\](?:\([^)\n]*\)|\[[^\]\n]*\])?")


def expected_links(markdown, language):
    """(anchor, text) of the glossary links a page's source calls for, in order: the links written
    by hand where they are, and the first use of every other term in what is left of the prose."""
    body = re.sub(r"\A---\n.*?\n---\n", "", markdown, flags=re.DOTALL)
    body = FENCE.sub(lambda m: " " * len(m.group(0)), body)
    for pattern in BLANKED:
        body = pattern.sub(lambda m: " " * len(m.group(0)), body)
    found = [(m.start(), m.group(2), m.group(1)) for m in MANUAL.finditer(body)]
    by_hand = {anchor for _, anchor, _ in found}
    body = OTHER_LINK.sub(lambda m: " " * len(m.group(0)), body)
    forms, seen = glossary.uses(language), set(by_hand)
    for match in glossary.use_pattern(language).finditer(body):
        key = forms[match.group(0)]
        if key is not None and glossary.anchor(key) not in seen:
            seen.add(glossary.anchor(key))
            found.append((match.start(), glossary.anchor(key), match.group(0)))
    return [(anchor, text) for _, anchor, text in sorted(found)]


class Links(HTMLParser):
    """The glossary links of a page's article, in order, and the ones inside what takes none."""

    def __init__(self):
        super().__init__()
        self.stack, self.links, self.misplaced, self.ids = [], [], [], set()
        self.depth = 0  # inside <article>

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id"):
            self.ids.add(attrs["id"])
        if tag == "article":
            self.depth += 1
        if tag in ("br", "img", "hr", "input", "meta", "link", "wbr"):
            return
        href = attrs.get("href") or ""
        entry = {"tag": tag, "classes": set((attrs.get("class") or "").split()), "href": href, "text": ""}
        if self.depth and tag == "a" and "glossary/#" in href:
            inside = [e["tag"] for e in self.stack if e["tag"] in NO_LINK_INSIDE or e["classes"] & NO_LINK_CLASSES
                      or e["tag"] == "a"]
            if inside:
                self.misplaced.append((href, inside))
            self.links.append(entry)
        self.stack.append(entry)

    def handle_endtag(self, tag):
        if tag == "article":
            self.depth -= 1
        while self.stack:
            if self.stack.pop()["tag"] == tag:
                break

    def handle_data(self, data):
        for entry in self.stack:
            if entry["tag"] == "a" and "glossary/#" in entry["href"]:
                entry["text"] += data


def read_links(path):
    parser = Links()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


@pytest.fixture(scope="module")
def glossary_ids(site_dir):
    return {language: read_links(built_page(site_dir, language, "glossary.md")).ids for language in LANGUAGES}


@pytest.mark.parametrize("language,page", PAGES)
def test_each_term_is_linked_once_from_its_first_use(site_dir, glossary_ids, language, page):
    html = built_page(site_dir, language, page)
    found = read_links(html)
    assert not found.misplaced, f"{language}/{page}: glossary links inside code, headings or math: {found.misplaced}"
    target = built_page(site_dir, language, "glossary.md").parent
    for entry in found.links:
        where, _, anchor = entry["href"].partition("#")
        resolved = (html.parent / where).resolve()
        assert resolved == target.resolve(), f"{language}/{page}: {entry['href']} leads to {resolved}, not the glossary"
        assert anchor in glossary_ids[language], f"{language}/{page}: {entry['href']}: no such entry"
    actual = [(e["href"].partition("#")[2], e["text"]) for e in found.links]
    expected = expected_links((DOCS / language / page).read_text(encoding="utf-8"), language)
    assert actual == expected, (
        f"{language}/{page}: glossary links differ from the first uses in the source:\n"
        + "\n".join(f"  {a!r:40} {e!r}" for a, e in zip(actual + [None] * len(expected), expected + [None] * len(actual))
                    if a != e)[:3000])


def test_every_page_links_the_glossary():
    # the glossary page itself and untranslated pages aside, every page uses a term or two: make check's rule
    assert check.glossary_use() == []
    for language, page, markdown in markdown_pages():  # and this test's own reading agrees with it
        if page != "glossary.md" and not check.untranslated(markdown):
            assert expected_links(markdown, language), f"{language}/{page} uses no glossary term"



def test_a_link_title_never_ends_a_table_cell():
    # a term's first use may sit in a table: its definition, the link's title, must hold no |
    title = glossary.plain_definition('atol + rtol·|reference|, "`x`"')
    assert "|" not in title and '"' not in title and "`" not in title
