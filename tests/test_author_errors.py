"""Every mistake an author can make fails fast, with one sentence that says what to fix.

Each test makes one mistake in a throwaway copy of the repository, runs what an author runs
(`make check`, `make site`, the GPU build's steps, the notebook build) and checks the message: it
names the file, what is missing, what exists instead and the command that fixes it, and no
traceback is printed.
"""

import json
import os
import re
import socket
import subprocess
import sys
import threading
import time

import pytest

from sitecheck import copy_of_the_repository, run_in

import gpu_build  # scripts/, put on the path by sitecheck

MAKE_CHECK = ("python", "scripts/check.py")


@pytest.fixture
def copy(tmp_path):
    return copy_of_the_repository(tmp_path / "repo")


def edit(copy, path, old, new, count=1):
    text = (copy / path).read_text(encoding="utf-8")
    assert text.count(old) >= count, f"{path} no longer holds {old!r}: update this test"
    (copy / path).write_text(text.replace(old, new, count), encoding="utf-8")


def append(copy, path, text):
    with (copy / path).open("a", encoding="utf-8") as file:
        file.write(text)


def fails_saying(copy, command, *fragments):
    """Run the command in the copy; it must fail, without a traceback, saying every fragment."""
    code, output = run_in(copy, *command)
    shown = f"{' '.join(map(str, command))}:\n{output[-4000:]}"
    assert code != 0, f"this mistake went through: {shown}"
    assert "Traceback" not in output, f"a traceback for an author's mistake: {shown}"
    for fragment in fragments:
        assert fragment in output, f"the message does not say {fragment!r}: {shown}"
    return output


def make_site(copy):
    return ("python", "scripts/build_site.py", "--site-dir", copy.parent / "site")


# --- No GPU, no chapter: the way round it is named wherever an author meets the wall.

def register(copy, name):
    (copy / "snippets" / name).mkdir()
    (copy / "snippets" / name / "dataset.toml").write_text(
        f'measure = "{name}.benchmark"\nrender = "{name}.report"\nsources = ["{name}", "normkit"]\n', encoding="utf-8")


def test_a_data_set_without_measurements_names_the_placeholder_command(copy):
    register(copy, "addnorm")
    append(copy, "docs/en/triton.md", "\nOn the {{ addnorm.gpu }}.\n")
    preview = ".venv/bin/python scripts/gpu_build.py placeholder --only addnorm"
    fails_saying(copy, make_site(copy), "docs/en/triton.md", "{{ addnorm.gpu }}", "docs/data/addnorm/", preview)
    fails_saying(copy, MAKE_CHECK, "docs/data/addnorm/measurements.json does not exist", preview)
    fails_saying(copy, ("python", "scripts/gpu_build.py", "render", "--only", "addnorm"),
                 "docs/data/addnorm/measurements.json does not exist", preview)
    fails_saying(copy, ("python", "scripts/gpu_build.py", "measure", "--only", "addnorm"),
                 "needs a CUDA GPU, and this machine has none", preview)
    fails_saying(copy, ("python", "scripts/gpu_build.py", "render", "--only", "addrmsnorm"),
                 "no data set 'addrmsnorm'", "snippets/addrmsnorm/dataset.toml", "addnorm")


def test_a_chapter_copied_from_the_template_under_a_bad_or_taken_name(copy):
    fails_saying(copy, ("python", "scripts/new_chapter.py", "Add-Norm"), "'Add-Norm' cannot name a chapter",
                 "lower-case letters, digits and _")
    fails_saying(copy, ("python", "scripts/new_chapter.py", "rmsnorm"), "snippets/rmsnorm/ already exists",
                 "pick another name")


def test_a_placeholder_needs_the_reports_synthetic_test_and_names_where_the_report_failed(copy):
    register(copy, "addnorm")
    placeholder = ("python", "scripts/gpu_build.py", "placeholder", "--only", "addnorm")
    fails_saying(copy, placeholder, "snippets/addnorm/test_report.py does not exist", "synthetic_measurements()",
                 "templates/chapter/snippets/scalenorm/test_report.py")
    (copy / "snippets" / "addnorm").rename(copy / "addnorm-registration")
    run_in(copy, "python", "scripts/new_chapter.py", "addnorm")
    edit(copy, "snippets/addnorm/report.py", '    best = max(results["rows"]', '    best = max(results["wors"]')
    line = next(i for i, text in enumerate((copy / "snippets/addnorm/report.py").read_text().splitlines(), 1)
                if '"wors"' in text)
    fails_saying(copy, placeholder, "snippets/addnorm/report.py failed on the SYNTHETIC measurements of "
                 "snippets/addnorm/test_report.py", "KeyError", f"snippets/addnorm/report.py:{line}",
                 "pytest snippets/addnorm/test_report.py")


