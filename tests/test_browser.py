"""The built site in a real browser (Debian's headless Chromium driven by Playwright).

Every page in every language: it loads with no console error and no request off 127.0.0.1, its
math is typeset, its images load, its copy button copies the snippet's exact text, its language
switcher lands on the same page, and nothing overflows a 390-px phone screen. Search finds a
chapter by a word of that language, and both colour schemes render.

Needs /usr/bin/chromium (.ci/run installs Debian's package). Without it these tests skip, except
in CI (CI=true), where a missing browser is a failure.
"""

import functools
import http.server
import json
import os
import re
import shutil
import textwrap
import threading
from pathlib import Path
from urllib.parse import urljoin, urlparse

import pytest

from sitecheck import (DOCS, LANGUAGES, MEASURED, ROOT, SNIPPETS, built_page, markdown_pages, output_dir, pages,
                       snippet_includes)

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
if not Path(CHROMIUM).is_file():
    if os.environ.get("CI") == "true":
        raise RuntimeError("CI needs Debian's chromium for the browser tests (apt-get install chromium)")
    pytest.skip("no chromium on this machine (apt-get install chromium)", allow_module_level=True)

from playwright.sync_api import TimeoutError as PlaywrightTimeout, sync_playwright  # noqa: E402

PAGES = [(language, page) for language in LANGUAGES for page in pages("en")]
LAUNCH_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync",
]
SEARCHES = {"en": ("atomic lock", "layernorm/"), "zh": ("原子锁", "zh/layernorm/"), "vi": ("giảm một phần", "vi/rmsnorm/")}


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def base_url(site_dir):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(QuietHandler, directory=site_dir))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        yield browser
        browser.close()


TYPESET = ("() => document.fonts.status === 'loaded' && [...document.querySelectorAll('.arithmatex')]"
           ".every(e => e.querySelector('.katex, .katex-error'))")


class Visit:
    """A page opened in a fresh context, recording console errors and every request's host."""

    def __init__(self, browser, base_url, **context_options):
        self.context = browser.new_context(**context_options)
        self.page = self.context.new_page()
        self.errors, self.hosts = [], set()
        self.page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("request", lambda r: self.hosts.add(urlparse(r.url).hostname))
        self.base_url = base_url

    def open(self, path):
        self.page.goto(self.base_url + path, wait_until="networkidle")
        # the page as a reader sees it: fonts in, every formula typeset (KaTeX runs after load;
        # on a busy machine a measurement could otherwise catch the raw TeX, wider than the screen)
        self.page.wait_for_function(TYPESET, timeout=15000)
        return self.page

    def close(self):
        self.context.close()


def page_path(site_dir, language, page):
    html = built_page(site_dir, language, page)
    return html.relative_to(site_dir).as_posix().removesuffix("index.html")


@pytest.mark.parametrize("language,page", PAGES)
def test_page_in_the_browser(browser, base_url, site_dir, language, page):
    visit = Visit(browser, base_url)
    try:
        tab = visit.open(page_path(site_dir, language, page))
        assert tab.locator("h1").count() >= 1, f"{language}/{page}: no title"
        broken = tab.evaluate("[...document.images].filter(i => !i.complete || i.naturalWidth === 0).map(i => i.src)")
        assert not broken, f"{language}/{page}: images that did not load: {broken}"
        if tab.locator(".arithmatex").count():
            assert tab.locator(".arithmatex .katex").count() == tab.locator(".arithmatex").count(), (
                f"{language}/{page}: math left untypeset"
            )
            assert tab.locator(".katex-error").count() == 0, f"{language}/{page}: KaTeX could not typeset some math"
        assert not visit.errors, f"{language}/{page}: console errors: {visit.errors}"
        assert visit.hosts <= {"127.0.0.1"}, f"{language}/{page}: requests left 127.0.0.1: {visit.hosts}"
    finally:
        visit.close()


