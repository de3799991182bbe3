"""What a reader needs around the text of every page: titled listings, readable headings, reading time.

- Listings: a fenced block that holds nothing but one `--8<-- "file"` include is titled with the
  file's path in the repository (pymdownx.highlight's `title`), and the title links to exactly the
  included lines on the repository host (repo_url). pymdownx.snippets leaves no trace of the file in
  the HTML, so the title has to be added to the Markdown before it is converted.
- Headings with math: KaTeX typesets them in the page, but the table of contents, the page title and
  the search index have no typesetter and would show "\\(r^3\\)". They get plain text ("r³") here.
- Figures: each caption starts with its number in the page's language ("Figure 2.", extra.labels),
  written into the HTML so that it is read aloud, found by search and copied with the caption.
- Last update dates on a shallow clone: mkdocs-git-revision-date-localized-plugin falls back to the
  build date (fallback_to_build_date) but still logs a warning on a shallow GitHub Actions clone,
  which `mkdocs build --strict` turns into a failure. The plugin has no option for it, so that one
  warning is logged as information here: a shallow clone must never break the build.
- Last update dates' tooltips: the plugin writes the date under a page in the configured format
  (mkdocs.vi.yml: "1 tháng 12 năm 2026") but its tooltip always in Babel's long form ("1 tháng 12,
  2026 22:40:10 UTC"), with no option for it; the tooltip here takes the date as shown, then the time.
- Reading time: `{{ page.reading_minutes }}` becomes the page's reading time in minutes, counted
  from its prose (words, or characters for Chinese), so it follows the text when the text changes.
- Includes an author got wrong fail the build with a sentence that names the page, the file or
  section that is missing, what exists instead and the fix (include_problems, which `make check`
  runs on every page too): pymdownx.snippets would stop on the first, with a traceback. So does a
  listing with a line wider than the code box (width_problems: file:line (N columns)).
"""

import difflib
import json
import logging
import math
import re
import sys
from pathlib import Path

from mkdocs.exceptions import PluginError

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
from gpu_build import PLACEHOLDER_COMMAND  # noqa: E402  (scripts/gpu_build.py)

# where pymdownx.snippets looks for an included file (its base_path in mkdocs.yml), in that order
INCLUDE_ROOTS = ("snippets", "docs/data")

LISTING = re.compile(
    r'^(?P<indent>[ \t]*)(?P<fence>`{3,})(?P<lang>[\w+-]+)[ \t]*\n'
    r'(?P=indent)-{1,}8<-{1,}[ \t]+"(?P<target>[^"]+)"[ \t]*\n'
    r'(?P=indent)(?P=fence)[ \t]*$',
    re.MULTILINE,
)
FILENAME = re.compile(r'<span class="filename">([^<]+)</span>')
CAPTION = re.compile(r"<figcaption>\s*<p>")


def repository(config):
    """(repository URL, branch) from repo_url and edit_uri ("edit/<branch>/docs/")."""
    return config["repo_url"].rstrip("/"), config["edit_uri"].strip("/").split("/")[1]


INCLUDE = re.compile(r'^[ \t]*(;?)-{1,}8<-{1,}[ \t]+"([^"]+)"', re.MULTILINE)
SECTION_START = re.compile(r"--8<-- \[start:([\w-]+)\]")
LOCALIZED = re.compile(r"\.[a-z]{2}\.\w+$")  # table.zh.md: the page includes table.md
RENDERED = (".md", ".txt")  # what a data set's report writes under docs/data for pages to include
# where a file under docs/data comes from, for the sentence that says how to write it
DATA_FIX = ("the GPU build renders a data set's files (`.venv/bin/python scripts/gpu_build.py render --only {name}`); "
            f"without a GPU, `{PLACEHOLDER_COMMAND}` writes a placeholder "
            "for every file that snippets/{name}/report.py writes")


def includes(markdown):
    """(escaped, 'file[:section]') for every include line; an escaped ';--8<--' line shows as text."""
    return [(escape == ";", target) for escape, target in INCLUDE.findall(markdown)]


def included_file(name):
    """The included file under the first root that has it, or None."""
    return next((ROOT / root / name for root in INCLUDE_ROOTS if (ROOT / root / name).is_file()), None)


def sections(path):
    return SECTION_START.findall(path.read_text(encoding="utf-8"))


def missing_file(where, name):
    """A sentence for an include whose file exists under no root: what is there instead, and the fix."""
    folder, _, file = name.rpartition("/")
    suffix = Path(file).suffix
    candidates = [p for root in INCLUDE_ROOTS for p in (ROOT / root / folder).glob(f"*{suffix}")] if folder else []
    present = sorted(p.relative_to(ROOT).as_posix() for p in candidates if p.is_file() and not LOCALIZED.search(p.name))
    close = difflib.get_close_matches(file, [Path(p).name for p in present], n=1)
    if close:
        instead = f"did you mean {folder}/{close[0]}?"
    elif present:
        instead = f"the {suffix} files there: {', '.join(present)}"
    elif folder:
        instead = f"no {suffix} file under snippets/{folder}/ or docs/data/{folder}/"
    else:
        instead = "an include names its package or data set first: '<folder>/<file>'"
    rendered = suffix in RENDERED and (ROOT / "snippets" / folder / "dataset.toml").is_file()
    fix = DATA_FIX.format(name=folder) if rendered else "fix the name in the page"
    return f"{where}: includes '{name}', which is in neither snippets/ nor docs/data/ ({instead}); {fix}"


