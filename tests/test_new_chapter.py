"""A new chapter, written, previewed and tested without a GPU by following the authoring guide alone.

The test follows "Add a chapter" in docs/en/authoring.md on a throwaway chapter in a copy of the
repository. It writes the package (kernel, test, benchmark, and the guide's own report code), takes
the registration, the page, the navigation and home-page lines and the preview command from the
guide's code blocks, and runs the chapter's test through Triton's interpreter. Then:

1. the preview: the guide's placeholder command, a strict build of all three languages whose pages
   say "not measured yet" in their words, and `make check`, whose one new problem is that the data
   is not measured yet;
2. the measurement, stood in for by SYNTHETIC data (this copy is never published), written in place
   of the placeholder as the GPU build writes it, and rendered: the numbers, the table, the plot and the provenance show in each language,
   the page tests and the browser tests pass on the chapter, and `make check` and the measurement
   tests refuse the data, naming its file;
3. nothing outside the chapter's files had to change.
"""

import json
import re
import textwrap
from html import unescape

import pytest

from sitecheck import DOCS, LANGUAGES, built_page, copy_of_the_repository, run_in

import build_site  # scripts/, put on the path by sitecheck
from normkit.words import label

CHAPTER = "scalenorm"
NAV_FILES = list(build_site.LANGUAGES.values())
HOME_PAGES = [f"docs/{language}/index.md" for language in LANGUAGES]
NOT_MEASURED = {"en": "not measured yet", "zh": "尚未测量", "vi": "chưa đo"}

PACKAGE = {
    "__init__.py": '''
        """A throwaway chapter: ScaleNorm, y = g * x / max(||x||, eps) over each row."""

        import normkit  # noqa: F401  (first: picks the interpreter when there is no GPU)

        from scalenorm.ops import scale_norm

        __all__ = ["scale_norm"]
        ''',
    "ops.py": '''
        import torch
        import triton
        import triton.language as tl

        from normkit.launch import fused_block_size, rows_of, warps_for_block


        # --8<-- [start:kernel]
        @triton.jit
        def _scale_norm_kernel(x_ptr, y_ptr, g, n_cols, eps, BLOCK: tl.constexpr):
            row = tl.program_id(0)
            cols = tl.arange(0, BLOCK)
            mask = cols < n_cols
            x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0).to(tl.float32)
            norm = tl.sqrt(tl.sum(x * x, axis=0))
            tl.store(y_ptr + row * n_cols + cols, g * x / tl.maximum(norm, eps), mask=mask)
        # --8<-- [end:kernel]


        def scale_norm(x, g=1.0, eps=1e-6):
            rows, n_cols = rows_of(x)
            y = torch.empty_like(rows)
            block = fused_block_size(n_cols, x.element_size())
            _scale_norm_kernel[(rows.shape[0],)](rows, y, g, n_cols, eps, BLOCK=block,
                                                 num_warps=warps_for_block(block))
            return y.reshape(x.shape)
        ''',
    "test_ops.py": '''
        import torch

        from scalenorm import scale_norm


        def test_matches_the_formula(device):
            x = torch.randn(6, 100, device=device)
            expected = 2.0 * x / x.norm(dim=-1, keepdim=True).clamp_min(1e-6)
            torch.testing.assert_close(scale_norm(x, 2.0), expected)
        ''',
    "benchmark.py": '''
        import normkit  # noqa: F401
        import torch

        from normkit import bench
        from scalenorm.ops import scale_norm


        def gpu_time(n, protocol):
            def make():
                x = torch.randn(4096, n, device="cuda", dtype=torch.float16)
                return lambda: scale_norm(x)
            copies = bench.rotating_copies(2 * 4096 * n * 2, protocol)
            return lambda: bench.gpu_us(make, copies, protocol)


        def measure(quick=False):
            protocol = bench.QUICK if quick else bench.PROTOCOL
            ns = [1024, 4096] if quick else [1024, 2048, 4096, 8192]
            figures = bench.measure_all({n: gpu_time(n, protocol) for n in ns}, protocol)
            rows = [{"N": n, "us": figures[n], "gb_per_s": 2 * 4096 * n * 2 / (figures[n]["median"] * 1e3)}
                    for n in ns]
            return {"M": 4096, "protocol": bench.protocol_record(protocol), "rows": rows}
        ''',
}
# the report: the guide's code block (imports, plot, write), then the two functions it calls
REPORT_HELPERS = '''

def bandwidth_table(results, copy, t):
    rows = [f"| N | GB/s | {t('pct_copy')} |", "|--:|--:|--:|"]
    for r in results["rows"]:
        rows.append(f"| {r['N']} | {t.number(r['gb_per_s'], '.0f')} "
                    f"| {t.number(100 * r['gb_per_s'] / copy, '.1f')} |")
    return "\\n".join(rows) + "\\n"


def quotes(measurements, t):
    best = max(r["gb_per_s"] for r in measurements["results"]["rows"])
    return {"gpu": measurements["provenance"]["gpu"], "best_gbps": t.number(best, ".1f")}
'''

