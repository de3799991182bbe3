"""What a reader meets on the built pages, read from the HTML: titles, headings, listings, figures.

The same points are checked on screen, at 1280 and 390 px, by tests/test_browser.py; these are the
parts that need no browser.
"""

import json
import re
import sys
from html import unescape

import pytest

from sitecheck import LANGUAGES, ROOT, built_page, markdown_pages, pages

sys.path.insert(0, str(ROOT / "hooks"))
from page_furniture import LISTING, source_of  # noqa: E402

REPO_URL = re.search(r"^repo_url: (\S+)", (ROOT / "mkdocs.yml").read_text(encoding="utf-8"), re.MULTILINE)[1]
TEX = re.compile(r"\\\(|\\\)|\\\[|\\\]|\$")
TITLE = re.compile(r"<title>(.*?)</title>", re.DOTALL)
TOC = re.compile(r'<nav class="md-nav md-nav--secondary".*?</nav>\s*</div>', re.DOTALL)
TOC_ENTRY = re.compile(r'<span class="md-ellipsis">(.*?)</span>', re.DOTALL)
# The widest line a listing may have: scripts/check.py (MAX_LISTING_COLUMNS), run by tests/test_check.py


def text(html):
    return " ".join(unescape(re.sub(r"<[^>]+>", "", html)).split())


def html_of(site_dir, language, page):
    return built_page(site_dir, language, page).read_text(encoding="utf-8")


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_page_title_is_unique(site_dir, language):
    titles = {page: text(TITLE.search(html_of(site_dir, language, page))[1]) for page in pages(language)}
    seen = {}
    for page, title in titles.items():
        assert title not in seen, f"{language}: {page} and {seen[title]} share the title '{title}'"
        seen[title] = page


@pytest.mark.parametrize("language", LANGUAGES)
def test_no_raw_tex_in_titles_tables_of_contents_or_search(site_dir, language):
    for page in pages(language):
        html = html_of(site_dir, language, page)
        title = text(TITLE.search(html)[1])
        assert not TEX.search(title), f"{language}/{page}: TeX in the title: {title}"
        toc = TOC.search(html)
        for entry in TOC_ENTRY.findall(toc[0] if toc else ""):
            assert not TEX.search(text(entry)), f"{language}/{page}: TeX in the table of contents: {text(entry)}"
    folder = site_dir if language == "en" else site_dir / language
    index = json.loads((folder / "search" / "search_index.json").read_text(encoding="utf-8"))
    for entry in index["docs"]:
        for field in ("title", "text"):
            found = re.search(r"\\\(.{0,30}", entry[field])
            assert not found, f"{language}: search {field} of {entry['location']} shows TeX: {found[0]}"


def listing_sources(markdown):
    return [source_of(match["target"]) for match in LISTING.finditer(markdown)]


LISTING_PAGES = [(language, page, markdown) for language, page, markdown in markdown_pages()
                 if LISTING.search(markdown)]


@pytest.mark.parametrize("language,page,markdown", LISTING_PAGES, ids=[f"{l}/{p}" for l, p, _ in LISTING_PAGES])
def test_listings_are_titled_with_their_source_path_linked_to_the_repository(site_dir, language, page, markdown):
    titles = re.findall(r'<span class="filename"><a href="([^"]+)">([^<]+)</a></span>',
                        html_of(site_dir, language, page))
    expected = listing_sources(markdown)
    assert [title for _, title in titles] == [path for path, _ in expected], f"{language}/{page}: listing titles"
    for (href, title), (path, lines) in zip(titles, expected):
        anchor = f"#L{lines[0]}-L{lines[1]}" if lines else ""
        assert href == f"{REPO_URL}/blob/main/{path}{anchor}", f"{language}/{page}: {title} links to {href}"


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("page", [p for p in pages("en") if p.endswith(".md")])
def test_every_figure_has_a_caption(site_dir, language, page):
    html = html_of(site_dir, language, page)
    article = html.split('<article class="md-content__inner md-typeset">', 1)[1].split("</article>", 1)[0]
    figures = re.findall(r"<figure>(.*?)</figure>", article, re.DOTALL)
    images = re.findall(r"<img [^>]*>", article)
    assert len(images) == sum(len(re.findall(r"<img ", f)) for f in figures), f"{language}/{page}: an image outside a figure"
    for figure in figures:
        caption = re.search(r"<figcaption>(.*?)</figcaption>", figure, re.DOTALL)
        assert caption and text(caption[1]), f"{language}/{page}: a figure without a caption"


EDIT_PATH = {".md": "docs/{language}/{page}", ".ipynb": "notebooks/{language}/{stem}.md"}


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_page_links_the_repository_its_source_and_its_last_update(site_dir, language):
    for page in pages(language):
        html = html_of(site_dir, language, page)
        assert f'<a href="{REPO_URL}" title=' in html and 'class="md-source"' in html, f"{language}/{page}: no repository link"
        stem, suffix = page.rsplit(".", 1)[0], "." + page.rsplit(".", 1)[1]
        source = EDIT_PATH[suffix].format(language=language, page=page, stem=stem.split("/")[-1])
        assert f'href="{REPO_URL}/edit/main/{source}"' in html, f"{language}/{page}: no 'edit this page' link to {source}"
        # the plugin's class names the date's type: "date", or "custom" (mkdocs.vi.yml's format)
        assert re.search(r'git-revision-date-localized-plugin-(?:date|custom)"[^>]*>[^<]*\d', html), (
            f"{language}/{page}: no last-update date")
