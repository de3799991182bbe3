"""Start a chapter from the template: a copy of templates/chapter/ under the chapter's own name.

    .venv/bin/python scripts/new_chapter.py <chapter>

writes snippets/<chapter>/ (the kernel, its tests, benchmark.py, report.py with its synthetic test,
dataset.toml) and docs/en|zh|vi/<chapter>/index.md, with the template's name, scalenorm, replaced by
<chapter> in every path and file. Nothing else is touched: the navigation and home-page lines are
the author's (the authoring guide, "Add a chapter", says what to write).
"""

import keyword
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = ROOT / "templates" / "chapter"
NAME = "scalenorm"  # the template chapter's package and data set


def problem(chapter):
    """Why a name cannot be a new chapter's, as a sentence with the fix ("" when it can)."""
    if not re.fullmatch(r"[a-z][a-z0-9_]*", chapter) or keyword.iskeyword(chapter):
        return (f"'{chapter}' cannot name a chapter: the name is a Python package's, lower-case letters, digits "
                "and _ (like rmsnorm); run the command again with such a name")
    taken = [path for path in (ROOT / "snippets" / chapter, *(ROOT / "docs" / lang / chapter for lang in ("en", "zh", "vi")))
             if path.exists()]
    if taken:
        return (f"{taken[0].relative_to(ROOT).as_posix()}/ already exists, so nothing was copied: pick another name, "
                "or remove it first")
    return ""


def copy(chapter):
    written = []
    for source in sorted(TEMPLATE.rglob("*")):
        if not source.is_file() or "__pycache__" in source.parts:
            continue
        target = ROOT / source.relative_to(TEMPLATE).as_posix().replace(NAME, chapter)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(source.read_text(encoding="utf-8").replace(NAME, chapter), encoding="utf-8")
        written.append(target.relative_to(ROOT).as_posix())
    return written


def main(argv=None):
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        sys.exit("name the new chapter: .venv/bin/python scripts/new_chapter.py <chapter> (lower case, like rmsnorm)")
    chapter = args[0]
    if problem(chapter):
        sys.exit(problem(chapter))
    for path in copy(chapter):
        print(f"   wrote {path}")
    print(f"== {chapter}: the template chapter, copied. Next (the authoring guide, 'Add a chapter'): a nav line in "
          f"mkdocs.yml, mkdocs.zh.yml and mkdocs.vi.yml and a line on each home page, then "
          f"`.venv/bin/python scripts/gpu_build.py placeholder --only {chapter}` and `make serve`")


if __name__ == "__main__":
    main()
