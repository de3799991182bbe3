"""make check: the author's checks pass on the repository, and all of them run in seconds."""

import subprocess
import sys
import time

import pytest

from sitecheck import PLACEHOLDER_DATA_SETS, ROOT

import check  # scripts/check.py (sitecheck puts scripts/ on sys.path)

SECONDS = 30  # the most `make check` may take on the project's two-core machines


@pytest.mark.parametrize("title", check.CHECKS)
def test_the_repository_passes(title):
    # placeholder data is refused by make check, skipped by the tests (their summary line names it)
    problems = [p for p in check.checks_skipping(PLACEHOLDER_DATA_SETS)[title]()
                if not check.placeholder_data(p, PLACEHOLDER_DATA_SETS)]
    assert not problems, "\n".join(problems)


def test_make_check_runs_in_seconds():
    started = time.monotonic()
    result = subprocess.run([sys.executable, "scripts/check.py", "--skip-placeholders"], cwd=ROOT,
                            capture_output=True, text=True)
    took = time.monotonic() - started
    assert result.returncode == 0, result.stdout + result.stderr
    assert took < SECONDS, f"make check took {took:.0f} s, more than {SECONDS} s:\n{result.stdout}"


def test_placeholder_data_is_refused_by_make_check_and_listed_in_one_line_by_make_test():
    line = "docs/data/addnorm/measurements.json did not come from a GPU (it is placeholder data, ...)"
    assert check.placeholder_data(line, ["addnorm"]) and not check.placeholder_data(line, ["add"])
    assert not check.placeholder_data("docs/en/addnorm/index.md: ...", ["addnorm"])


def test_a_page_that_uses_no_glossary_term_is_named_with_its_fix():
    page = "---\ndescription: A kernel.\n---\n\n# The kernel\n\n```python\nkernel = 1\n```\n\nNothing here.\n"
    problem = check.glossary_problem(page, "docs/zh/x/index.md", "zh")
    assert problem.startswith("docs/zh/x/index.md uses no glossary term") and "untranslated: true" in problem
    assert check.glossary_problem(page + "\n每一行由一个程序实例处理。\n", "docs/zh/x/index.md", "zh") is None
    assert check.glossary_problem(page.replace("Nothing", "One kernel"), "docs/en/x/index.md", "en") is None


def test_a_block_of_two_sections_is_named_with_its_fix():
    one = '```python\n--8<-- "normkit/fastop.py:ops"\n```\n'
    two = '```python\n--8<-- "normkit/fastop.py:autograd"\n--8<-- "normkit/fastop.py:function"\n```\n'
    assert check.shared_blocks(one + "\nText.\n\n" + one, "docs/en/x/index.md") == []
    (problem,) = check.shared_blocks(two, "docs/en/x/index.md")
    assert problem.startswith("docs/en/x/index.md: a fenced block includes 2 sections (normkit/fastop.py:autograd")
    assert "give each its own block" in problem
