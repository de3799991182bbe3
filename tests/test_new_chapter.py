"""A new chapter, written, previewed and tested without a GPU by following the authoring guide alone.

The test follows "Add a chapter" in docs/en/authoring.md on a throwaway chapter in a copy of the
repository: the guide's command copies the template chapter (templates/chapter/) under a new name,
the guide's navigation and home-page lines go into each language's files, and the Vietnamese page
is left untranslated (the English page with `untranslated: true`), as the guide says a page is until
a native writer writes it. Then:

1. the preview: the guide's placeholder command; a strict build of all three languages whose pages
   say "not measured yet" in their words; `make check`, whose one new problem is that the data is
   not measured yet; and the WHOLE test suite (tests/, browser tests included, and the chapter's
   own snippet tests), run once on the copy, which passes, skipping the placeholder data set with
   one summary line, as `make test` does;
2. the measurement, stood in for by SYNTHETIC data (this copy is never published), written in place
   of the placeholder as the GPU build writes it, and rendered: the numbers, the table, the plot and
   the provenance show in each language, the page and browser tests pass on the chapter, and
   `make check` and the measurement tests refuse the data, naming its file;
3. nothing outside the chapter's files had to change.
"""

import json
import re
import shutil
from html import unescape

import pytest

from sitecheck import DOCS, LANGUAGES, built_page, copy_of_the_repository, run_in

import build_site  # scripts/, put on the path by sitecheck
import gpu_build
from normkit.words import label

CHAPTER = "unitnorm"  # not the template's own name: the copy renames it everywhere
NAV_FILES = list(build_site.LANGUAGES.values())
HOME_PAGES = [f"docs/{language}/index.md" for language in LANGUAGES]
NOT_MEASURED = {"en": "not measured yet", "zh": "尚未测量", "vi": "chưa đo"}
UNTRANSLATED = "vi"

# SYNTHETIC: what the GPU build would write; the throwaway copy is deleted after the test.
COPY = {"median": 20000.0, "low": 19900.0, "high": 20100.0, "runs": [19900.0, 20000.0, 20100.0]}
MEASUREMENTS = {
    "provenance": {
        "gpu": "SYNTHETIC", "sm_count": 1, "copy_gb_per_s": 20000.0, "driver": "-", "cuda": "-", "copy": COPY,
        "torch": "-", "triton": "-", "python": "-", "date": "-", "git_commit": "-", "sources_fingerprint": "-",
        "sources": {}, "quick": False,
    },
    "results": {
        "M": 4096, "dtype": "float16",
        "protocol": {"warmup_calls": 10, "samples": 20, "calls_per_sample": 10, "repeats": 3, "host_calls": 200,
                     "max_copies": 8},
        # 268435456 bytes in 20 µs: 13,421.8 GB/s at N = 16384, stated ±3 %, so to hundreds
        "rows": [{"N": n, "bytes": 2 * 4096 * n * 2, "us": {"median": us, "low": us, "high": us, "runs": [us] * 3}}
                 for n, us in ((1024, 10.0), (16384, 20.0))],
    },
}
# the best bandwidth as each language writes it (normkit.words.number): grouped thousands
BEST = {"en": "13,400 GB/s", "zh": "13,400 GB/s", "vi": "13\u00a0400 GB/s"}


def name(text):
    return text.replace("<chapter>", CHAPTER)


def guide_blocks():
    """The code blocks of the English guide's "Add a chapter" section, by their title (or language)."""
    guide = (DOCS / "en" / "authoring.md").read_text(encoding="utf-8")
    section = guide.split("\n## Add a chapter\n", 1)[1].split("\n## ", 1)[0]
    blocks = {}
    for fence, info, body in re.findall(r"^ {4}(`{3,})([^\n]*)\n(.*?)^ {4}\1$", section, re.MULTILINE | re.DOTALL):
        title = re.search(r'title="([^"]+)"', info)
        key = name(title[1]) if title else info.split()[0]
        blocks.setdefault(key, []).append(name(re.sub(r"^ {4}", "", body, flags=re.MULTILINE)))
    return blocks


def commands(block):
    """The commands of a bash block, comments left out, `.venv/bin/python` as this Python."""
    lines = [line.split("#")[0].split() for line in block.splitlines() if line.split("#")[0].strip()]
    return [["python", *line[1:]] if line[0] == ".venv/bin/python" else line for line in lines]


def snapshot(root):
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*")
            if p.is_file() and ".git" not in p.relative_to(root).parts}


def a_clone(repo):
    """The copy as a fresh clone has it: one commit of what the working tree holds (the copies that
    tests/test_author_errors.py makes, and the pages' dates, come from git)."""
    for command in (["git", "init", "-q"], ["git", "add", "-A"],
                    ["git", "-c", "user.name=normkernels", "-c", "user.email=test@normkernels", "commit", "-q", "-m", "clone"]):
        succeeds(repo, *command)
    return repo


