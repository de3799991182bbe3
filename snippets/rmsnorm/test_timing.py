import pytest
import torch

from normkit.runtime import DEVICE
from rmsnorm import timing


def test_protocol_is_the_chapters():
    assert timing.PROTOCOL == {"warmup_calls": 20, "samples": 50, "calls_per_sample": 20}
    labels = [s[0] for s in timing.SHAPES]
    assert "128x257_fp32" in labels and "4096x4096_fp16" in labels


def test_time_shape_times_complete_calls(monkeypatch):
    """Without CUDA events: a fake timer that runs each closure once and checks the protocol passed in."""
    seen = []

    def fake_median(fn, **protocol):
        assert protocol == timing.PROTOCOL
        out = fn()
        seen.append(out)
        return 1.0

    monkeypatch.setattr(timing.bench, "median_call_ms", fake_median)
    ms = timing.time_shape(4, 257, torch.float32, device=str(DEVICE))
    assert set(ms) == {"fwd_reference", "fwdbwd_reference", "fwd_kernel", "fwdbwd_kernel"}
    fwd_ref, fwdbwd_ref, fwd_ker, fwdbwd_ker = seen
    torch.testing.assert_close(fwd_ker, fwd_ref, atol=1e-5, rtol=1e-4)
    for a, b in zip(fwdbwd_ker, fwdbwd_ref):  # (dx, dgamma) from both paths
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-4)


def test_min_bytes():
    assert timing.min_bytes(4096, 4096, torch.float16) == {"fwd": 2 * 4096 * 4096 * 2, "fwdbwd": 5 * 4096 * 4096 * 2}


@pytest.mark.gpu
def test_quick_timing_on_gpu():
    r = timing.run_timing(quick=True)
    assert r["shapes"][0]["us"]["fwd_kernel"] > 0
    assert "protocol" in timing.format_timing(r, 1000.0)
