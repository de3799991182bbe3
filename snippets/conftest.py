"""Run every snippet test on the GPU when CUDA is available, else through Triton's interpreter."""

import pytest

from normkit.runtime import DEVICE, INTERPRETED


def pytest_report_header(config):
    where = "Triton interpreter on the CPU" if INTERPRETED else f"CUDA ({DEVICE})"
    return f"normkernels snippets run on: {where}"


@pytest.fixture
def device():
    return DEVICE


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA GPU (skipped under the interpreter)")


def pytest_collection_modifyitems(config, items):
    if not INTERPRETED:
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU; the interpreter runs a smaller case")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