def include_problems(markdown, where):
    """Every include of a page that would fail or show as text, as a sentence with its fix."""
    problems = []
    for escaped, target in includes(markdown):
        name, _, section = target.partition(":")
        path = included_file(name)
        if escaped:
            if path:  # the authoring guide escapes its examples, whose files do not exist
                problems.append(f"{where}: ';--8<-- \"{target}\"' starts with ';', which shows the line as text "
                                f"instead of including {name}: write it as --8<-- \"{target}\"")
        elif path is None:
            problems.append(missing_file(where, name))
        elif section and section not in sections(path):
            marked = ", ".join(sections(path)) or "none"
            problems.append(f"{where}: includes section '{section}' of {path.relative_to(ROOT)}, which marks no such "
                            f"section (it marks: {marked}): put the lines between '# --8<-- [start:{section}]' and "
                            f"'# --8<-- [end:{section}]' in {path.relative_to(ROOT)}, or include one of those")
    return problems


def source_of(target):
    """The repository path of an included file, and the 1-based line range of a named section."""
    name, _, section = target.partition(":")
    path = included_file(name).relative_to(ROOT).as_posix()
    if not section:
        return path, None
    lines = (ROOT / path).read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if f"[start:{section}]" in line) + 2
    end = next(i for i, line in enumerate(lines) if f"[end:{section}]" in line)
    return path, (start, end)


# The widest line a listing may have (black's 88): the code box is 688 px wide at 1280 px (Material's
# grid with both sidebars), and docs/assets/stylesheets/extra.css sets the code font so that 88
# columns fit there; tests/test_browser.py checks on screen that the listings fit.
MAX_LISTING_COLUMNS = 88


def wide_lines(target):
    """(line number in its file, columns) of each line of an included section wider than the code box,
    measured as the page shows it (the section dedented)."""
    path, lines = source_of(target)
    body = (ROOT / path).read_text(encoding="utf-8").splitlines()[lines[0] - 1:lines[1]]
    indent = min((len(line) - len(line.lstrip()) for line in body if line.strip()), default=0)
    return [(lines[0] + i, len(line) - indent) for i, line in enumerate(body) if len(line) - indent > MAX_LISTING_COLUMNS]


def width_problems(markdown):
    """A sentence for each included section with lines wider than the code box: file:line (N columns)."""
    problems = []
    for target in sorted({m["target"] for m in LISTING.finditer(markdown)}):
        name, _, section = target.partition(":")
        path = included_file(name)
        if not (section and path and section in sections(path)):
            continue  # not a section, or one that include_problems() reports
        wide = wide_lines(target)
        if wide:
            where = ", ".join(f"{path.relative_to(ROOT).as_posix()}:{line} ({columns} columns)" for line, columns in wide)
            lines = "1 line" if len(wide) == 1 else f"{len(wide)} lines"
            problems.append(f"{where}: section '{section}' has {lines} wider than the code box's "
                            f"{MAX_LISTING_COLUMNS} columns, which a reader would see cut off: wrap "
                            f"{'it' if len(wide) == 1 else 'them'} in the source")
    return problems


def title_listings(markdown, page, config):
    url, branch = repository(config)
    links = []

    def titled(match):
        path, lines = source_of(match["target"])
        anchor = f"#L{lines[0]}-L{lines[1]}" if lines else ""
        links.append((path, f"{url}/blob/{branch}/{path}{anchor}"))
        return (f'{match["indent"]}{match["fence"]}{match["lang"]} title="{path}"\n'
                f'{match["indent"]}--8<-- "{match["target"]}"\n{match["indent"]}{match["fence"]}')

    markdown = LISTING.sub(titled, markdown)
    page.listing_links = links
    return markdown


def link_listing_titles(html, page):
    """Link the titles added by title_listings, in order; a title written by hand stays as it is."""
    links = list(getattr(page, "listing_links", []))

    def linked(match):
        if not links or links[0][0] != match[1]:
            return match[0]
        return f'<span class="filename"><a href="{links.pop(0)[1]}">{match[1]}</a></span>'

    return FILENAME.sub(linked, html)


