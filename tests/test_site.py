"""The built site: notebooks rendered, the language switcher on the same page, nothing off-site.

What the sources must hold (every page in every language, includes that resolve, no hand-written
kernel, every snippet section shown) is checked by scripts/check.py: tests/test_check.py runs it.
"""

import re
from urllib.parse import urljoin, urlparse

import pytest

from sitecheck import LANGUAGES, built_page, output_dir, pages, tags

ENGLISH_PAGES = pages("en")


def _html_files(site_dir):
    return sorted(site_dir.rglob("*.html"))


# Tag and attribute that make the browser fetch something when the page is viewed.
FETCHED = {"script": "src", "img": "src", "source": "src", "iframe": "src", "link": "href"}
LINK_RELS_FETCHED = {"stylesheet", "icon", "preload", "modulepreload", "manifest", "apple-touch-icon"}


def test_nothing_is_loaded_from_another_host(site_dir):
    offsite = []
    for html in _html_files(site_dir):
        for tag, attrs in tags(html):
            if tag not in FETCHED:
                continue
            if tag == "link" and not LINK_RELS_FETCHED & set((attrs.get("rel") or "").split()):
                continue
            url = attrs.get(FETCHED[tag]) or ""
            if urlparse(url).netloc or url.startswith("//"):
                offsite.append(f"{html.relative_to(site_dir)}: <{tag}> {url}")
    for css in site_dir.rglob("*.css"):
        for url in re.findall(r"url\(\s*['\"]?((?:https?:)?//[^'\")]+)", css.read_text(encoding="utf-8")):
            offsite.append(f"{css.relative_to(site_dir)}: url({url})")
    assert not offsite, "requests to other hosts:\n" + "\n".join(offsite)


def test_no_font_host_is_named_anywhere(site_dir):
    for html in _html_files(site_dir):
        text = html.read_text(encoding="utf-8")
        assert "fonts.googleapis" not in text and "fonts.gstatic" not in text, f"{html}: a web-font host"


NOTEBOOKS = [page for page in ENGLISH_PAGES if page.endswith(".ipynb")]


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("notebook", NOTEBOOKS)
def test_notebook_pages_render_cells_and_outputs(site_dir, language, notebook):
    html = built_page(site_dir, language, notebook)
    text = html.read_text(encoding="utf-8")
    code_cells = text.count("jp-CodeCell")
    outputs = text.count("jp-OutputArea-output")
    assert len(text) > 10_000, f"{language}/{notebook}: the page is nearly empty ({len(text)} bytes)"
    assert code_cells > 0, f"{language}/{notebook}: no code cells rendered"
    assert outputs > 0, f"{language}/{notebook}: no cell outputs rendered"
    download = html.parent / notebook.rsplit("/", 1)[-1]
    assert download.is_file(), f"{language}/{notebook}: no downloadable .ipynb beside the page"


def _page_url(site_dir, html):
    return "http://site/" + html.relative_to(site_dir).as_posix()


@pytest.mark.parametrize("language", LANGUAGES)
def test_language_switcher_lands_on_the_same_page(site_dir, language):
    for page in ENGLISH_PAGES:
        html = built_page(site_dir, language, page)
        links = {
            attrs["hreflang"]: attrs["href"]
            for tag, attrs in tags(html)
            if tag == "a" and "md-select__link" in (attrs.get("class") or "")
        }
        assert set(links) == set(LANGUAGES), f"{language}/{page}: switcher offers {sorted(links)}"
        for target_language, href in links.items():
            target = urljoin(_page_url(site_dir, html), href)
            expected = _page_url(site_dir, built_page(site_dir, target_language, page))
            assert target.removesuffix("index.html") == expected.removesuffix("index.html"), (
                f"{language}/{page}: the {target_language} link goes to {target}, not {expected}"
            )


@pytest.mark.parametrize("language", LANGUAGES)
def test_html_lang_and_search_language(site_dir, language):
    import json

    for page in ENGLISH_PAGES:
        html = built_page(site_dir, language, page)
        assert ("html", {"lang": language, "class": "no-js"}) in tags(html)[:1], (
            f"{language}/{page}: <html lang> is not '{language}'"
        )
    index = json.loads((output_dir(site_dir, language) / "search" / "search_index.json").read_text("utf-8"))
    # Chinese is segmented at build time and searched with lunr's default tokenizer (mkdocs.zh.yml)
    assert index["config"]["lang"] == (["en"] if language == "zh" else [language])
    assert r"\u200b" in index["config"]["separator"] or language != "zh", "Chinese words must split on zero-width spaces"