@pytest.mark.parametrize("language,page", PAGES)
def test_language_switcher(browser, base_url, site_dir, language, page):
    visit = Visit(browser, base_url)
    try:
        tab = visit.open(page_path(site_dir, language, page))
        for target in LANGUAGES:
            link = tab.locator(f'.md-select__link[hreflang="{target}"]')
            href = link.get_attribute("href")
            tab.goto(tab.url.split("#")[0], wait_until="domcontentloaded")
            tab.locator(".md-header__option .md-select").hover()
            tab.locator(f'.md-select__link[hreflang="{target}"]').click()
            tab.wait_for_load_state("networkidle")
            expected = base_url + page_path(site_dir, target, page)
            assert tab.url.split("#")[0] == expected, f"{language}/{page}: the {target} link ({href}) led to {tab.url}"
            assert tab.locator("html").get_attribute("lang") == target
            tab.goto(base_url + page_path(site_dir, language, page), wait_until="domcontentloaded")
    finally:
        visit.close()


def section_text(target):
    """What a reader copies from a listing: the section's lines, dedented."""
    path, _, name = target.partition(":")
    text = (SNIPPETS / path).read_text(encoding="utf-8")
    body = text.split(f"[start:{name}]", 1)[1].split("\n", 1)[1]
    body = body.split(f"[end:{name}]", 1)[0].rsplit("\n", 1)[0]
    return textwrap.dedent(body).rstrip()


def first_plain_listing(markdown):
    """The first included section without code-annotation markers (those are stripped on copy)."""
    for target in snippet_includes(markdown):
        if ":" in target and (SNIPPETS / target.partition(":")[0]).is_file():
            if not re.search(r"#\s*\(\d+\)!?", section_text(target)):
                return target
    return None


LISTINGS = [(language, page, first_plain_listing(md)) for language, page, md in markdown_pages()
            if first_plain_listing(md)]


@pytest.mark.parametrize("language,page,target", LISTINGS)
def test_copy_button_copies_the_snippet(browser, base_url, site_dir, language, page, target):
    visit = Visit(browser, base_url, permissions=["clipboard-read", "clipboard-write"])
    try:
        tab = visit.open(page_path(site_dir, language, page))
        expected = section_text(target)
        first_line = expected.splitlines()[0].strip()
        blocks = tab.locator("div.highlight")
        index = next(i for i in range(blocks.count()) if first_line in blocks.nth(i).inner_text())
        block = blocks.nth(index)
        block.hover()
        block.locator('button.md-code__button[data-md-type="copy"]').click()
        copied = tab.evaluate("navigator.clipboard.readText()")
        assert copied == expected, f"{language}/{page}: the copy button of {target} copied other text"
    finally:
        visit.close()


@pytest.mark.parametrize("language,page", PAGES)
def test_nothing_overflows_a_phone_screen(browser, base_url, site_dir, language, page):
    visit = Visit(browser, base_url, viewport={"width": 390, "height": 844}, is_mobile=True)
    try:
        tab = visit.open(page_path(site_dir, language, page))
        try:  # a layout still settling narrows within moments; an overflow stays
            tab.wait_for_function("document.documentElement.scrollWidth <= 390", timeout=3000)
        except PlaywrightTimeout:
            pass
        width = tab.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, f"{language}/{page}: the page is {width} px wide on a 390-px screen"
    finally:
        visit.close()


@pytest.mark.parametrize("language", LANGUAGES)
def test_search_finds_a_chapter_by_a_word_of_its_language(browser, base_url, site_dir, language):
    query, expected = SEARCHES[language]
    visit = Visit(browser, base_url)
    try:
        tab = visit.open(page_path(site_dir, language, "index.md"))
        search = tab.locator("input.md-search__input")
        search.click()
        search.fill(query)
        search.press("End")  # Material searches on keyup; typed CJK text arrives without key events
        results = tab.locator(".md-search-result__item a")
        results.first.wait_for(timeout=15000)
        hrefs = [results.nth(i).get_attribute("href") for i in range(results.count())]
        assert any(expected in (href or "") for href in hrefs), f"{language}: '{query}' found {hrefs}"
    finally:
        visit.close()


