"""The author's checks, in seconds: what `make check` runs, and what `make test` runs first.

    .venv/bin/python scripts/check.py    # every check; exits 1 when one finds a problem (make check)
    .venv/bin/python scripts/check.py --skip-placeholders  # make test: placeholder data on one line

Each check reads the sources as an author leaves them (pages, navigation, snippets, notebooks, data)
and builds nothing, so the whole run takes seconds. A problem is one sentence that names the file,
what is missing, what exists instead and the command that fixes it. The site build fails on the
same sentences, written by the same functions (scripts/build_site.py and the hooks in hooks/); the
built site and what a reader sees in a browser are checked by the tests (make test).
"""

import argparse
import posixpath
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "hooks"))  # the hooks own the syntax of includes, quotes and plots

import build_site  # noqa: E402
import gpu_build  # noqa: E402
import glossary as glossary_hook  # noqa: E402  (hooks/glossary.py)
import measurements as quotes_hook  # noqa: E402  (hooks/measurements.py)
import notebooks  # noqa: E402
import page_furniture  # noqa: E402
import shared_files  # noqa: E402

LANGUAGES = build_site.LANGUAGES
DOCS = build_site.DOCS
SNIPPETS = ROOT / "snippets"
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})[^\n]*\n(.*?)^\1\2[ \t]*$", re.MULTILINE | re.DOTALL)
FRONT_MATTER = re.compile(r"\A---\n(.*?)\n---\n", re.DOTALL)


def markdown_pages():
    """(language, page, markdown) for every Markdown page of every language."""
    for language in LANGUAGES:
        for page in build_site.pages(language):
            if page.endswith(".md"):
                yield language, page, (DOCS / language / page).read_text(encoding="utf-8")


def snippet_includes(markdown):
    """The 'file[:section]' targets a page includes (escaped ';--8<--' lines are examples, not includes)."""
    return [target for escaped, target in page_furniture.includes(markdown) if not escaped]


def snippet_sections():
    """Every named section under snippets/, as 'package/file.py:name'."""
    for path in sorted(SNIPPETS.rglob("*.py")):
        for name in page_furniture.sections(path):
            yield f"{path.relative_to(SNIPPETS).as_posix()}:{name}"


def untranslated(markdown):
    """Whether a page is marked `untranslated: true`: the English page, copied as it is, until a native
    writer writes it in the page's language (the authoring guide, 'Add a translation')."""
    front = FRONT_MATTER.match(markdown)
    return bool(front and re.search(r"^untranslated:\s*true\s*$", front[1], re.MULTILINE))


def without_code(markdown):
    return FENCE.sub("", FRONT_MATTER.sub("", markdown))


# --- Every language says the same thing: the same structure, in the same order.

def structure(markdown):
    """What must match across languages, in order where order matters."""
    prose = without_code(markdown)
    return {
        "headings (levels in order)": [len(h) for h in re.findall(r"^(#{1,6}) ", prose, re.MULTILINE)],
        "snippet includes (in order)": snippet_includes(markdown),
        "figures (in order)": re.findall(r"!\[[^\]]*\]\(([^)\s]+)", prose),
        "display math blocks": len(re.findall(r"^\s*\$\$", prose, re.MULTILINE)) // 2,
        "inline math": len(re.findall(r"(?<![$\\])\$(?!\$)[^$\n]+?(?<!\\)\$", prose)),
        "tables": len(re.findall(r"^\s*\|?\s*:?-{3,}", prose, re.MULTILINE)),
        "admonitions": len(re.findall(r"^\s*(?:!!!|\?\?\?\+?) ", prose, re.MULTILINE)),
        "content tabs": len(re.findall(r"^\s*=== ", prose, re.MULTILINE)),
        "code blocks": len(FENCE.findall(markdown)),
        "measured quotes (in order)": re.findall(r"\{\{\s*([a-z0-9_.]+)\s*\}\}", markdown),
    }


