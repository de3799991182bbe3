"""What the site tests need to know about the project: languages, pages, snippet sections, built HTML."""

import re
import sys
from html.parser import HTMLParser
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
SNIPPETS = ROOT / "snippets"
sys.path.insert(0, str(ROOT / "scripts"))

from build_site import LANGUAGES, build, output_dir  # noqa: E402
from gpu_build import DATA_SETS  # noqa: E402

# The chapters: registered data sets (snippets/<name>/dataset.toml) with pages of their own
CHAPTERS = [name for name in DATA_SETS if (DOCS / "en" / name / "index.md").is_file()]

PAGE_SUFFIXES = (".md", ".ipynb")
SECTION_START = re.compile(r"--8<-- \[start:([\w-]+)\]")
SNIPPET_INCLUDE = re.compile(r'^\s*(;?)-{1,}8<-{1,}\s+"([^"]+)"', re.MULTILINE)


def pages(language):
    """Source pages of one language, as paths relative to its docs folder."""
    folder = DOCS / language
    return sorted(
        p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.suffix in PAGE_SUFFIXES
    )


def markdown_pages():
    for language in LANGUAGES:
        for page in pages(language):
            if page.endswith(".md"):
                yield language, page, (DOCS / language / page).read_text(encoding="utf-8")


def snippet_includes(markdown):
    """The 'file[:section]' targets a page includes (escaped ';--8<--' lines are examples, not includes)."""
    return [target for escape, target in SNIPPET_INCLUDE.findall(markdown) if not escape]


def snippet_sections():
    """Every named section under snippets/, as 'package/file.py:name'."""
    for path in sorted(SNIPPETS.rglob("*.py")):
        for name in SECTION_START.findall(path.read_text(encoding="utf-8")):
            yield f"{path.relative_to(SNIPPETS).as_posix()}:{name}"


def built_page(site_dir, language, page):
    """The HTML file that a source page becomes (use_directory_urls)."""
    stem = page.rsplit(".", 1)[0]
    if stem == "index" or stem.endswith("/index"):
        relative = stem[: -len("index")] + "index.html"
    else:
        relative = stem + "/index.html"
    return output_dir(site_dir, language) / relative


class TagCollector(HTMLParser):
    """Collects every start tag with its attributes."""

    def __init__(self):
        super().__init__()
        self.tags = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def tags(html_path):
    collector = TagCollector()
    collector.feed(html_path.read_text(encoding="utf-8"))
    return collector.tags