@pytest.mark.parametrize("scheme", ["default", "slate"])
@pytest.mark.parametrize("language", LANGUAGES)
def test_light_and_dark_themes_render(browser, base_url, site_dir, tmp_path, language, scheme):
    visit = Visit(browser, base_url, color_scheme="dark" if scheme == "slate" else "light")
    try:
        tab = visit.open(page_path(site_dir, language, "layernorm/index.md"))
        assert tab.locator("body").get_attribute("data-md-color-scheme") == scheme
        shot = tab.screenshot(path=str(tmp_path / f"{language}-{scheme}.png"), full_page=False)
        assert len(shot) > 10_000, "the screenshot is nearly empty"
    finally:
        visit.close()


# --- The reader's path: what a reader meets on the chapters and notebooks, at a desktop's and a phone's width.

WIDTHS = {"desktop": {"width": 1280, "height": 900}, "phone": {"width": 390, "height": 844}}
NOTEBOOKS = [page for page in pages("en") if page.endswith(".ipynb")]
CHAPTER_PAGES = [page for page in pages("en") if page.endswith(".md") and "/" in page]
FIGURE_NUMBER = {"en": "Figure {}.", "zh": "图 {}", "vi": "Hình {}."}
SMALLEST_LEGIBLE_PX = 11  # issue 38: the smallest label of every figure, as a phone shows it


def visit_at(browser, base_url, width, **options):
    return Visit(browser, base_url, viewport=WIDTHS[width], is_mobile=width == "phone", **options)


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("language,notebook", [(lang, nb) for lang in LANGUAGES for nb in NOTEBOOKS])
def test_notebook_page_offers_its_notebook_colab_and_chapter(browser, base_url, site_dir, language, notebook, width):
    visit = visit_at(browser, base_url, width, accept_downloads=True)
    try:
        tab = visit.open(page_path(site_dir, language, notebook))
        button = tab.locator(".nk-notebook-links a[download]")
        assert button.is_visible(), f"{language}/{notebook}: no download button"
        box = button.bounding_box()
        assert box["x"] + box["width"] <= WIDTHS[width]["width"], f"{language}/{notebook}: download button off-screen"
        with tab.expect_download() as download:
            button.click()
        saved = json.loads(Path(download.value.path()).read_text(encoding="utf-8"))
        source = json.loads((DOCS / language / notebook).read_text(encoding="utf-8"))
        assert saved["nbformat"] == 4 and saved["cells"] == source["cells"], (
            f"{language}/{notebook}: the download is not this language's notebook"
        )
        colab = tab.locator(".nk-notebook-links a", has_text="Colab").get_attribute("href")
        assert re.fullmatch(rf"https://colab\.research\.google\.com/github/[\w.-]+/[\w.-]+/blob/\w+/docs/{language}/"
                            rf"{re.escape(notebook)}", colab), f"{language}/{notebook}: Colab link {colab}"
        chapter = tab.locator(".nk-notebook-links p a").first
        chapter.click()
        tab.wait_for_load_state("domcontentloaded")
        expected = base_url + page_path(site_dir, language, f"{notebook.split('/')[-1].split('-')[0].split('.')[0]}/index.md")
        assert tab.url.split("#")[0] == expected, f"{language}/{notebook}: the chapter link led to {tab.url}"
    finally:
        visit.close()


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_glossary_reads_on_a_phone(browser, base_url, site_dir, language):
    visit = visit_at(browser, base_url, "phone")
    try:
        tab = visit.open(page_path(site_dir, language, "glossary.md"))
        seen = tab.evaluate("""() => ({
          sizes: [...document.querySelectorAll("article dd")].map(d => parseFloat(getComputedStyle(d).fontSize)),
          anchors: [...document.querySelectorAll("article dt span[id]")].map(s => s.id)})""")
        assert seen["sizes"] and min(seen["sizes"]) >= SMALLEST_BODY_PX, (
            f"{language}/glossary.md: definitions as small as {min(seen['sizes'] or [0])} px on a phone")
        assert len(seen["anchors"]) == len(set(seen["anchors"])) == len(seen["sizes"]), (
            f"{language}/glossary.md: not one anchor per term")
    finally:
        visit.close()


