"""Check every link of the built site: internal links and anchors must resolve; external links are listed.

    python scripts/check_links.py [SITE_DIR]

Exits 1 and names each broken link when an internal page, file or #anchor is missing.
"""

import re
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urldefrag, urljoin, urlparse

ROOT = Path(__file__).resolve().parent.parent
# Pages are resolved as if served from site_url, so absolute links to it (the 404 page has them) work.
ORIGIN = re.search(r"^site_url:\s*(\S+)", (ROOT / "mkdocs.yml").read_text(encoding="utf-8"), re.MULTILINE)[1]
LINKING = {"a": "href", "link": "href", "img": "src", "script": "src", "source": "src", "iframe": "src"}


class PageLinks(HTMLParser):
    def __init__(self):
        super().__init__()
        self.links, self.ids = [], set()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id"):
            self.ids.add(attrs["id"])
        if tag == "a" and attrs.get("name"):
            self.ids.add(attrs["name"])
        url = attrs.get(LINKING.get(tag, ""))
        if url and not url.startswith(("data:", "mailto:", "javascript:")):
            self.links.append(url)


def parse(html_file):
    parser = PageLinks()
    parser.feed(html_file.read_text(encoding="utf-8"))
    return parser


def target_file(site_dir, url):
    path = Path(unquote(urlparse(url).path[len(urlparse(ORIGIN).path):]))
    candidate = site_dir / path
    return candidate / "index.html" if url.endswith("/") or candidate.is_dir() else candidate


def check(site_dir):
    """(broken, external): broken internal links as 'page: link (why)', and the external URLs."""
    site_dir = Path(site_dir)
    pages = {html: parse(html) for html in sorted(site_dir.rglob("*.html"))}
    broken, external = [], set()
    for html, parsed in pages.items():
        page_url = urljoin(ORIGIN, html.relative_to(site_dir).as_posix())
        for link in parsed.links:
            absolute, fragment = urldefrag(urljoin(page_url, link))
            if not absolute.startswith(ORIGIN):
                external.add(absolute + (f"#{fragment}" if fragment else ""))
                continue
            target = target_file(site_dir, absolute)
            where = f"{html.relative_to(site_dir)}: {link}"
            if not target.is_file():
                broken.append(f"{where} (no such file)")
            elif fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else parse(target).ids
                if unquote(fragment) not in ids:
                    broken.append(f"{where} (no anchor #{fragment})")
    return broken, sorted(external)


def main():
    site_dir = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "site"
    broken, external = check(site_dir)
    print(f"external links ({len(external)}):")
    for url in external:
        print(f"  {url}")
    if broken:
        print(f"broken internal links ({len(broken)}):")
        for line in broken:
            print(f"  {line}")
        sys.exit(1)
    print("internal links and anchors: all resolve")


if __name__ == "__main__":
    main()
