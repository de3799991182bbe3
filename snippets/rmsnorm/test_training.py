import torch

from rmsnorm import training


def test_quick_integration_on_any_device():
    cfg = training.QUICK
    r = training.run_integration(cfg)
    assert r["kernel_forwards"] == cfg.steps and r["kernel_backwards"] == cfg.steps
    assert r["reload_diff"] == 0
    assert r["initial_output_diff"] < 1e-5 and r["initial_grad_diff"] < 1e-5
    assert abs(r["test_mse"]["reference"] - r["test_mse"]["kernel"]) < 1e-4


def test_twins_start_identical(device):
    ref, ker = training.twin_models(training.QUICK, device)
    assert ref.norm.use_kernel is False and ker.norm.use_kernel is True
    assert training.max_param_diff(ref, ker) == 0


def test_splits_are_seeded_and_disjoint(device):
    a = training.make_splits(training.QUICK, device)
    b = training.make_splits(training.QUICK, device)
    assert all(torch.equal(a[k][0], b[k][0]) for k in a)
    cfg = training.QUICK
    assert [a[k][0].shape[0] for k in ("train", "val", "test")] == [cfg.n_train, cfg.n_val, cfg.n_test]


def test_full_config_is_the_chapters():
    cfg = training.FULL
    assert (cfg.steps, cfg.batch) == (100, 32)