SMALLEST_BODY_PX = 14


# JavaScript for the page readers below: the text of a code element that a box (a copy button) covers.
COVERED_TEXT = """(box, code) => {
  const b = box.getBoundingClientRect(), covered = [];
  const walker = document.createTreeWalker(code, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (!node.textContent.trim()) continue;
    const range = document.createRange();
    range.selectNodeContents(node);
    for (const r of range.getClientRects()) {
      if (r.right > b.left && r.left < b.right && r.bottom > b.top && r.top < b.bottom) {
        covered.push(node.textContent.trim().slice(0, 40));
      }
    }
  }
  return covered;
}"""


# A notebook page's code cells: how wide the code is against the article, and the text its copy
# button covers.
READ_NOTEBOOK = """() => {
  const coveredText = """ + COVERED_TEXT + """;
  const article = document.querySelector("article").getBoundingClientRect().width;
  return [...document.querySelectorAll(".jp-CodeCell .jp-InputArea-editor")].map(editor => ({
    share: editor.getBoundingClientRect().width / article,
    covered: coveredText(editor.querySelector(".zeroclipboard-container"), editor.querySelector("pre"))}));
}"""
SMALLEST_CODE_SHARE = 0.85  # of the article's width, for a notebook's code on a phone


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("language,notebook", [(lang, nb) for lang in LANGUAGES for nb in NOTEBOOKS])
def test_notebook_code_gets_the_width_and_its_copy_button_covers_none(browser, base_url, site_dir, language,
                                                                      notebook, width):
    visit = visit_at(browser, base_url, width)
    try:
        cells = visit.open(page_path(site_dir, language, notebook)).evaluate(READ_NOTEBOOK)
        assert cells, f"{language}/{notebook}: no code cells found"
        for number, cell in enumerate(cells, 1):
            assert not cell["covered"], f"{language}/{notebook} at {width}: cell {number}'s copy button covers {cell['covered']}"
            if width == "phone":  # the In [n]: prompts give their width to the code
                assert cell["share"] >= SMALLEST_CODE_SHARE, (
                    f"{language}/{notebook}: cell {number}'s code is {cell['share']:.0%} of the page's width on a phone")
    finally:
        visit.close()


# Reads the open page: tables, figures, listings and their copy buttons, in one pass.
READ_PAGE = """() => {
  const article = document.querySelector("article");
  const visible = e => e.getClientRects().length > 0 && getComputedStyle(e).visibility !== "hidden";
  const figures = [...article.querySelectorAll("figure")].map(f => {
    const img = f.querySelector("img"), number = f.querySelector("figcaption .caption-number");
    return {src: img.getAttribute("src"), width: img.getBoundingClientRect().width,
            zoomable: !!img.closest("a.glightbox"), number: number && visible(number) ? number.textContent : null};
  });
  const coveredText = """ + COVERED_TEXT + """;
  const overlaps = [];
  for (const block of [...article.querySelectorAll("div.highlight")].filter(visible)) {
    const button = block.querySelector(".md-code__nav");
    if (button) overlaps.push(...coveredText(button, block.querySelector("code")));
  }
  const code = [...article.querySelectorAll("pre > code")].filter(visible).filter(c => c.scrollWidth > c.clientWidth + 1)
    .map(c => c.closest(".highlight").querySelector(".filename")?.textContent || c.textContent.slice(0, 40));
  // display math wider than its box: it must scroll, with the edge shadow that says so
  const math = [...article.querySelectorAll("div.arithmatex")].filter(visible).filter(m => m.scrollWidth > m.clientWidth + 1)
    .filter(m => !["auto", "scroll"].includes(getComputedStyle(m).overflowX)
                 || !getComputedStyle(m).backgroundImage.includes("gradient"))
    .map(m => m.textContent.trim().slice(0, 40));
  const contents = document.querySelector(".nk-page-contents");
  const images = article.querySelectorAll("img").length;
  return {figures, images, overlaps, code, math,
          contents: contents && visible(contents) ? contents.querySelectorAll("a").length : 0,
          sidebarToc: visible(document.querySelector(".md-sidebar--secondary")),
          h2: article.querySelectorAll("h2").length};
}"""


