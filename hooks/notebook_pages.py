"""Keep notebook pages offline.

mkdocs-jupyter's template loads MathJax from a CDN (an empty <script src=""> once the URL is
blanked) and a Mermaid loader that imports from a CDN. Notebook pages here use neither: math in
notebook cells is typeset by the site's bundled KaTeX (assets/javascripts/katex-init.js), and no
notebook holds a Mermaid diagram. This hook removes both blocks from the rendered notebook pages.
"""

import re

MATHJAX_BLOCK = re.compile(r"<!-- Load mathjax -->.*?<!-- End of mathjax configuration -->", re.DOTALL)
MERMAID_LOADER = re.compile(r'<script type="module">(?:(?!</script>).)*?\.jp-Mermaid.*?</script>', re.DOTALL)


def on_post_page(output, page, **kwargs):
    if not page.file.src_uri.endswith(".ipynb"):
        return output
    return MERMAID_LOADER.sub("", MATHJAX_BLOCK.sub("", output))
