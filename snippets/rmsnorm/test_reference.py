import pytest
import torch

from rmsnorm import examples
from rmsnorm.reference import check_reference_gradients, manual_backward, rmsnorm_reference


def test_worked_two_values():
    ex = examples.two_values()
    assert ex["mean_sq"] == 12.5
    assert ex["r"] == pytest.approx(0.282843, abs=1e-6)
    assert ex["y"] == pytest.approx([0.848528, 1.131371], abs=1e-6)
    assert ex["y_gamma"] == pytest.approx([1.697056, 0.565685], abs=1e-6)
    assert ex["mean_ux"] == 5.5
    assert ex["dx"] == pytest.approx([-0.090510, 0.067882], abs=1e-6)


def test_worked_row_of_ones():
    o = examples.row_of_ones(257)
    assert o["block"] == 512
    assert o["y_right"] == pytest.approx(0.9999995, abs=1e-7)
    assert o["y_wrong"] == pytest.approx(1.411458, abs=1e-6)
    same = examples.row_of_ones(256)
    assert same["block"] == 256 and same["y_wrong"] == same["y_right"]


def test_worked_scratch_sizes():
    assert examples.scratch(128, 257)["bytes"] == 131_584
    assert examples.scratch(128, 257)["gamma_programs"] == 9
    assert examples.scratch(4096, 4096)["bytes"] == 64 * 2**20


def test_format_examples_shows_the_numbers():
    text = examples.format_examples()
    for s in ("0.848528", "1.131371", "1.697056", "0.565685", "\u22120.090510", "0.067882", "0.9999995", "131,584"):
        assert s in text


def test_format_examples_writes_the_numbers_and_words_of_the_readers_language(monkeypatch):
    monkeypatch.setenv("NORMKERNELS_LANGUAGE", "vi")  # what scripts/notebooks.py sets for the vi notebook
    text = examples.format_examples()
    for s in ("[0,848528; 1,131371]", "\u22120,090510", "0,9999995", "131\u00a0584 byte", "hàng gồm 257 số 1"):
        assert s in text
    assert "BLOCK = 512" in text and "4096x4096" in text  # sizes stay as code writes them


def test_gradcheck_and_manual_backward():
    r = check_reference_gradients()
    assert r["gradcheck"]
    assert r["manual_vs_autograd"] < 1e-12


def test_reference_dtypes():
    x = torch.randn(3, 5, dtype=torch.float16)
    g = torch.ones(5, dtype=torch.float16)
    assert rmsnorm_reference(x, g).dtype == torch.float16
    dx, dg = manual_backward(x, g, torch.randn(3, 5, dtype=torch.float16))
    assert dx.dtype == torch.float16 and dg.dtype == torch.float16
    assert rmsnorm_reference(x.double(), g.double()).dtype == torch.float64


def test_zero_row_is_finite():
    y = rmsnorm_reference(torch.zeros(2, 4), torch.ones(4))
    assert torch.equal(y, torch.zeros(2, 4))


def test_dgamma_is_a_sum_not_a_mean():
    x = torch.randn(17, 6, dtype=torch.float64)
    g = torch.ones(6, dtype=torch.float64)
    dy = torch.randn(17, 6, dtype=torch.float64)
    _, dg = manual_backward(x, g, dy)
    per_row = [manual_backward(x[i : i + 1], g, dy[i : i + 1])[1] for i in range(17)]
    assert torch.allclose(dg, sum(per_row))