def smallest_font(svg_text):
    """(smallest font size, viewBox width) of an SVG, in its own units; None if it has no text."""
    sizes = [float(s) for s in re.findall(r"font-size[=:]\s*\"?([0-9.]+)", svg_text)]
    view_box = re.search(r'viewBox="[-0-9.]+ [-0-9.]+ ([0-9.]+)', svg_text)
    return (min(sizes) if sizes else None), float(view_box[1])


def figure_file(site_dir, tab_url, base_url, src):
    return (site_dir / urlparse(urljoin(tab_url, src)).path.removeprefix(urlparse(base_url).path)).resolve()


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("language,page", [(lang, page) for lang in LANGUAGES for page in CHAPTER_PAGES])
def test_a_chapter_reads_well_on_screen(browser, base_url, site_dir, language, page, width):
    """Figures numbered, with labels of at least SMALLEST_LEGIBLE_PX and opening full-screen on a tap, copy buttons
    over no code, the table of contents reachable, listings within their box (tables: below)."""
    visit = visit_at(browser, base_url, width)
    try:
        tab = visit.open(page_path(site_dir, language, page))
        seen = tab.evaluate(READ_PAGE)
        assert seen["images"] == len(seen["figures"]), f"{language}/{page}: an image outside a captioned figure"
        for number, figure in enumerate(seen["figures"], 1):
            assert figure["number"] == FIGURE_NUMBER[language].format(number), (
                f"{language}/{page}: figure {number} ({figure['src']}) is numbered {figure['number']}"
            )
            font, view_width = smallest_font(figure_file(site_dir, tab.url, base_url, figure["src"]).read_text(
                encoding="utf-8"))
            assert font, f"{language}/{page}: {figure['src']} draws its labels as paths; their size cannot be checked"
            on_screen = font * figure["width"] / view_width
            assert on_screen >= SMALLEST_LEGIBLE_PX, (
                f"{language}/{page} at {width}: the smallest labels of {figure['src']} are {on_screen:.1f} px"
            )
            assert figure["zoomable"], f"{language}/{page}: {figure['src']} does not open full-screen on a tap"
        assert not seen["overlaps"], f"{language}/{page} at {width}: a copy button covers {seen['overlaps']}"
        assert not seen["math"], f"{language}/{page} at {width}: equations cut off with no scroll: {seen['math']}"
        if seen["h2"] > 2:
            reachable = seen["sidebarToc"] if width == "desktop" else seen["contents"] == seen["h2"]
            assert reachable, f"{language}/{page} at {width}: no table of contents on screen"
            # one table of contents per width: the page's own box only where the sidebar is hidden
            assert width != "desktop" or not seen["contents"], (
                f"{language}/{page} at {width}: the page's contents box shows beside the sidebar's")
        if width == "desktop":
            assert not seen["code"], f"{language}/{page}: listings wider than their box at 1280 px: {seen['code']}"
    finally:
        visit.close()


