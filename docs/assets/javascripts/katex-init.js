// Typeset math with the KaTeX bundled in this site. document$ emits on every page load,
// Material's instant navigation included.
// - Pages: pymdownx.arithmatex wraps math in elements of class "arithmatex" with \( \) and \[ \].
// - Notebook pages: markdown cells keep Jupyter's $ and $$ delimiters.
const ARITHMATEX = [
  { left: "\\(", right: "\\)", display: false },
  { left: "\\[", right: "\\]", display: true },
];
const JUPYTER = [{ left: "$$", right: "$$", display: true }, { left: "$", right: "$", display: false }, ...ARITHMATEX];

function typeset(root, selector, delimiters) {
  for (const element of root.querySelectorAll(selector)) {
    renderMathInElement(element, { delimiters, throwOnError: false });
  }
}

document$.subscribe(({ body }) => {
  typeset(body, ".arithmatex", ARITHMATEX);
  typeset(body, ".jp-MarkdownCell .jp-RenderedMarkdown", JUPYTER);
});