def test_a_misspelt_quote_key_of_a_chapter_not_measured_yet_stays_an_error(copy):
    run_in(copy, "python", "scripts/new_chapter.py", "addnorm")
    append(copy, "docs/en/addnorm/index.md", "\nAt best {{ addnorm.best_gbsp }}.\n")
    placeholder = ("python", "scripts/gpu_build.py", "placeholder", "--only", "addnorm")
    assert run_in(copy, *placeholder)[0] == 0
    expected = ("docs/en/addnorm/index.md", "{{ addnorm.best_gbsp }} is not in docs/data/addnorm/quotes.json",
                "did you mean {{ addnorm.best_gbps }}", "snippets/addnorm/report.py writes: add it there")
    fails_saying(copy, MAKE_CHECK, *expected)
    assert run_in(copy, *placeholder)[0] == 0  # run again, as the message says after a new key: still an error
    fails_saying(copy, MAKE_CHECK, *expected)


@pytest.mark.parametrize("provenance", [
    {"gpu": "SYNTHETIC", "sm_count": 132, "driver": "580.159.04", "cuda": "13.0", "l2_bytes": 62914560},
    gpu_build.PLACEHOLDER,
], ids=["synthetic", "placeholder"])
def test_data_that_did_not_come_from_a_gpu_is_refused_by_name(copy, provenance):
    path = copy / "docs" / "data" / "rmsnorm" / "measurements.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    document["provenance"] |= provenance  # the sources hash stays right: only the origin is wrong
    path.write_text(json.dumps(document), encoding="utf-8")
    output = fails_saying(copy, MAKE_CHECK, "docs/data/rmsnorm/measurements.json did not come from a GPU",
                          "python scripts/gpu_build.py --only rmsnorm")
    assert "changed since the measurement" not in output, "the data's origin is wrong, not its sources"


# --- Mistakes in a page: the build stops on them, and make check lists them all.

def test_a_missing_section_names_the_section_the_file_and_the_sections_it_marks(copy):
    append(copy, "docs/en/rmsnorm/index.md", '\n```python\n--8<-- "rmsnorm/ops.py:launcher"\n```\n')
    expected = ("docs/en/rmsnorm/index.md", "section 'launcher'", "snippets/rmsnorm/ops.py", "it marks: contract",
                "# --8<-- [start:launcher]")
    fails_saying(copy, make_site(copy), *expected)
    fails_saying(copy, MAKE_CHECK, *expected)


def test_a_misspelt_data_file_names_the_file_that_exists(copy):
    append(copy, "docs/en/rmsnorm/index.md", '\n--8<-- "rmsnorm/timng.md"\n')
    fails_saying(copy, MAKE_CHECK, "docs/en/rmsnorm/index.md", "'rmsnorm/timng.md'", "did you mean rmsnorm/timing.md?")


def test_the_guides_escaped_include_copied_as_written_would_show_as_text(copy):
    append(copy, "docs/en/rmsnorm/index.md", '\n```python\n;--8<-- "rmsnorm/ops.py:contract"\n```\n')
    expected = ("docs/en/rmsnorm/index.md", "starts with ';'", 'write it as --8<-- "rmsnorm/ops.py:contract"')
    fails_saying(copy, make_site(copy), *expected)
    fails_saying(copy, MAKE_CHECK, *expected)


def test_a_placeholder_with_a_hyphen_is_not_printed(copy):
    append(copy, "docs/en/rmsnorm/index.md", "\nThe limit is {{ rmsnorm.max-n }}.\n")
    expected = ("docs/en/rmsnorm/index.md", "{{ rmsnorm.max-n }} would be printed as it is",
                "did you mean {{ rmsnorm.max_n }}?")
    fails_saying(copy, make_site(copy), *expected)
    fails_saying(copy, MAKE_CHECK, *expected)


def test_an_unknown_quote_key_names_the_keys_that_come_closest(copy):
    append(copy, "docs/zh/rmsnorm/index.md", "\n上限是 {{ rmsnorm.max_nn }}。\n")
    fails_saying(copy, MAKE_CHECK, "docs/zh/rmsnorm/index.md", "is not in docs/data/rmsnorm/quotes.zh.json",
                 "did you mean {{ rmsnorm.max_n }}")


def test_a_listing_wider_than_the_code_box_names_each_line_and_its_columns(copy):
    edit(copy, "snippets/rmsnorm/ops.py", "# --8<-- [start:contract]\n",
         "# --8<-- [start:contract]\n# " + "x" * 96 + "\n")
    expected = ("snippets/rmsnorm/ops.py:", "(98 columns): section 'contract' has 1 line wider than the code box's 88 "
                "columns", "wrap it in the source")
    fails_saying(copy, make_site(copy), *expected)
    output = fails_saying(copy, MAKE_CHECK, *expected)
    line = next(i for i, text in enumerate((copy / "snippets/rmsnorm/ops.py").read_text().splitlines(), 1)
                if text.startswith("# xxx"))
    assert f"snippets/rmsnorm/ops.py:{line} (98 columns)" in output, output


