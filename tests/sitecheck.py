"""What the site tests need to know about the project: languages, pages, snippet sections, built HTML.

The pages and their includes are read by scripts/check.py (make check) and scripts/build_site.py; the
tests take them from there.
"""

import json
import os
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
SNIPPETS = ROOT / "snippets"
sys.path.insert(0, str(ROOT / "scripts"))

from build_site import LANGUAGES, build, output_dir, pages  # noqa: E402
from check import chapters, markdown_pages, snippet_includes, snippet_sections, untranslated  # noqa: E402
from gpu_build import DATA_SETS, placeholder_data_sets, placeholder_summary  # noqa: E402

# The chapters: registered data sets (snippets/<name>/dataset.toml) with pages of their own
CHAPTERS = [name for name in DATA_SETS if name in chapters()]
# A chapter not measured yet holds placeholder data (scripts/gpu_build.py placeholder): the tests of
# measurements and of what they render skip it, and say so in one line at the end of the run
# (tests/conftest.py); `make check` and publishing refuse it.
PLACEHOLDER_DATA_SETS = placeholder_data_sets()
MEASURED = [name for name in DATA_SETS if name not in PLACEHOLDER_DATA_SETS]


def reader_texts(language):
    """(name, text) of everything a reader of this language reads as prose: the pages, the notebooks'
    Markdown cells (docs/<lang>/**/*.ipynb) and their sources (jupytext Markdown, notebooks/<lang>/),
    and the tables rendered under docs/data in this language (an English reader's have no language
    suffix). Names are paths from the repository's root, a notebook cell's with its index."""
    for path in sorted((DOCS / language).rglob("*.md")):
        yield path.relative_to(ROOT).as_posix(), path.read_text(encoding="utf-8")
    for path in sorted((DOCS / language).rglob("*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        for index, cell in enumerate(cells):
            if cell["cell_type"] == "markdown":
                yield f"{path.relative_to(ROOT).as_posix()} (cell {index})", "".join(cell["source"])
    suffix = ".md" if language == "en" else f".{language}.md"
    for path in sorted((DOCS / "data").rglob(f"*{suffix}")):
        if language != "en" or not any(path.name.endswith(f".{other}.md") for other in LANGUAGES):
            yield path.relative_to(ROOT).as_posix(), path.read_text(encoding="utf-8")
    for path in sorted((ROOT / "notebooks").glob(f"**/{language}/**/*.md")):
        yield path.relative_to(ROOT).as_posix(), path.read_text(encoding="utf-8")


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


# --- A throwaway copy of the repository: for the tests that write a chapter or make an author's mistake.

def copy_of_the_repository(destination):
    """The files git tracks or would track (what a fresh clone has, plus uncommitted work)."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout.split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination / name)
    return destination


def run_in(copy, *command):
    """Run a command in the copy as an author would (scripts with this Python); (exit code, stdout + stderr)."""
    command = [sys.executable if part == "python" else str(part) for part in command]
    result = subprocess.run(command, cwd=copy, capture_output=True, text=True,
                            env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    return result.returncode, result.stdout + result.stderr
