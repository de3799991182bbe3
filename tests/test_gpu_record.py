"""The record of `pytest snippets` on a GPU: it must have passed, on the snippet files as they are now."""

import json
import shutil

from sitecheck import PLACEHOLDER_DATA_SETS, ROOT

import gpu_build  # scripts/, put on the path by sitecheck
from normkit import sources


def test_the_committed_record_passed_on_the_current_sources():
    problems = gpu_build.gpu_test_problems(skip=PLACEHOLDER_DATA_SETS)  # a placeholder chapter: not yet
    assert not problems, "\n".join(problems)


def _tree(tmp_path):
    snippets = tmp_path / "snippets"
    shutil.copytree(ROOT / "snippets", snippets, ignore=shutil.ignore_patterns("__pycache__", "*.json"))
    return snippets


def _record(tmp_path, snippets, **fields):
    prints = sources.fingerprints(sources.tree_files(snippets), snippets)
    record = {"commit": "0123456789abcdef", "passed": 300, "failed": 0, "errors": 0, "skipped": 3,
              "device": "NVIDIA H200", "date": "2026-12-04 18:00 UTC", "sources": prints,
              "sources_fingerprint": sources.combined(prints), **fields}
    path = tmp_path / "gpu-tests.json"
    path.write_text(json.dumps(record), encoding="utf-8")
    return path


def test_a_current_passing_record_has_no_problem(tmp_path):
    snippets = _tree(tmp_path)
    assert gpu_build.gpu_test_problems(_record(tmp_path, snippets), snippets) == []


def test_a_missing_record_names_the_command_that_makes_one(tmp_path):
    (problem,) = gpu_build.gpu_test_problems(tmp_path / "gpu-tests.json", _tree(tmp_path))
    assert "does not exist" in problem and "python scripts/gpu_build.py tests" in problem


def test_a_failed_run_is_refused(tmp_path):
    snippets = _tree(tmp_path)
    (problem,) = gpu_build.gpu_test_problems(_record(tmp_path, snippets, failed=2), snippets)
    assert "2 failed" in problem and "NVIDIA H200" in problem and "0123456789ab" in problem


def test_a_changed_file_makes_the_record_stale_and_a_tidy_up_does_not(tmp_path):
    snippets = _tree(tmp_path)
    record = _record(tmp_path, snippets)
    kernel = snippets / "rmsnorm" / "ops.py"
    text = kernel.read_text(encoding="utf-8")
    kernel.write_text("# a comment\n" + text.replace("\n\n\n", "\n\n\n\n", 1), encoding="utf-8")
    assert gpu_build.gpu_test_problems(record, snippets) == []
    kernel.write_text(text + "\nEXTRA = 1\n", encoding="utf-8")
    (problem,) = gpu_build.gpu_test_problems(record, snippets)
    assert "snippets/rmsnorm/ops.py changed since the GPU tests ran" in problem
    assert "python scripts/gpu_build.py tests" in problem
    (snippets / "rmsnorm" / "new_kernel.py").write_text("X = 1\n", encoding="utf-8")
    (problem,) = gpu_build.gpu_test_problems(record, snippets)
    assert "snippets/rmsnorm/new_kernel.py" in problem


def test_a_placeholder_chapter_is_left_out_only_when_asked(tmp_path):
    snippets = _tree(tmp_path)
    record = _record(tmp_path, snippets)
    (snippets / "newnorm").mkdir()
    (snippets / "newnorm" / "ops.py").write_text("X = 1\n", encoding="utf-8")
    (problem,) = gpu_build.gpu_test_problems(record, snippets)
    assert "snippets/newnorm/ops.py" in problem
    assert gpu_build.gpu_test_problems(record, snippets, skip=["newnorm"]) == []
