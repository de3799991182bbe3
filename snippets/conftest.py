"""Run every snippet test on the GPU when CUDA is available, else through Triton's interpreter.

A full run on a GPU (`pytest snippets`, nothing deselected) writes its record, docs/data/gpu-tests.json:
the commit, the fingerprint of every snippet file it ran (normkit.sources), what passed, failed and was
skipped, the device and the date. `make check` and the publishing workflow refuse a record that failed
or no longer covers the sources (scripts/gpu_build.py, gpu_test_problems).
"""

import datetime
import json
import platform
import time
from pathlib import Path

import pytest

from normkit import sources
from normkit.runtime import DEVICE, INTERPRETED

SNIPPETS = Path(__file__).resolve().parent
RECORD = SNIPPETS.parent / "docs" / "data" / "gpu-tests.json"


def pytest_report_header(config):
    where = "Triton interpreter on the CPU" if INTERPRETED else f"CUDA ({DEVICE})"
    return f"normkernels snippets run on: {where}"


@pytest.fixture
def device():
    return DEVICE


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA GPU (skipped under the interpreter)")
    config._normkernels_started = time.time()


def pytest_collection_modifyitems(config, items):
    if not INTERPRETED:
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU; the interpreter runs a smaller case")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


def _whole_tree(config):
    """Whether this run is `pytest snippets` in full: every test file collected, none deselected."""
    option = config.option
    args = [Path(a.split("::")[0]).resolve() for a in config.args] or [Path.cwd().resolve()]
    return (all(a == SNIPPETS or SNIPPETS.is_relative_to(a) for a in args) and "::" not in " ".join(config.args)
            and not option.keyword and not option.markexpr and not getattr(option, "lf", False)
            and not getattr(option, "deselect", None))


def _record(stats, started):
    import torch
    import triton

    count = lambda kind: len(stats.get(kind, []))  # noqa: E731
    prints = sources.fingerprints(sources.tree_files(SNIPPETS), SNIPPETS)
    return {
        "command": "pytest snippets",
        "commit": sources.git_commit(SNIPPETS.parent),
        "passed": count("passed"), "failed": count("failed"), "errors": count("error"),
        "skipped": count("skipped"),
        "device": torch.cuda.get_device_name(0), "torch": torch.__version__, "triton": triton.__version__,
        "cuda": torch.version.cuda, "python": platform.python_version(),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "duration_s": round(time.time() - started, 1),
        "sources_fingerprint": sources.combined(prints), "sources": prints,
    }


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    # the controller only (an xdist worker has workerinput); the interpreter's runs are not a GPU's
    if INTERPRETED or hasattr(config, "workerinput") or exitstatus not in (0, 1):  # 1: some failed
        return
    if not _whole_tree(config) or terminalreporter.stats.get("deselected"):
        terminalreporter.write_line("normkernels: not the whole of snippets/, so no GPU test record was written")
        return
    record = _record(terminalreporter.stats, config._normkernels_started)
    RECORD.parent.mkdir(parents=True, exist_ok=True)
    RECORD.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    terminalreporter.write_line(f"normkernels: GPU test record written to docs/data/gpu-tests.json "
                                f"({record['passed']} passed, {record['failed']} failed, {record['skipped']} skipped)")