def difference(have, want):
    """Where two values of one structure entry part: the first position that differs, for lists."""
    if not isinstance(want, list):
        return f"{have} against {want}"
    first = next((i for i, (a, b) in enumerate(zip(have, want)) if a != b), min(len(have), len(want)))
    item = lambda values: repr(values[first]) if first < len(values) else "nothing"  # noqa: E731
    return f"{len(have)} against {len(want)}; the first difference is item {first + 1}: {item(have)} against {item(want)}"


def translation_problems(page):
    """How the translations of one page drifted from it, blaming the side that is out of step.

    When both translations agree with each other and not with English, the English page is the one
    out of step: the sentence says to fix it first (a mistake there is fixed once, not copied into two
    languages), and only then, if the change was meant, to write it into each translation.
    """
    if not all((DOCS / language / page).is_file() for language in LANGUAGES):
        return []  # a missing page is build_site.out_of_step()'s sentence
    shapes = {language: structure((DOCS / language / page).read_text(encoding="utf-8")) for language in LANGUAGES}
    english, translations = shapes["en"], [language for language in LANGUAGES if language != "en"]
    problems = []
    for what, want in english.items():
        drifted = [language for language in translations if shapes[language][what] != want]
        others = {repr(shapes[language][what]) for language in translations}
        if len(drifted) == len(translations) > 1 and len(others) == 1:
            files = " and ".join(f"docs/{language}/{page}" for language in translations)
            problems.append(f"docs/en/{page} is out of step with its translations in its {what}: {files} agree "
                            f"with each other, and English differs (English against them: "
                            f"{difference(want, shapes[translations[0]][what])}): fix docs/en/{page} first; "
                            f"if the English change is meant, write the same change into {files}, each in its "
                            f"own language (the authoring guide, 'Add a translation')")
            continue
        problems += [f"docs/{language}/{page} drifted from docs/en/{page} in its {what} ({language} against en: "
                     f"{difference(shapes[language][what], want)}): make docs/{language}/{page} match the English "
                     f"page" for language in drifted]
    return problems


def untranslated_pages():
    """The pages waiting for a native writer: listed by make check, never refused."""
    return [f"docs/{language}/{page}" for language, page, markdown in markdown_pages()
            if language != "en" and untranslated(markdown)]


def untranslated_copies():
    """An untranslated page is the English page as it is: one that differs is stale, or no longer untranslated."""
    problems = []
    for language, page, markdown in markdown_pages():
        english = DOCS / "en" / page
        if language == "en" or not untranslated(markdown) or not english.is_file():
            continue
        if FRONT_MATTER.sub("", markdown) != FRONT_MATTER.sub("", english.read_text(encoding="utf-8")):
            problems.append(f"docs/{language}/{page} is marked `untranslated: true` but its text is not docs/en/{page}'s: "
                            f"copy the English page again (keeping that line), or, if a native writer wrote it in "
                            f"{language}, remove the line")
    return problems


def translations_in_step():
    return [problem for page in build_site.pages("en") if page.endswith(".md") for problem in translation_problems(page)]


def descriptions():
    """Every page has its own one-sentence description (link previews, search results)."""
    problems, seen = [], {}
    for language, page, markdown in markdown_pages():
        front = FRONT_MATTER.match(markdown)
        found = re.search(r"^description:\s*(.+)$", front[1], re.MULTILINE) if front else None
        if not found:
            problems.append(f"docs/{language}/{page} has no description: start it with front matter, "
                            "'---', 'description: <what the page teaches, in one sentence>', '---'")
        elif (language, found[1]) in seen:
            problems.append(f"docs/{language}/{page} has the description of docs/{language}/{seen[language, found[1]]}: "
                            "give it one of its own")
        else:
            seen[language, found[1]] = page
    return problems


# --- Includes, quotes, listings, figures: what the build would stop on, page by page.