def succeeds(copy, *command):
    code, output = run_in(copy, *command)
    assert code == 0, f"{' '.join(map(str, command))} failed:\n{output[-6000:]}"
    assert "Traceback" not in output, f"{' '.join(map(str, command))} printed a traceback:\n{output[-6000:]}"
    return output


def check_problems(copy, *options):
    """The problem lines `make check` prints in the copy."""
    _, output = run_in(copy, "python", "scripts/check.py", *options)
    assert "Traceback" not in output, output
    return {line.strip() for line in output.splitlines() if line.startswith("      ")}


def page_text(site, language):
    return unescape(built_page(site, language, f"{CHAPTER}/index.md").read_text(encoding="utf-8"))


def write_the_chapter(repo, blocks):
    """Steps 1 to 3 of the guide: the template copied, a page left untranslated, the nav and home-page lines."""
    copy = next(c for block in blocks["bash"] for c in commands(block) if "scripts/new_chapter.py" in c)
    assert f"snippets/{CHAPTER}/report.py" in succeeds(repo, *copy)
    # the Vietnamese page waits for a native writer: the English page, marked untranslated
    english = (repo / "docs" / "en" / CHAPTER / "index.md").read_text(encoding="utf-8")
    marker = blocks[f"docs/zh/{CHAPTER}/index.md"][0].strip().splitlines()[-2]
    assert marker == "untranslated: true", f"the guide's untranslated front matter ends in {marker!r}"
    (repo / "docs" / UNTRANSLATED / CHAPTER / "index.md").write_text(
        english.replace("\n---\n", f"\n{marker}\n---\n", 1), encoding="utf-8")
    for config in NAV_FILES:  # after the home page
        line = blocks[config][0].rstrip("\n")
        path = repo / config
        text, count = re.subn(r"^(nav:\n  - [^\n]*\n)", rf"\g<1>{line}\n", path.read_text(encoding="utf-8"),
                              flags=re.MULTILINE)
        assert count == 1, f"{config}: no nav list to add the chapter to"
        path.write_text(text, encoding="utf-8")
    for home in HOME_PAGES:  # after the last chapter of the list
        home_line = blocks[home][0].rstrip("\n")
        path = repo / home
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        last = max(i for i, text in enumerate(lines) if re.match(r"\d+\. \*\*\[", text))
        end = next(i for i in range(last + 1, len(lines)) if not lines[i].startswith(" "))
        path.write_text("".join(lines[:end] + [home_line + "\n"] + lines[end:]), encoding="utf-8")


def plot_name(language):
    """The chapter's plot in a language: hooks/measurements.py links zh and vi pages to their own labels."""
    return "bandwidth.svg" if language == "en" else f"bandwidth.{language}.svg"


def preview_without_a_gpu(repo, blocks, tmp_path, problems_before):
    """Step 4: the guide's placeholder command, a strict build, make check, and the whole suite."""
    preview = commands(blocks["bash"][1])
    placeholder = next(command for command in preview if "placeholder" in command)
    assert ["make", "check"] in preview and ["make", "test"] in preview, "the guide's preview runs neither check nor test"
    assert "not measured yet" in succeeds(repo, *placeholder)
    site = tmp_path / "preview"
    succeeds(repo, "python", "scripts/build_site.py", "--site-dir", site)
    for language in LANGUAGES:
        html = page_text(site, language)
        assert "_scale_norm_kernel" in html, f"{language}: the kernel listing is missing"
        assert f"<em>{NOT_MEASURED[language]}</em>" in html, f"{language}: the quotes do not say 'not measured yet'"
        assert html.count(f"docs/data/{CHAPTER}/") >= 2, f"{language}: the table and provenance placeholders are missing"
        plot = site / ("" if language == "en" else language) / "data" / CHAPTER / plot_name(language)
        assert NOT_MEASURED[language] in plot.read_text(encoding="utf-8"), f"{language}: the placeholder plot"
    assert "chưa được viết bằng tiếng Việt" in page_text(site, UNTRANSLATED), "the untranslated page does not say so"
    # make check (publishing): the chapter is neither measured nor tested on a GPU yet, and says so
    new = sorted(check_problems(repo) - problems_before)
    assert len(new) == 2 and new[0].startswith(f"docs/data/gpu-tests.json: snippets/{CHAPTER}/") and (
        f"docs/data/{CHAPTER}/measurements.json did not come from a GPU" in new[1]), (
        f"make check: the chapter adds problems besides its placeholder data and its untested package: {new}")
    # make test: its check lists the placeholder on one line, then the whole suite passes on the chapter
    new = check_problems(repo, "--skip-placeholders") - problems_before
    assert not new, f"make test's check: the chapter adds problems besides its placeholder data: {new}"
    _, output = run_in(repo, "python", "scripts/check.py", "--skip-placeholders")
    assert f"docs/{UNTRANSLATED}/{CHAPTER}/index.md" in output and gpu_build.placeholder_summary([CHAPTER]) in output
    code, output = run_in(repo, "python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "--basetemp", tmp_path / "suite",
                          "tests", f"snippets/{CHAPTER}", "--ignore=tests/test_new_chapter.py", "-W", "ignore::UserWarning")
    failures = [line for line in output.splitlines() if line.startswith(("FAILED", "ERROR"))]
    assert code == 0, "the suite fails on a new chapter from its placeholder:\n" + "\n".join(failures + [
        line for line in output.splitlines() if re.match(r"=* ?\d+ (failed|passed)", line)]) + "\n" + output[-3000:]
    summary = [line for line in output.splitlines() if line.startswith("skipped placeholder data")]
    assert summary == [gpu_build.placeholder_summary([CHAPTER])], f"not one summary line: {summary}"
    shutil.rmtree(tmp_path / "suite")


