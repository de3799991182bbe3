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
"""

import json
import re

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


def on_page_context(context, page, **kwargs):
    if page.file.src_uri.endswith(".ipynb"):
        page.meta["description"] = lead_paragraph(page.file.abs_src_path)
    return context


def on_post_page(output, page, **kwargs):
    if not page.file.src_uri.endswith(".ipynb"):
        return output
    return name_empty_heading_ids(MERMAID_LOADER.sub("", MATHJAX_BLOCK.sub("", output)))
