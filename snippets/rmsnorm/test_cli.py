import json

import pytest

from rmsnorm.__main__ import main
from rmsnorm.benchmark import measure
from normkit.runtime import INTERPRETED


@pytest.mark.parametrize("argv, expect", [
    (["reference"], "gradcheck of the float64 reference: passed"),
    (["exercise"], "CAUGHT"),
    (["check-forward", "--quick"], "PASS"),
])
def test_commands_print_a_report(argv, expect, capsys):
    assert main(argv) == 0
    assert expect in capsys.readouterr().out


@pytest.mark.skipif(not INTERPRETED, reason="the refusal only happens without CUDA")
def test_benchmark_refuses_without_cuda(capsys):
    assert main(["benchmark"]) == 2
    assert "needs a CUDA GPU" in capsys.readouterr().out


def test_measure_quick_is_json_serialisable():
    r = measure(quick=True, include_timing=False)
    json.dumps(r)
    assert r["accuracy"]["passed"] and r["training"]["reload_diff"] == 0


@pytest.mark.gpu
def test_measure_quick_on_gpu():
    r = measure(quick=True)
    json.dumps(r)
    assert "timing" in r
