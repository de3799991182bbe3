"""A new chapter takes a package, three pages and three navigation lines: the authoring guide's walkthrough.

The test follows "Add a chapter" in docs/en/authoring.md on a throwaway chapter in a copy of the
repository: it writes the package (kernel, test, benchmark, report), takes the registration, the
page and the navigation line from the guide's own code blocks, stands in for the GPU build with
SYNTHETIC measurements (this copy is never published), renders them with scripts/gpu_build.py,
runs the chapter's test and builds the site strictly in all three languages. Then it checks that
nothing outside those files had to change.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from html import unescape

import pytest

from sitecheck import DOCS, LANGUAGES, ROOT, built_page

import build_site  # scripts/, put on the path by sitecheck
from normkit.words import label

CHAPTER = "scalenorm"
NAV_FILES = list(build_site.LANGUAGES.values())

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
    "report.py": '''
        import json
        from pathlib import Path

        import matplotlib

        from normkit.tables import write_localized

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt  # noqa: E402


        def bandwidth_table(results, copy, t):
            rows = [f"| N | GB/s | {t('pct_copy')} |", "|--:|--:|--:|"]
            for r in results["rows"]:
                rows.append(f"| {r['N']} | {t.number(r['gb_per_s'], '.0f')} "
                            f"| {t.number(100 * r['gb_per_s'] / copy, '.1f')} |")
            return "\\n".join(rows) + "\\n"


        def quotes(measurements, t):
            best = max(r["gb_per_s"] for r in measurements["results"]["rows"])
            return {"gpu": measurements["provenance"]["gpu"], "best_gbps": t.number(best, ".1f")}


        def bandwidth_plot(results, path):
            with plt.rc_context({"svg.hashsalt": "normkernels"}):
                fig, ax = plt.subplots(figsize=(4, 3))
                ax.plot([r["N"] for r in results["rows"]], [r["gb_per_s"] for r in results["rows"]])
                fig.savefig(path, format="svg", metadata={"Date": None})
                plt.close(fig)


        def write(measurements, out_dir):
            results, copy = measurements["results"], measurements["provenance"]["copy_gb_per_s"]
            write_localized(out_dir, "bandwidth.md", lambda t: bandwidth_table(results, copy, t))
            write_localized(out_dir, "quotes.json", lambda t: json.dumps(quotes(measurements, t), sort_keys=True))
            bandwidth_plot(results, Path(out_dir) / "bandwidth.svg")
        ''',
}

# SYNTHETIC: what the GPU build would write; the throwaway copy is deleted after the test.
MEASUREMENTS = {
    "provenance": {
        "gpu": "Synthetic GPU", "sm_count": 1, "copy_gb_per_s": 1000.0, "driver": "-", "cuda": "-",
        "copy": {"median": 1000.0, "low": 990.0, "high": 1010.0, "runs": [990.0, 1000.0, 1010.0]},
        "torch": "-", "triton": "-", "python": "-", "date": "-", "git_commit": "-", "sources_sha256": "-",
        "sources": [], "quick": True,
    },
    "results": {"M": 4096, "rows": [{"N": 1024, "gb_per_s": 512.25}, {"N": 4096, "gb_per_s": 12345.25}]},
}
# the same best bandwidth, 12345.25 GB/s, as each language writes it (normkit.words.number)
BEST = {"en": "12345.2", "zh": "12345.2", "vi": "12\u00a0345,2"}


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


def copy_of_the_repository(destination):
    """The files git tracks or would track (what a fresh clone has, plus uncommitted work)."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout.split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination / name)


def snapshot(root):
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def run(command, cwd):
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True,
                            env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert result.returncode == 0, f"{' '.join(map(str, command))} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return result.stdout


@pytest.mark.timeout(600)
def test_a_new_chapter_in_a_package_three_pages_and_three_nav_lines(tmp_path):
    repo = tmp_path / "repo"
    copy_of_the_repository(repo)
    before = snapshot(repo)
    blocks = guide_blocks()
    # 1. the package, with its test; its report writes what the guide shows
    report = textwrap.dedent(PACKAGE["report.py"])
    assert blocks["python"].split("\n\n\n", 1)[1] in report, "the guide's report.write() is not the one tested"
    package = repo / "snippets" / CHAPTER
    package.mkdir()
    for file, text in PACKAGE.items():
        (package / file).write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    # 2. the registration, as the guide writes it
    (package / "dataset.toml").write_text(name(blocks["snippets/<chapter>/dataset.toml"]), encoding="utf-8")
    # 3. the pages (the English text stands in for the translations), includes unescaped
    page = name(blocks["docs/en/<chapter>/index.md"]).replace(";--8<--", "--8<--")
    for language in LANGUAGES:
        (repo / "docs" / language / CHAPTER).mkdir()
        (repo / "docs" / language / CHAPTER / "index.md").write_text(page, encoding="utf-8")
    # 4. one navigation line per language, after the home page
    line = name(blocks["yaml"]).rstrip("\n")
    for config in NAV_FILES:
        path = repo / config
        text, count = re.subn(r"^(nav:\n  - [^\n]*\n)", rf"\g<1>{line}\n", path.read_text(encoding="utf-8"),
                              flags=re.MULTILINE)
        assert count == 1, f"{config}: no nav list to add the chapter to"
        path.write_text(text, encoding="utf-8")
    # 5. the measurements: what the GPU build writes, then its render step
    data = repo / "docs" / "data" / CHAPTER
    data.mkdir()
    (data / "measurements.json").write_text(json.dumps(MEASUREMENTS), encoding="utf-8")
    rendered = run([sys.executable, "scripts/gpu_build.py", "render", "--only", CHAPTER], repo)
    assert f"rendered docs/data/{CHAPTER}" in rendered  # found through its registration

    run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"snippets/{CHAPTER}"], repo)
    site = tmp_path / "site"
    run([sys.executable, "scripts/build_site.py", "--site-dir", str(site)], repo)

    for language in LANGUAGES:
        html = unescape(built_page(site, language, f"{CHAPTER}/index.md").read_text(encoding="utf-8"))
        assert "_scale_norm_kernel" in html, f"{language}: the kernel listing is missing"
        assert f"moves {BEST[language]} GB/s" in html, f"{language}: the quoted number is not in its format"
        assert "<td>Synthetic GPU</td>" in html, f"{language}: the provenance table is missing"
        assert f">{label('pct_copy', language)}</th>" in html, f"{language}: the table is not in its words"
        assert f"../data/{CHAPTER}/bandwidth.svg" in html, f"{language}: the plot is missing"
        home = built_page(site, language, "index.md").read_text(encoding="utf-8")
        assert f'href="{CHAPTER}/"' in home, f"{language}: the chapter is not in the navigation"

    changed = {path for path, content in snapshot(repo).items() if before.get(path) != content}
    # what the build steps wrote (rendered data, mkdocs-jupyter's cache, bytecode) is not written by hand
    hand_written = {p for p in changed if not p.startswith((f"docs/data/{CHAPTER}/", ".cache/"))
                    and "__pycache__" not in p}
    expected = {f"snippets/{CHAPTER}/{file}" for file in [*PACKAGE, "dataset.toml"]}
    expected |= {f"docs/{language}/{CHAPTER}/index.md" for language in LANGUAGES} | set(NAV_FILES)
    assert hand_written == expected, f"a new chapter touched more than its files: {sorted(hand_written - expected)}"