def test_a_figure_without_a_caption_and_a_plot_drawn_as_paths(copy):
    edit(copy, "docs/vi/rmsnorm/index.md", '(../data/rmsnorm/timing.svg){ width="360" }\n/// caption',
         '(../data/rmsnorm/timing.svg){ width="360" }\n')
    svg = copy / "docs" / "data" / "rmsnorm" / "timing.zh.svg"
    svg.write_text(re.sub(r"font-size[=:]\s*\"?[0-9.]+\"?;?", "", svg.read_text(encoding="utf-8")), encoding="utf-8")
    fails_saying(copy, MAKE_CHECK, "docs/vi/rmsnorm/index.md: the image ../data/rmsnorm/timing.svg has no caption",
                 "'/// caption'", "docs/data/rmsnorm/timing.zh.svg draws its labels as paths", "'svg.fonttype': 'none'")


# --- Languages out of step: the one that moved is named, with its configuration.

def test_a_page_and_its_nav_line_missing_in_one_language(copy):
    (copy / "docs" / "zh" / "triton.md").unlink()
    edit(copy, "mkdocs.zh.yml", "  - 一页读懂 Triton: triton.md\n", "")
    expected = ("docs/zh/triton.md is missing", "docs/en/triton.md exists", "write the zh page at that path")
    fails_saying(copy, make_site(copy), *expected)
    fails_saying(copy, MAKE_CHECK, *expected)


def test_a_nav_line_missing_in_one_configuration_names_it(copy):
    edit(copy, "mkdocs.vi.yml", "  - Triton trong một trang: triton.md\n", "")
    expected = ("mkdocs.vi.yml: docs/vi/triton.md is in no nav line", "add one to the nav of mkdocs.vi.yml")
    fails_saying(copy, make_site(copy), *expected)
    fails_saying(copy, MAKE_CHECK, *expected)


def test_when_english_changed_english_is_named(copy):
    edit(copy, "docs/en/triton.md", "## Programs and the grid\n", "## Programs and the grid\n\n### A new part\n")
    output = fails_saying(copy, MAKE_CHECK, "docs/en/triton.md is out of step with its translations in its headings",
                          "fix docs/en/triton.md first", "write the same change into docs/zh/triton.md and "
                          "docs/vi/triton.md, each in its own language")
    assert "make docs/zh/triton.md match" not in output, "the translations are not the pages at fault"


def test_when_a_translation_drifted_the_translation_is_named(copy):
    edit(copy, "docs/zh/triton.md", "\n## ", "\n### 多出来的一节\n\n## ")
    output = fails_saying(copy, MAKE_CHECK, "docs/zh/triton.md drifted from docs/en/triton.md in its headings",
                          "make docs/zh/triton.md match the English page")
    assert "docs/vi/triton.md" not in output, "the Vietnamese page did not drift"


def test_a_chapter_missing_from_a_home_page(copy):
    edit(copy, "docs/vi/index.md", "](rmsnorm/index.md)", "](rmsnorm/)")
    fails_saying(copy, MAKE_CHECK, "docs/vi/index.md does not link the chapter rmsnorm", "(rmsnorm/index.md)")


# --- A notebook source edited without its build: the command that rebuilds it is named.

def test_a_notebook_source_edited_without_its_build(copy):
    edit(copy, "notebooks/en/rmsnorm.md", "Every kernel is imported; none is copied here.",
         "Every kernel is imported from snippets/; none is copied here.")
    expected = ("docs/en/notebooks/rmsnorm.ipynb cell", "differs from notebooks/en/rmsnorm.md",
                ".venv/bin/python scripts/notebooks.py build")
    fails_saying(copy, make_site(copy), *expected)
    fails_saying(copy, MAKE_CHECK, *expected)
    fails_saying(copy, ("python", "scripts/notebooks.py", "check"), *expected)


def test_a_taken_port_names_the_make_serve_that_takes_another(copy):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        fails_saying(copy, ("python", "scripts/serve.py", "--language", "zh", "--port", port),
                     f"port {port} on 127.0.0.1 is taken", f"make serve PORT={port + 1}")
        fails_saying(copy, ("python", "scripts/serve.py", "--site", "site", "--port", port), f"make preview PORT=")


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_make_serve_rebuilds_an_edited_notebook(copy):
    """`make serve` watches notebooks/: an edited source reaches its .ipynb, and so the preview."""
    command = [sys.executable, "scripts/serve.py", "--port", str(free_port())]  # what make serve PORT=... runs
    server = subprocess.Popen(command, cwd=copy, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    notebook = copy / "docs" / "en" / "notebooks" / "rmsnorm.ipynb"
    try:
        for line in server.stdout:
            if "Serving on" in line:
                break
        threading.Thread(target=server.stdout.read, daemon=True).start()  # keep its pipe from filling up
        edit(copy, "notebooks/en/rmsnorm.md", "none is copied here.", "none is copied here, not one.")
        deadline = time.monotonic() + 120
        while "not one." not in notebook.read_text(encoding="utf-8") and time.monotonic() < deadline:
            time.sleep(1)
        assert "not one." in notebook.read_text(encoding="utf-8"), "make serve did not rebuild the edited notebook"
    finally:
        server.terminate()
        server.wait(timeout=30)
