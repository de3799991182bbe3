"""Insert measured numbers and tables into pages from the data the GPU build wrote.

- A page writes `{{ rmsnorm.fwd_diff_pct_128x257 }}`; this hook replaces it with the string stored
  under that key in the quotes of the page's language: docs/data/rmsnorm/quotes.json in English,
  quotes.zh.json and quotes.vi.json in the others (the same numbers, written in each language's
  format by normkit.words.number).
- A page includes a table with `--8<-- "rmsnorm/timing.md"`; in the Chinese build this hook points
  the include at rmsnorm/timing.zh.md, the same table with translated labels, when it exists (a
  printout, rmsnorm/examples.txt, likewise: rmsnorm/examples.zh.txt).
- A page shows a plot with `![...](../data/rmsnorm/timing.svg)`; in the Chinese build this hook
  points the image at rmsnorm/timing.zh.svg, the same plot in the page's words, when it exists. A
  drawn figure under docs/assets/images/ is localized the same way (layernorm-lock-timeline.zh.svg),
  so every language's page names the same file and the parity check compares like with like.

Before anything is replaced, page_problems() reads the page as an author wrote it: a quote of a
data set or key that the data does not hold, a `{{ … }}` that no hook fills (a hyphen in a key, a
typo) and a plot that was never drawn fail the build, each with a sentence that names the page, what
exists instead and the command that writes what is missing. `make check` runs it on every page too.
A data set written by `scripts/gpu_build.py placeholder` (no GPU yet) has the files its report
writes from the SYNTHETIC numbers of its test, each saying "not measured yet", and the same quote
keys: a misspelt key stays an error, and the sentences say how to add a new one.
"""

import difflib
import json
import re
import sys
from functools import cache
from pathlib import Path

from mkdocs.exceptions import PluginError

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import gpu_build  # noqa: E402  (scripts/gpu_build.py: the data sets, and the command that previews one)

DATA_ROOT = ROOT / "docs" / "data"
PLACEHOLDER = re.compile(r"\{\{\s*([a-z][a-z0-9_]*)\.([A-Za-z0-9_]+)\s*\}\}")
DATA_INCLUDE = re.compile(r'^(?P<lead>\s*-{1,}8<-{1,}\s+")(?P<stem>[\w/-]+)\.(?P<ext>md|txt)"', re.MULTILINE)
DATA_PLOT = re.compile(r'(?P<lead>\]\((?:\.\./)*data/)(?P<stem>[\w/-]+)\.svg\)')
FIGURE_ROOT = ROOT / "docs" / "assets" / "images"
FIGURE = re.compile(r'(?P<lead>\]\((?:\.\./)*assets/images/)(?P<stem>[\w/-]+)\.svg\)')
# what a reader sees as prose: fenced blocks and inline code hold examples, not placeholders
CODE = re.compile(r"^([ \t]*)(`{3,}|~{3,}).*?^\1\2[ \t]*$|(`+)(?!`).+?(?<!`)\3", re.MULTILINE | re.DOTALL)
BRACES = re.compile(r"\{\{.*?\}\}")
# the other hooks' markers: page_furniture fills the first (before this hook), glossary the second
FILLED_ELSEWHERE = re.compile(r"\{\{\s*(?:page\.reading_minutes|glossary)\s*\}\}")
MAX_KEYS_SHOWN = 12
PLACEHOLDER_COMMAND = gpu_build.PLACEHOLDER_COMMAND
NO_DATA = ("docs/data/{name}/ has no measurements yet: without a GPU, `{placeholder}` gives it placeholder "
           "data (its pages then say 'not measured yet'); on a CUDA machine, `python scripts/gpu_build.py --only "
           "{name}` measures it")


def quotes_path(chapter, language):
    return DATA_ROOT / chapter / ("quotes.json" if language == "en" else f"quotes.{language}.json")


@cache
def quotes(chapter, language):
    """The quotes of one data set in one language, or None when they were never rendered."""
    path = quotes_path(chapter, language)
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


@cache
def is_placeholder(chapter):
    path = DATA_ROOT / chapter / "measurements.json"
    return path.is_file() and bool(json.loads(path.read_text(encoding="utf-8"))["provenance"].get("placeholder"))


@cache
def data_sets():
    """The registered data sets, read once a build (a page may quote hundreds of values)."""
    return sorted(gpu_build.registered_data_sets())


