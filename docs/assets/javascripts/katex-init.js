// Typeset the math that pymdownx.arithmatex marked (class "arithmatex") with the KaTeX bundled
// in this site. document$ emits on every page load, Material's instant navigation included.
const MATH_DELIMITERS = [
  { left: "\\(", right: "\\)", display: false },
  { left: "\\[", right: "\\]", display: true },
];

document$.subscribe(({ body }) => {
  for (const element of body.querySelectorAll(".arithmatex")) {
    renderMathInElement(element, { delimiters: MATH_DELIMITERS, throwOnError: false });
  }
});