# Reads every table of the open page: the words and identifiers its cells break across lines, and
# whether its last column (where the verdicts are) is on screen, or one swipe away in a scroll box
# that shows it: an edge shadow whose cover is the page's own background (in either scheme).
READ_TABLES = """() => {
  const visible = e => e.getClientRects().length > 0 && getComputedStyle(e).visibility !== "hidden";
  const screen = document.documentElement.clientWidth;
  const page = getComputedStyle(document.body).backgroundColor;
  return [...document.querySelectorAll("article table")].filter(visible).map(table => {
    // Latin-script words and identifiers (English, Vietnamese, code); Chinese may break anywhere
    const broken = [];
    const walker = document.createTreeWalker(table, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const word of node.textContent.matchAll(/[\\p{Script=Latin}\\p{N}_.]{2,}/gu)) {
        const range = document.createRange();
        range.setStart(node, word.index);
        range.setEnd(node, word.index + word[0].length);
        const lines = new Set([...range.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.bottom)));
        if (lines.size > 1) broken.push(word[0]);
      }
    }
    const last = table.rows[0].lastElementChild, box = table.closest(".md-typeset__scrollwrap");
    const seen = {header: last.textContent.trim(), broken, onScreen: last.getBoundingClientRect().right <= screen + 1};
    if (!seen.onScreen && box) {
      const style = getComputedStyle(box);
      seen.scrolls = ["auto", "scroll"].includes(style.overflowX) && box.scrollWidth > box.clientWidth;
      seen.cue = style.backgroundImage.startsWith(`linear-gradient(to right, ${page}`)
        && style.backgroundImage.includes("radial-gradient");
      box.scrollLeft = box.scrollWidth;
      const end = last.getBoundingClientRect();
      seen.reached = end.right <= screen + 1 && end.left >= 0;
      // the key column (shape, width, provider) stays in the box while the rest scrolls under it;
      // one wider than half the box (a profiler span's name) cannot, and scrolls with the rest
      const key = table.rows[0].firstElementChild.getBoundingClientRect();
      seen.keyInView = key.left >= box.getBoundingClientRect().left - 1 || key.width > box.clientWidth / 2;
      box.scrollLeft = 0;
    }
    return seen;
  });
}"""
# pages with a table typed in, or one rendered from measurements (placeholder data renders none: skipped)
TABLE_PAGES = [page for language, page, markdown in markdown_pages() if language == "en"
               and (re.search(r'^\s*\|?\s*:?-{3,}\s*\|', markdown, re.MULTILINE)
                    or any(re.search(r'^\s*-{1,}8<-{1,}\s+"' + re.escape(name) + r'/[^"]+\.md"', markdown, re.MULTILINE)
                           for name in MEASURED))]


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("language,page", [(lang, page) for lang in LANGUAGES for page in TABLE_PAGES])
def test_tables_keep_words_whole_and_their_last_column_in_reach(browser, base_url, site_dir, language, page,
                                                                width, scheme):
    """No word or identifier broken mid-word in any table; the last column on screen, or the table
    scrolling in its box with an edge shadow drawn in the page's own colours, the column at its end
    and the key column still in view."""
    visit = visit_at(browser, base_url, width, color_scheme=scheme)
    try:
        tab = visit.open(page_path(site_dir, language, page))
        # Material's script puts each table in its scroll box once the page has loaded
        tab.wait_for_function("[...document.querySelectorAll('article table')]"
                              ".every(t => t.closest('.md-typeset__scrollwrap'))", timeout=10000)
        tables = tab.evaluate(READ_TABLES)
        assert tables, f"{language}/{page}: no table found"
        for number, table in enumerate(tables, 1):
            where = f"{language}/{page} at {width}, {scheme}: table {number} ('{table['header']}')"
            assert not table["broken"], f"{where}: words broken mid-word: {sorted(set(table['broken']))}"
            if not table["onScreen"]:
                assert table.get("scrolls"), f"{where}: the last column is off-screen and the table does not scroll"
                assert table["cue"], f"{where}: the table scrolls with no edge shadow in the page's colours"
                assert table["reached"], f"{where}: scrolled to its end, the last column is still off-screen"
                assert table["keyInView"], f"{where}: scrolled to its end, the key column is out of view"
    finally:
        visit.close()