# Enough TeX for headings and search text: the symbols these pages use, super- and subscripts.
TEX_SYMBOLS = {
    r"\gamma": "γ", r"\varepsilon": "ε", r"\epsilon": "ε", r"\mu": "μ", r"\sigma": "σ", r"\partial": "∂",
    r"\sum": "Σ", r"\cdot": "·", r"\times": "×", r"\odot": "⊙", r"\le": "≤", r"\ge": "≥", r"\approx": "≈",
    r"\neq": "≠", r"\ne": "≠", r"\lceil": "⌈", r"\rceil": "⌉", r"\ldots": "…", r"\dots": "…", r"\qquad": " ",
    r"\quad": " ", r"\,": " ", r"\;": " ", r"\!": "", r"\sqrt": "√", r"\hat": "", r"\mathrm": "",
    r"\operatorname": "", r"\text": "", r"\left": "", r"\right": "", r"\frac": "",
}
SUPERSCRIPT = str.maketrans("0123456789+-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻")
MATH = re.compile(r"\\\((.+?)\\\)|\\\[(.+?)\\\]", re.DOTALL)


def tex_to_text(tex):
    for command in sorted(TEX_SYMBOLS, key=len, reverse=True):
        tex = re.sub(re.escape(command) + r"(?![A-Za-z])", TEX_SYMBOLS[command], tex)
    tex = re.sub(r"\^\{([0-9+-]+)\}|\^([0-9])", lambda m: (m[1] or m[2]).translate(SUPERSCRIPT), tex)
    return re.sub(r"\s+", " ", tex.replace("{", "").replace("}", "").replace("_", "")).strip()


def plain(text):
    """Text with every \\( \\) and \\[ \\] math span written as plain characters."""
    return MATH.sub(lambda m: tex_to_text(m[1] or m[2]), text)


def plain_toc(items):
    for item in items:
        item.title = plain(item.title)
        plain_toc(item.children)


CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
FENCED = re.compile(r"^([ \t]*)(`{3,}).*?^\1\2[ \t]*$", re.MULTILINE | re.DOTALL)
# reading speeds: words per minute for English and Vietnamese (syllables), characters for Chinese
WORDS_PER_MINUTE = {"en": 200, "vi": 230}
CJK_CHARACTERS_PER_MINUTE = 300


def reading_minutes(markdown, language):
    prose = FENCED.sub("", markdown)
    characters = len(CJK.findall(prose))
    words = len(CJK.sub(" ", prose).split())
    minutes = words / WORDS_PER_MINUTE.get(language, 200) + characters / CJK_CHARACTERS_PER_MINUTE
    return max(5, 5 * math.ceil(minutes / 5))


READING_TIME = re.compile(r"\{\{\s*page\.reading_minutes\s*\}\}")


class ShallowCloneIsInformation(logging.Filter):
    def filter(self, record):
        if record.levelno == logging.WARNING and "shallow" in record.getMessage():
            record.levelno, record.levelname = logging.INFO, "INFO"
        return True


def on_startup(**kwargs):
    # the plugin's logger for CI checks (mkdocs.plugins.<module>, from get_plugin_logger)
    logger = logging.getLogger("mkdocs.plugins.mkdocs_git_revision_date_localized_plugin.ci")
    if not any(isinstance(f, ShallowCloneIsInformation) for f in logger.filters):
        logger.addFilter(ShallowCloneIsInformation())


def on_page_markdown(markdown, page, config, **kwargs):
    problems = include_problems(markdown, f"docs/{config['theme']['language']}/{page.file.src_uri}")
    problems = problems or width_problems(markdown)
    if problems:
        raise PluginError("\n".join(problems))
    minutes = reading_minutes(markdown, config["theme"]["language"])
    markdown = READING_TIME.sub(str(minutes), markdown)
    return title_listings(markdown, page, config)


REVISION_SPAN = re.compile(r'(<span class="git-revision-date-localized-plugin[^"]*" title=")(?P<title>[^"]*)(">)'
                           r'(?P<date>[^<]*)(</span>)')
CLOCK = re.compile(r"\d{1,2}:\d{2}:\d{2}.*$")


def tooltip_as_shown(span):
    """The plugin's date span with its tooltip written as the date it shows, then the time."""
    clock = CLOCK.search(span["title"])
    if not clock:
        return span[0]
    return f'{span[1]}{span["date"]} {clock[0]}{span[3]}{span["date"]}{span[5]}'


def on_page_context(context, page, config, **kwargs):
    for key, value in page.meta.items():
        if key.startswith("git_") and isinstance(value, str):
            page.meta[key] = REVISION_SPAN.sub(tooltip_as_shown, value)
    return context


def number_captions(html, label):
    count = iter(range(1, 10_000))
    return CAPTION.sub(lambda m: f'{m[0]}<span class="caption-number">{label.format(next(count))}</span> ', html)


def on_page_content(html, page, config, **kwargs):
    plain_toc(page.toc)
    html = number_captions(html, config["extra"]["labels"]["figure"])
    return link_listing_titles(html, page)


def on_post_build(config, **kwargs):
    """Search results show titles and text: write their math as plain characters too."""
    index_path = Path(config["site_dir"]) / "search" / "search_index.json"
    if not index_path.is_file():
        return
    index = json.loads(index_path.read_text(encoding="utf-8"))
    for entry in index["docs"]:
        entry["title"] = plain(entry["title"]).replace("¶", "")  # notebook headings keep their anchor sign
        entry["text"] = plain(entry["text"])
    index_path.write_text(json.dumps(index, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")