def measured(repo, tmp_path, problems_before):
    """Step 5, stood in for: SYNTHETIC data, rendered; the page and browser tests on the chapter."""
    write = f"import json, sys; sys.path.insert(0, 'scripts'); import gpu_build; " \
            f"gpu_build.write_measurements({CHAPTER!r}, json.loads(sys.argv[1]))"
    succeeds(repo, "python", "-c", write, json.dumps(MEASUREMENTS))  # what measuring writes, in its place
    data = repo / "docs" / "data" / CHAPTER
    assert [p.name for p in data.iterdir()] == ["measurements.json"], "placeholder files outlived the measurement"
    assert f"rendered docs/data/{CHAPTER}" in succeeds(repo, "python", "scripts/gpu_build.py", "render", "--only", CHAPTER)
    inner = tmp_path / "inner"
    succeeds(repo, "python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "--basetemp", inner,
             "tests/test_reader.py", "tests/test_browser.py", "-k", CHAPTER)
    site = inner / "site0"  # the site the page and browser tests built (tests/conftest.py)
    for language in LANGUAGES:
        html = page_text(site, language)
        assert BEST[language] in html, f"{language}: the quoted number is not in its format"
        assert "<td>SYNTHETIC</td>" in html, f"{language}: the provenance table is missing"
        assert f">{label('pct_copy', language)}</th>" in html, f"{language}: the table is not in its words"
        assert f"../data/{CHAPTER}/{plot_name(language)}" in html, f"{language}: the plot is missing"
        home = built_page(site, language, "index.md").read_text(encoding="utf-8")
        assert f'href="{CHAPTER}/"' in home, f"{language}: the chapter is not in the navigation"
    refused = f"docs/data/{CHAPTER}/measurements.json did not come from a GPU (its GPU is 'SYNTHETIC')"
    assert any(refused in problem for problem in check_problems(repo) - problems_before), "make check took SYNTHETIC data"
    code, output = run_in(repo, "python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_measurements.py",
                          "-k", f"{CHAPTER} and (gpu or current_kernel)")
    assert code != 0 and f"docs/data/{CHAPTER}/measurements.json did not come from a GPU" in output, output[-3000:]


@pytest.mark.timeout(3600)
def test_a_new_chapter_written_previewed_and_tested_without_a_gpu(tmp_path):
    repo = a_clone(copy_of_the_repository(tmp_path / "repo"))
    before = snapshot(repo)
    problems_before = check_problems(repo)  # whatever the working tree holds besides the new chapter
    blocks = guide_blocks()
    write_the_chapter(repo, blocks)
    preview_without_a_gpu(repo, blocks, tmp_path, problems_before)
    measured(repo, tmp_path, problems_before)

    changed = {path for path, content in snapshot(repo).items() if before.get(path) != content}
    # what the build steps wrote (rendered data, mkdocs-jupyter's cache, bytecode) is not written by hand
    hand_written = {p for p in changed if not p.startswith((f"docs/data/{CHAPTER}/", ".cache/"))
                    and "__pycache__" not in p}
    template = [p.relative_to(repo / "templates" / "chapter").as_posix().replace("scalenorm", CHAPTER)
                for p in (repo / "templates" / "chapter").rglob("*") if p.is_file()]
    expected = set(template) | set(NAV_FILES) | set(HOME_PAGES)
    assert hand_written == expected, f"a new chapter touched more than its files: {sorted(hand_written ^ expected)}"