def includes():
    problems = [problem for language, page, markdown in markdown_pages()
                for problem in page_furniture.include_problems(markdown, f"docs/{language}/{page}")]
    included = {target for _, _, markdown in markdown_pages() for target in snippet_includes(markdown)}
    problems += [f"snippets/{section.split(':')[0]} marks section '{section.split(':')[1]}', which no page includes: "
                 "include it in a page, or remove its markers" for section in snippet_sections() if section not in included]
    return problems


# --- Every page uses the glossary's terms, in its own language (hooks/glossary.py links the first use of each).

def glossary_problem(markdown, where, language):
    """A sentence when a page's prose uses no glossary term and links to none (None when it does)."""
    body = FRONT_MATTER.sub("", markdown)
    if glossary_hook.GLOSSARY_LINK.search(body) or next(glossary_hook.term_uses(body, language), None):
        return None
    untranslated_fix = (", or, for the English page copied until a native writer writes it, add `untranslated: true` "
                        "to its front matter" if language != "en" else "")
    return (f"{where} uses no glossary term in its prose, so it links to no entry of the glossary: write its terms "
            f"as snippets/normkit/glossary.toml gives them in {language} (docs/{language}/glossary.md lists them)"
            + untranslated_fix)


def glossary_use():
    problems = [glossary_problem(markdown, f"docs/{language}/{page}", language)
                for language, page, markdown in markdown_pages()
                if page != "glossary.md" and not untranslated(markdown)]
    return [problem for problem in problems if problem]


def placeholders():
    return [problem for language, page, markdown in markdown_pages()
            for problem in quotes_hook.page_problems(markdown, f"docs/{language}/{page}", language)]


MAX_LISTING_COLUMNS = page_furniture.MAX_LISTING_COLUMNS  # the code box at 1280 px (hooks/page_furniture.py)


def listings():
    """Kernels are shown from tested files, in lines that fit the code box (the build stops on the same)."""
    problems = [f"docs/{language}/{page}: a fenced block holds @triton.jit; show the kernel through a named section "
                "of its snippet file (the authoring guide, 'Add a code listing')"
                for language, page, markdown in markdown_pages()
                for match in FENCE.finditer(markdown) if "@triton.jit" in match[3]]
    problems += [problem for language, page, markdown in markdown_pages()
                 for problem in shared_blocks(markdown, f"docs/{language}/{page}")]
    # each section once, though every language's page includes it
    return problems + sorted({problem for _, _, markdown in markdown_pages()
                              for problem in page_furniture.width_problems(markdown)})


def shared_blocks(markdown, where):
    """A fenced block of two included sections is one listing to its copy button and to the width
    check (which reads blocks of one include): a sentence for each such block."""
    return [f"{where}: a fenced block includes {len(found)} sections ({', '.join(found)}); give each "
            "its own block, with a sentence between them"
            for match in FENCE.finditer(markdown) for found in [snippet_includes(match[3])]
            if len(found) > 1]


IMAGE = re.compile(r"^(?P<indent>[ \t]*)!\[[^\]]*\]\((?P<src>[^)\s]+)\)[^\n]*\n(?P<next>[^\n]*)", re.MULTILINE)


def image_file(language, page, src):
    """The file an image of a page shows: docs/assets and docs/data are shared by every language."""
    path = posixpath.normpath(posixpath.join(posixpath.dirname(page), src))
    return DOCS / path if path.split("/")[0] in shared_files.SHARED_FOLDERS else DOCS / language / path