def unknown_key(where, chapter, key, keys, language):
    close = difflib.get_close_matches(key, keys, n=3, cutoff=0.5)
    instead = f"did you mean {' or '.join(f'{{{{ {chapter}.{k} }}}}' for k in close)}? " if close else ""
    shown = ", ".join(sorted(keys)) if len(keys) <= MAX_KEYS_SHOWN else f"{len(keys)} keys"
    path = quotes_path(chapter, language).relative_to(ROOT)
    if is_placeholder(chapter):
        # the placeholder holds the keys the report writes: a key it lacks is a typo, or new to the report
        fix = (f"a new key is one that snippets/{chapter}/report.py writes: add it there (and to its test), then "
               f"`{PLACEHOLDER_COMMAND.format(name=chapter)}` gives it a placeholder")
    else:
        fix = f"add the key to the quotes that snippets/{chapter}/report.py writes, then run the GPU build"
    return f"{where}: {{{{ {chapter}.{key} }}}} is not in {path} ({instead}it holds {shown}); {fix}"


def quote_problem(where, chapter, key, language):
    if chapter not in data_sets():
        return (f"{where}: {{{{ {chapter}.{key} }}}} names no data set: the data sets are {', '.join(data_sets())} "
                f"(each registered by snippets/<name>/dataset.toml)")
    values = quotes(chapter, language)
    if values is None:
        return f"{where}: quotes {{{{ {chapter}.{key} }}}}, but " + NO_DATA.format(
            name=chapter, placeholder=PLACEHOLDER_COMMAND.format(name=chapter))
    return None if key in values else unknown_key(where, chapter, key, list(values), language)


def unfilled_problem(where, text):
    written = re.sub(r"[^\w.{} ]", "_", text)  # {{ x.best-gbps }} -> {{ x.best_gbps }}
    instead = f"did you mean {written}? " if PLACEHOLDER.fullmatch(written) else ""
    return (f"{where}: {text} would be printed as it is ({instead}a measured number is written "
            "{{ <data set>.<key> }}, with a key of letters, digits and _; page_furniture fills "
            "{{ page.reading_minutes }}, the glossary hook {{ glossary }})")


def plot_problem(where, stem):
    name = stem.split("/")[0]
    if (DATA_ROOT / f"{stem}.svg").is_file():
        return None
    if not (DATA_ROOT / name / "measurements.json").is_file():
        return f"{where}: shows the plot data/{stem}.svg, but " + NO_DATA.format(
            name=name, placeholder=PLACEHOLDER_COMMAND.format(name=name))
    drawn = sorted(p.relative_to(DATA_ROOT).as_posix() for p in (DATA_ROOT / name).glob("*.svg"))
    fix = (f"draw it in snippets/{name}/report.py, then `{PLACEHOLDER_COMMAND.format(name=name)}` gives it a "
           "placeholder" if is_placeholder(name)
           else f"draw it in snippets/{name}/report.py, then `.venv/bin/python scripts/gpu_build.py render --only {name}`")
    return f"{where}: shows data/{stem}.svg, which was not drawn (the plots of {name}: {', '.join(drawn) or 'none'}); {fix}"


def page_problems(markdown, where, language):
    """Every quote, placeholder and plot of a page that the build cannot fill, as a sentence with its fix."""
    markdown = FILLED_ELSEWHERE.sub("", markdown)
    problems = [quote_problem(where, chapter, key, language) for chapter, key in PLACEHOLDER.findall(markdown)]
    prose = CODE.sub("", markdown)
    problems += [unfilled_problem(where, text) for text in BRACES.findall(prose) if not PLACEHOLDER.fullmatch(text)]
    problems += [plot_problem(where, match["stem"]) for match in DATA_PLOT.finditer(markdown)]
    return [problem for problem in problems if problem]


def quote(match, language):
    chapter, key = match.groups()
    return quotes(chapter, language)[key]


def localized_include(match, language):
    localized = f"{match['stem']}.{language}.{match['ext']}"
    if language != "en" and (DATA_ROOT / localized).is_file():
        return f'{match["lead"]}{localized}"'
    return match.group(0)


def localized_plot(match, language, root=DATA_ROOT):
    localized = f"{match['stem']}.{language}.svg"
    if language != "en" and (root / localized).is_file():
        return f"{match['lead']}{localized})"
    return match.group(0)


def on_page_markdown(markdown, page, config, **kwargs):
    language = config["theme"]["language"]
    problems = page_problems(markdown, f"docs/{language}/{page.file.src_uri}", language)
    if problems:
        raise PluginError("\n".join(problems))
    markdown = DATA_INCLUDE.sub(lambda m: localized_include(m, language), markdown)
    markdown = DATA_PLOT.sub(lambda m: localized_plot(m, language), markdown)
    markdown = FIGURE.sub(lambda m: localized_plot(m, language, FIGURE_ROOT), markdown)
    return PLACEHOLDER.sub(lambda m: quote(m, language), markdown)


def on_pre_build(config, **kwargs):
    # mkdocs serve keeps this module between its rebuilds: read the data again at each one
    quotes.cache_clear()
    is_placeholder.cache_clear()
    data_sets.cache_clear()