# SYNTHETIC: what the GPU build would write; the throwaway copy is deleted after the test.
MEASUREMENTS = {
    "provenance": {
        "gpu": "SYNTHETIC", "sm_count": 1, "copy_gb_per_s": 1000.0, "driver": "-", "cuda": "-",
        "copy": {"median": 1000.0, "low": 990.0, "high": 1010.0, "runs": [990.0, 1000.0, 1010.0]},
        "torch": "-", "triton": "-", "python": "-", "date": "-", "git_commit": "-", "sources_sha256": "-",
        "sources": [], "quick": False,
    },
    "results": {"M": 4096, "rows": [{"N": 1024, "gb_per_s": 512.25}, {"N": 4096, "gb_per_s": 12345.25}]},
}
# the same best bandwidth, 12345.25 GB/s, as each language writes it (normkit.words.number)
BEST = {"en": "12,345.2", "zh": "12,345.2", "vi": "12\u00a0345,2"}


def name(text):
    return text.replace("<chapter>", CHAPTER)


def guide_blocks():
    """The code blocks of the English guide's "Add a chapter" section, by their title (or language)."""
    guide = (DOCS / "en" / "authoring.md").read_text(encoding="utf-8")
    section = guide.split("\n## Add a chapter\n", 1)[1].split("\n## ", 1)[0]
    blocks = {}
    for fence, info, body in re.findall(r"^ {4}(`{3,})([^\n]*)\n(.*?)^ {4}\1$", section, re.MULTILINE | re.DOTALL):
        title = re.search(r'title="([^"]+)"', info)
        blocks[title[1] if title else info.split()[0]] = re.sub(r"^ {4}", "", body, flags=re.MULTILINE)
    return blocks


def snapshot(root):
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def succeeds(copy, *command):
    code, output = run_in(copy, *command)
    assert code == 0, f"{' '.join(map(str, command))} failed:\n{output[-4000:]}"
    assert "Traceback" not in output, f"{' '.join(map(str, command))} printed a traceback:\n{output[-4000:]}"
    return output


def check_problems(copy):
    """The problem lines `make check` prints in the copy."""
    _, output = run_in(copy, "python", "scripts/check.py")
    assert "Traceback" not in output, output
    return {line.strip() for line in output.splitlines() if line.startswith("      ")}


def page_text(site, language):
    return unescape(built_page(site, language, f"{CHAPTER}/index.md").read_text(encoding="utf-8"))


def write_the_chapter(repo, blocks):
    """Steps 1 to 4 of the guide: the package, its registration, the pages, the nav and home-page lines."""
    package = repo / "snippets" / CHAPTER
    package.mkdir()
    for file, text in PACKAGE.items():
        (package / file).write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    (package / "report.py").write_text(blocks["python"] + REPORT_HELPERS, encoding="utf-8")
    (package / "dataset.toml").write_text(name(blocks["snippets/<chapter>/dataset.toml"]), encoding="utf-8")
    # the pages (the English text stands in for the translations), includes without the guide's ';'
    page = name(blocks["docs/en/<chapter>/index.md"]).replace(";--8<--", "--8<--")
    for language in LANGUAGES:
        (repo / "docs" / language / CHAPTER).mkdir()
        (repo / "docs" / language / CHAPTER / "index.md").write_text(page, encoding="utf-8")
    line = name(blocks["yaml"]).rstrip("\n")
    for config in NAV_FILES:  # after the home page
        path = repo / config
        text, count = re.subn(r"^(nav:\n  - [^\n]*\n)", rf"\g<1>{line}\n", path.read_text(encoding="utf-8"),
                              flags=re.MULTILINE)
        assert count == 1, f"{config}: no nav list to add the chapter to"
        path.write_text(text, encoding="utf-8")
    home_line = name(blocks["docs/en/index.md"]).rstrip("\n")
    for home in HOME_PAGES:  # after the last chapter of the list
        path = repo / home
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        last = max(i for i, text in enumerate(lines) if re.match(r"\d+\. \*\*\[", text))
        end = next(i for i in range(last + 1, len(lines)) if not lines[i].startswith(" "))
        path.write_text("".join(lines[:end] + [home_line + "\n"] + lines[end:]), encoding="utf-8")


