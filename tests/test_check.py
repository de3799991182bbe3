"""make check: the author's checks pass on the repository, and all of them run in seconds."""

import subprocess
import sys
import time

import pytest

from sitecheck import ROOT

import check  # scripts/check.py (sitecheck puts scripts/ on sys.path)

SECONDS = 30  # the most `make check` may take on the project's two-core machines


@pytest.mark.parametrize("title", check.CHECKS)
def test_the_repository_passes(title):
    problems = check.CHECKS[title]()
    assert not problems, "\n".join(problems)


def test_make_check_runs_in_seconds():
    started = time.monotonic()
    result = subprocess.run([sys.executable, "scripts/check.py"], cwd=ROOT, capture_output=True, text=True)
    took = time.monotonic() - started
    assert result.returncode == 0, result.stdout + result.stderr
    assert took < SECONDS, f"make check took {took:.0f} s, more than {SECONDS} s:\n{result.stdout}"
