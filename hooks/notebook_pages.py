"""Keep notebook pages offline, and their table of contents working in every language.

mkdocs-jupyter's template loads MathJax from a CDN (an empty <script src=""> once the URL is
blanked) and a Mermaid loader that imports from a CDN. Notebook pages here use neither: math in
notebook cells is typeset by the site's bundled KaTeX (assets/javascripts/katex-init.js), and no
notebook holds a Mermaid diagram. This hook removes both blocks from the rendered notebook pages.

Both nbconvert and mkdocs-jupyter slugify headings to ASCII, so a heading written only in Chinese
gets an empty id, while the table of contents links to "#_1", "#_2", ... (Python-Markdown's names
for empty slugs, in order). The hook gives those headings the ids the table of contents uses.

A notebook has no front matter, so its page description (for link previews) is the paragraph
under its title, in the notebook's own language.

Each notebook page offers its .ipynb for download, an "Open in Colab" link and links to its chapter
and sources (overrides/partials/notebook-links.html renders them from page.notebook). The download
link is relative: mkdocs-jupyter's page.nb_url is absolute under site_url's path, which misses when
the site is served anywhere else (a preview, a mirror). A notebook belongs to the chapter its name
starts with ("rmsnorm-exercise" to "rmsnorm"). The notebook is written as a jupytext document,
notebooks/<lang>/<name>.md (scripts/notebooks.py executes it into the .ipynb): the source link and
"edit this page" lead there.

A .ipynb that no longer matches its source would show the old text: `mkdocs build` (make site)
fails then, naming the notebook, the cell and the command that rebuilds it. `mkdocs serve` watches
notebooks/ (mkdocs.yml) and rebuilds a changed notebook itself, keeping its recorded outputs
(scripts/notebooks.py build), so the preview shows the edit.
"""

import json
import logging
import posixpath
import re
import sys
from pathlib import Path

from mkdocs.exceptions import PluginError

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
import notebooks  # noqa: E402  (scripts/notebooks.py: the notebooks and their sources)

log = logging.getLogger("mkdocs.hooks.notebook_pages")
serving = False

MATHJAX_BLOCK = re.compile(r"<!-- Load mathjax -->.*?<!-- End of mathjax configuration -->", re.DOTALL)
MERMAID_LOADER = re.compile(r'<script type="module">(?:(?!</script>).)*?\.jp-Mermaid.*?</script>', re.DOTALL)
EMPTY_HEADING_ID = re.compile(r'(<h[1-6] id=")("[^>]*>(?:(?!</h[1-6]>).)*?<a class="anchor-link" href="#)(")', re.DOTALL)


def name_empty_heading_ids(html):
    count = iter(range(1, 1_000_000))

    def name(match):
        anchor = f"_{next(count)}"
        return f"{match[1]}{anchor}{match[2]}{anchor}{match[3]}"

    return EMPTY_HEADING_ID.sub(name, html)


MARKDOWN_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")


def lead_paragraph(notebook_path):
    cells = json.loads(open(notebook_path, encoding="utf-8").read())["cells"]
    text = "".join(next(c for c in cells if c["cell_type"] == "markdown")["source"])
    paragraphs = [p.strip() for p in text.split("\n\n") if p.strip() and not p.lstrip().startswith("#")]
    return " ".join(re.sub(r"`|\*\*|\$", "", MARKDOWN_LINK.sub(r"\1", paragraphs[0])).split())


def notebook_links(page, config, nav):
    repo_url = config["repo_url"].rstrip("/")
    branch = config["edit_uri"].strip("/").split("/")[1]
    owner_repo = repo_url.split("://", 1)[1].split("/", 1)[1]
    language = config["theme"]["language"]
    notebook_path = f"docs/{language}/{page.file.src_uri}"
    name = posixpath.basename(page.file.src_uri)
    source_path = f"notebooks/{language}/{name.removesuffix('.ipynb')}.md"
    chapter = name.split("-")[0].removesuffix(".ipynb")
    chapter_page = next(p for p in nav.pages if p.file.src_uri == f"{chapter}/index.md")
    return {
        "download": page.url + name,
        "colab": f"https://colab.research.google.com/github/{owner_repo}/blob/{branch}/{notebook_path}",
        "source": f"{repo_url}/blob/{branch}/{source_path}",
        "source_path": source_path,
        "code": f"{repo_url}/tree/{branch}/snippets/{chapter}",
        "code_path": f"snippets/{chapter}/",
        "chapter_url": chapter_page.url,
        "chapter_title": chapter_page.title,
    }


def on_page_context(context, page, config, nav, **kwargs):
    if page.file.src_uri.endswith(".ipynb"):
        page.meta["description"] = lead_paragraph(page.file.abs_src_path)
        page.notebook = notebook_links(page, config, nav)
        page.edit_url = page.notebook["source"].replace("/blob/", "/edit/", 1)
    return context


def on_post_page(output, page, **kwargs):
    if not page.file.src_uri.endswith(".ipynb"):
        return output
    return name_empty_heading_ids(MERMAID_LOADER.sub("", MATHJAX_BLOCK.sub("", output)))


def on_startup(command, **kwargs):
    global serving
    serving = command == "serve"


def on_pre_build(config, **kwargs):
    language = config["theme"]["language"]
    stale = {name: notebooks.differences(language, name) for name in notebooks.names()}
    stale = {name: problems for name, problems in stale.items() if problems}
    if stale and serving:
        notebooks.build(only=list(stale))
        log.info(f"rebuilt {', '.join(stale)} from notebooks/{language}/: commit the sources and the .ipynb files")
    elif stale:
        raise PluginError("\n".join(p for problems in stale.values() for p in problems) + "\n" + notebooks.FIX)