def figures():
    """Every image is a numbered figure with a caption; every plot draws its labels as text."""
    problems = []
    svgs = set()
    for language, page, markdown in markdown_pages():
        for match in IMAGE.finditer(without_code(markdown)):
            if match["next"].strip() != "/// caption":
                problems.append(f"docs/{language}/{page}: the image {match['src']} has no caption: put a '/// caption' "
                                "block right under it (the caption's text, then '///')")
            svgs.add(image_file(language, page, match["src"]))
    drawn = {path for path in svgs if path.suffix == ".svg" and path.is_file()}
    drawn |= {localized for path in drawn for localized in path.parent.glob(f"{path.stem}.*.svg")}
    problems += [f"{path.relative_to(ROOT)} draws its labels as paths, so no one can check their size: render it with "
                 "matplotlib's rc {'svg.fonttype': 'none'} (the authoring guide's report example)"
                 for path in sorted(drawn) if "font-size" not in path.read_text(encoding="utf-8")]
    return problems


def chapters():
    """The chapters: folders of the English pages with an index page of their own."""
    return sorted(path.parent.name for path in (DOCS / "en").glob("*/index.md"))


def chapters_on_home_pages():
    return [f"docs/{language}/index.md does not link the chapter {chapter}: add it to the home page's chapter "
            f"list as '[<the chapter's title>]({chapter}/index.md)'"
            for language in LANGUAGES for chapter in chapters()
            if f"]({chapter}/index.md)" not in (DOCS / language / "index.md").read_text(encoding="utf-8")]


def notebooks_in_step():
    problems = notebooks.check()
    return problems + [notebooks.FIX] if problems else []


def measured_data():
    return [problem for name in gpu_build.DATA_SETS for problem in gpu_build.data_set_problems(name)]


def gpu_tests():
    return gpu_build.gpu_test_problems()


GPU_TESTS = "snippet tests passed on a GPU, on the current sources"


CHECKS = {
    "pages and navigation in step across languages": build_site.out_of_step,
    "translations in step with English": translations_in_step,
    "untranslated pages are the English page as it is": untranslated_copies,
    "every page has its own description": descriptions,
    "every include resolves": includes,
    "every page uses the glossary's terms": glossary_use,
    "every quote and placeholder is filled": placeholders,
    "listings from tested files, within the code box": listings,
    "figures with captions, plots with text labels": figures,
    "every chapter on each home page": chapters_on_home_pages,
    "notebooks match their sources": notebooks_in_step,
    "data measured on a GPU, of the current sources": measured_data,
    GPU_TESTS: gpu_tests,
}


def placeholder_data(problem, names):
    """Whether a problem is about a data set that holds placeholder data (not measured yet)."""
    return any(problem.startswith(f"docs/data/{name}/") for name in names)


def checks_skipping(skipped):
    """CHECKS, with the GPU test record's check leaving out the packages of placeholder data sets
    (a placeholder chapter has not run on a GPU either); the other checks' problems about them are
    filtered by placeholder_data()."""
    checks = dict(CHECKS)
    if skipped:
        checks[GPU_TESTS] = lambda: gpu_build.gpu_test_problems(skip=skipped)
    return checks


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--skip-placeholders", action="store_true",
                        help="list placeholder data sets on one line instead of failing on them (make test)")
    args = parser.parse_args(argv)
    skipped = gpu_build.placeholder_data_sets() if args.skip_placeholders else []
    start, failed = time.monotonic(), 0
    for title, check in checks_skipping(skipped).items():
        began = time.monotonic()
        problems = [problem for problem in check() if not placeholder_data(problem, skipped)]
        failed += bool(problems)
        print(f"{'FAIL' if problems else 'ok  '}  {title} ({time.monotonic() - began:.1f} s)", flush=True)
        for problem in problems:
            print(f"      {problem}")
    waiting = untranslated_pages()
    if waiting:
        print(f"note  {len(waiting)} untranslated page{'s' * (len(waiting) > 1)}, the English text until a native "
              f"writer writes {'them' if len(waiting) > 1 else 'it'}: {', '.join(waiting)}")
    if skipped:
        print(f"note  {gpu_build.placeholder_summary(skipped)}")
    verdict = f"{failed} of {len(CHECKS)} checks found problems" if failed else f"all {len(CHECKS)} checks passed"
    print(f"make check: {verdict} in {time.monotonic() - start:.1f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
