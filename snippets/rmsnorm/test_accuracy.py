import pytest
import torch

from rmsnorm import accuracy


def test_campaign_has_72_cases_and_declared_tolerances():
    cases = accuracy.campaign_cases()
    assert len(cases) == 72 and len(set(cases)) == 72
    assert accuracy.TOLERANCES[torch.float32] == {"atol": 1e-5, "rtol": 1e-4}
    assert accuracy.TOLERANCES[torch.float16] == {"atol": 3e-3, "rtol": 3e-3}
    assert {257, 256, 4096} <= {c.n for c in cases} and {1, 17} <= {c.m for c in cases}


def test_compare_flags_one_bad_element_and_nan():
    want = torch.ones(100)
    got = want.clone()
    assert accuracy.compare(got, want, torch.float32)["bad_elements"] == 0
    got[7] += 1e-3  # one element out of tolerance is a failure, whatever the mean error
    assert accuracy.compare(got, want, torch.float32)["bad_elements"] == 1
    got[8] = float("nan")
    assert accuracy.compare(got, want, torch.float32)["bad_elements"] == 2


def test_interpreter_subset_is_labelled_and_passes():
    """CPU subset (seed 0, M*N <= 40,000: 30 of the 72 cases); the GPU runs all 72 below."""
    cases = accuracy.interpreter_cases()
    assert len(cases) == 30
    result = accuracy.run_campaign(cases)
    assert result["passed"], result["failures"]
    assert {s["quantity"] for s in result["per_quantity_dtype"]} == {"y", "dx", "dgamma"}
    assert all(s["cases"] == 15 for s in result["per_quantity_dtype"])
    assert "PASS" in accuracy.format_campaign(result, "dx")


def test_a_failing_case_is_reported(monkeypatch):
    import rmsnorm.accuracy as acc

    real = acc.rms_norm
    monkeypatch.setattr(acc, "rms_norm", lambda x, g: real(x, g) * 1.01)
    result = acc.run_campaign([acc.Case(2, 257, torch.float32, 0)])
    assert not result["passed"] and result["failures"][0]["quantity"] == "y"
    assert "FAIL" in acc.format_campaign(result)


@pytest.mark.gpu
def test_full_campaign_on_gpu():
    result = accuracy.run_campaign()
    assert result["cases"] == 72
    assert result["passed"], result["failures"]