def preview_without_a_gpu(repo, blocks, site, problems_before):
    """Step 5: the guide's placeholder command, a strict build, and make check."""
    commands = [line.split("#")[0].split() for line in name(blocks["bash"]).splitlines() if line.strip()]
    placeholder = next(command for command in commands if "placeholder" in command)
    assert ["make", "check"] in commands, "the guide's preview does not run make check"
    assert "not measured yet" in succeeds(repo, "python", *placeholder[1:])
    succeeds(repo, "python", "scripts/build_site.py", "--site-dir", site)
    for language in LANGUAGES:
        html = page_text(site, language)
        assert "_scale_norm_kernel" in html, f"{language}: the kernel listing is missing"
        words = NOT_MEASURED[language]
        assert f"On the {words}, the kernel moves {words} GB/s" in re.sub(r"<[^>]+>", "", html), (
            f"{language}: the quotes do not say 'not measured yet' in the page's words")
        assert html.count(f"docs/data/{CHAPTER}/") >= 2, f"{language}: the table and provenance placeholders are missing"
        plot = site / ("" if language == "en" else language) / "data" / CHAPTER / (
            "bandwidth.svg" if language == "en" else f"bandwidth.{language}.svg")
        assert NOT_MEASURED[language] in plot.read_text(encoding="utf-8"), f"{language}: the placeholder plot"
    new = check_problems(repo) - problems_before
    assert len(new) == 1 and f"docs/data/{CHAPTER}/measurements.json did not come from a GPU" in new.pop(), (
        f"make check: the chapter adds problems besides its placeholder data: {new}")


def measured(repo, tmp_path, problems_before):
    """Step 6, stood in for: SYNTHETIC data, rendered; the page and browser tests on the chapter."""
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
        assert f"moves {BEST[language]} GB/s" in html, f"{language}: the quoted number is not in its format"
        assert "<td>SYNTHETIC</td>" in html, f"{language}: the provenance table is missing"
        assert f">{label('pct_copy', language)}</th>" in html, f"{language}: the table is not in its words"
        assert f"../data/{CHAPTER}/bandwidth.svg" in html, f"{language}: the plot is missing"
        home = built_page(site, language, "index.md").read_text(encoding="utf-8")
        assert f'href="{CHAPTER}/"' in home, f"{language}: the chapter is not in the navigation"
    refused = f"docs/data/{CHAPTER}/measurements.json did not come from a GPU (its GPU is 'SYNTHETIC')"
    assert any(refused in problem for problem in check_problems(repo) - problems_before), "make check took SYNTHETIC data"
    code, output = run_in(repo, "python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_measurements.py",
                          "-k", f"{CHAPTER} and (gpu or current_kernel)")
    assert code != 0 and f"docs/data/{CHAPTER}/measurements.json did not come from a GPU" in output, output[-3000:]


@pytest.mark.timeout(900)
def test_a_new_chapter_written_previewed_and_tested_without_a_gpu(tmp_path):
    repo = copy_of_the_repository(tmp_path / "repo")
    before = snapshot(repo)
    problems_before = check_problems(repo)  # whatever the working tree holds besides the new chapter
    blocks = guide_blocks()
    write_the_chapter(repo, blocks)
    succeeds(repo, "python", "-m", "pytest", "-q", "-p", "no:cacheprovider", f"snippets/{CHAPTER}")
    preview_without_a_gpu(repo, blocks, tmp_path / "preview", problems_before)
    measured(repo, tmp_path, problems_before)

    changed = {path for path, content in snapshot(repo).items() if before.get(path) != content}
    # what the build steps wrote (rendered data, mkdocs-jupyter's cache, bytecode) is not written by hand
    hand_written = {p for p in changed if not p.startswith((f"docs/data/{CHAPTER}/", ".cache/"))
                    and "__pycache__" not in p}
    expected = {f"snippets/{CHAPTER}/{file}" for file in [*PACKAGE, "report.py", "dataset.toml"]}
    expected |= {f"docs/{language}/{CHAPTER}/index.md" for language in LANGUAGES} | set(NAV_FILES) | set(HOME_PAGES)
    assert hand_written == expected, f"a new chapter touched more than its files: {sorted(hand_written ^ expected)}"