@pytest.mark.parametrize("language", LANGUAGES)
def test_tapping_a_figure_opens_it_full_screen(browser, base_url, site_dir, language):
    visit = Visit(browser, base_url, viewport=WIDTHS["phone"], is_mobile=True, has_touch=True)
    try:
        tab = visit.open(page_path(site_dir, language, "layernorm/index.md"))
        name = "layernorm-lock-timeline" + ("" if language == "en" else f".{language}") + ".svg"
        figure = tab.locator(f"a.glightbox:has(img[src$='{name}'])")
        figure.scroll_into_view_if_needed()
        figure.tap()
        image = tab.locator(".gslide.current .gslide-image img")
        image.wait_for(state="visible", timeout=5000)
        assert image.get_attribute("src").endswith(name)
    finally:
        visit.close()


# A reading page (home, on-ramp, chapters, going-faster) is read start to end on a phone: it fits in
# READING_SCREENS screens of 390 x 844 px and READING_TABLES tables; full data live on the reference
# pages it links. A going-faster page explains its ideas with at least STORY_FIGURES figures.
READING_PAGES = [page for page in pages("en") if page.endswith(".md") and (
    page in ("index.md", "triton.md") or page.endswith(("/index.md", "/faster.md")))]
READING_SCREENS, READING_TABLES, STORY_FIGURES = 35, 6, 3
MEASURE_READING = """() => {
  const article = document.querySelector("article");
  return {height: document.documentElement.scrollHeight, tables: article.querySelectorAll("table").length,
          figures: article.querySelectorAll("figure img").length};
}"""


@pytest.mark.parametrize("language,page", [(lang, page) for lang in LANGUAGES for page in READING_PAGES])
def test_a_reading_page_fits_a_phone(browser, base_url, site_dir, language, page):
    visit = visit_at(browser, base_url, "phone")
    try:
        tab = visit.open(page_path(site_dir, language, page))
        seen = tab.evaluate(MEASURE_READING)
        screens = seen["height"] / WIDTHS["phone"]["height"]
        where = f"docs/{language}/{page}"
        assert screens <= READING_SCREENS, (
            f"{where} is {screens:.1f} phone screens long (at most {READING_SCREENS}): move tables and details "
            f"to the chapter's reference page and link them")
        assert seen["tables"] <= READING_TABLES, (
            f"{where} has {seen['tables']} tables (at most {READING_TABLES}): move the others to the reference page")
        if page.endswith("/faster.md"):
            assert seen["figures"] >= STORY_FIGURES, (
                f"{where} has {seen['figures']} figures (at least {STORY_FIGURES}): one diagram for each idea")
    finally:
        visit.close()


# What a notebook printed keeps its lines: an output line is never wrapped (inside a number, as
# "1.3 × 10⁻" / "⁶" was on a phone); a line wider than the screen scrolls in its own box.
READ_OUTPUTS = """() => [...document.querySelectorAll(".jp-OutputArea-output pre")].map(pre => {
  const style = getComputedStyle(pre);
  const lines = pre.textContent.replace(/\\n$/, "").split("\\n").length;
  const lineHeight = parseFloat(style.lineHeight) || 1.2 * parseFloat(style.fontSize);
  return {text: pre.textContent.slice(0, 60), lines, shown: Math.round(pre.getBoundingClientRect().height / lineHeight),
          scrolls: ["auto", "scroll"].includes(style.overflowX)};
})"""


@pytest.mark.parametrize("language,notebook", [(lang, nb) for lang in LANGUAGES for nb in NOTEBOOKS])
def test_notebook_outputs_keep_their_lines_on_a_phone(browser, base_url, site_dir, language, notebook):
    visit = visit_at(browser, base_url, "phone")
    try:
        tab = visit.open(page_path(site_dir, language, notebook))
        outputs = tab.evaluate(READ_OUTPUTS)
        assert outputs, f"{language}/{notebook}: no printed output found"
        for output in outputs:
            assert output["shown"] <= output["lines"], (
                f"{language}/{notebook}: an output of {output['lines']} lines shows as {output['shown']} on a phone "
                f"(wrapped): {output['text']!r}")
            assert output["scrolls"], f"{language}/{notebook}: a printed output does not scroll: {output['text']!r}"
    finally:
        visit.close()
