"""The chapter's timing (rmsnorm.timing): what it times, the bytes it counts, how it prints its figures.

On the CPU nothing is timed: a fake bench.gpu_us runs each step once, so that the complete calls the
chapter times are checked to compute the same thing. The figures of format_timing's test are SYNTHETIC,
made up to test the printing only.
"""

import inspect
import json

import pytest
import torch

from normkit import bench
from normkit.runtime import DEVICE
from rmsnorm import timing


def test_the_chapter_times_with_the_sites_protocol():
    assert inspect.signature(timing.gpu_time).parameters["protocol"].default is bench.PROTOCOL
    assert bench.PROTOCOL.repeats == 3 and bench.QUICK.repeats == 3
    labels = [s[0] for s in timing.SHAPES]
    assert labels == ["128x257_fp32", "4096x4096_fp16", "4096x4096_fp32"]
    assert timing.LARGE == {"4096x4096_fp16", "4096x4096_fp32"}
    assert set(timing.IMPLEMENTATIONS) == {"reference", "kernel", "torch"} and timing.SCOPES == ("fwd", "fwdbwd")
    assert timing.FIT_N == 4096 and timing.FIT_M == (256, 512, 1024, 2048, 4096)


def test_gpu_time_times_complete_calls(monkeypatch):
    """Without CUDA: a fake bench.gpu_us builds each step with make_step() and runs it once, as the
    graph capture would; the kernel, F.rms_norm and the reference must agree on y, dx and dgamma."""
    seen = {}

    def fake_gpu_us(make_step, copies=1, protocol=bench.PROTOCOL):
        step = make_step()
        seen.setdefault("runs", []).append((step(), step()))  # twice: a step is the same call every time
        return 1.0

    monkeypatch.setattr(timing.bench, "gpu_us", fake_gpu_us)
    m, n, dtype = 4, 257, torch.float32
    out = {}
    for scope in timing.SCOPES:
        for name, norm in timing.IMPLEMENTATIONS.items():
            make = timing.make_step(norm, scope, m, n, dtype, device=str(DEVICE))
            assert timing.bench.gpu_us(make, 1, bench.QUICK) == 1.0
            first, again = seen["runs"][-1]
            out[(scope, name)] = first
            if scope == "fwd":
                torch.testing.assert_close(again, first, rtol=0, atol=0)
            else:  # the gradients are returned, never accumulated: the second call gives the same
                for a, b in zip(again, first):
                    torch.testing.assert_close(a, b, rtol=0, atol=0)
    assert len(seen["runs"]) == len(timing.SCOPES) * len(timing.IMPLEMENTATIONS)

    y = out[("fwd", "reference")]
    assert y.shape == (m, n) and y.dtype == dtype
    for name in ("kernel", "torch"):
        torch.testing.assert_close(out[("fwd", name)], y, atol=1e-5, rtol=1e-4)
    dx, dgamma = out[("fwdbwd", "reference")]
    assert dx.shape == (m, n) and dgamma.shape == (n,)
    for name in ("kernel", "torch"):
        got_dx, got_dgamma = out[("fwdbwd", name)]
        torch.testing.assert_close(got_dx, dx, atol=1e-5, rtol=1e-4)
        torch.testing.assert_close(got_dgamma, dgamma, atol=1e-5, rtol=1e-4)


def test_make_step_builds_fresh_inputs_with_the_same_values():
    """Every copy a graph rotates through holds its own tensors, with the same (seeded) values."""
    make = timing.make_step(timing.IMPLEMENTATIONS["reference"], "fwd", 4, 257, torch.float32, device=str(DEVICE))
    a, b = make()(), make()()
    assert a.data_ptr() != b.data_ptr()
    torch.testing.assert_close(a, b, rtol=0, atol=0)


def test_min_bytes():
    assert timing.min_bytes(4096, 4096, torch.float16) == {"fwd": 2 * 4096 * 4096 * 2, "fwdbwd": 5 * 4096 * 4096 * 2}
    assert timing.min_bytes(128, 257, torch.float32) == {"fwd": 263168, "fwdbwd": 657920}


def _figure(median, low, high):
    """A SYNTHETIC figure of three repetitions."""
    return {"median": median, "low": low, "high": high, "runs": [low, median, high]}


def test_format_timing_prints_every_figure_with_its_range():
    us = {f"{scope}_{name}": _figure(10.0 * (i + 1), 10.0 * (i + 1) - 0.25, 10.0 * (i + 1) + 0.5)
          for i, (scope, name) in enumerate((s, n) for s in timing.SCOPES for n in timing.IMPLEMENTATIONS)}
    us["fwd_kernel"] = _figure(33.0, 32.8, 33.2)
    result = {"protocol": bench.protocol_record(bench.QUICK),
              "shapes": [{"label": "128x257_fp32", "large": False, "min_bytes": timing.min_bytes(128, 257, torch.float32),
                          "us": us},
                         {"label": "4096x4096_fp16", "large": True,
                          "min_bytes": timing.min_bytes(4096, 4096, torch.float16), "us": us}]}
    lines = timing.format_timing(result, copy_gb_per_s=4000.0).splitlines()
    assert lines[0] == ("protocol: CUDA-graph replay, 2 warm-up replays, median of 3 samples of 2 replays, "
                        "3 repetitions: median (range)")
    assert len(lines) == 1 + 2 * len(timing.SCOPES) * len(timing.IMPLEMENTATIONS)
    assert "  128x257_fp32    fwd     kernel     33.00 µs (32.80–33.20)" in lines
    assert "  128x257_fp32    fwd     reference  10.00 µs (9.75–10.50)" in lines
    # the large shape's kernel: 2*4096*4096*2 = 67108864 B in 33 µs = 2033.6 GB/s, 51 % of 4000
    assert "  4096x4096_fp16  fwd     kernel     33.00 µs (32.80–33.20)  = 51 % of copy" in lines
    assert not any("of copy" in line for line in lines if "4096x4096_fp16" not in line or " kernel " not in line)


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the message given without a GPU")
def test_run_timing_needs_a_gpu():
    with pytest.raises(RuntimeError, match="CUDA"):
        timing.run_timing(quick=True)


@pytest.mark.gpu
def test_quick_timing_on_gpu():
    r = timing.run_timing(quick=True)
    json.dumps(r)
    keys = {f"{scope}_{name}" for scope in timing.SCOPES for name in timing.IMPLEMENTATIONS}
    assert r["protocol"] == bench.protocol_record(bench.QUICK)
    assert [s["label"] for s in r["shapes"]] == ["128x257_fp32"]
    for s in r["shapes"] + r["fit"]["points"]:
        assert set(s["us"]) == keys
        for f in s["us"].values():
            assert len(f["runs"]) == bench.QUICK.repeats and 0 < f["low"] <= f["median"] <= f["high"]
    assert r["fit"]["m"] == list(timing.FIT_M[:2]) and set(r["fit"]["figures"]) == keys
    assert all(set(fit) == {"fixed_us", "gb_per_s"} for fit in r["fit"]["figures"].values())
    assert r["host"]["label"] == "128x257_fp32" and set(r["host"]["us"]) == keys
    assert all(f["median"] > 0 for f in r["host"]["us"].values())
    assert "protocol" in timing.format_timing(r, 1000.0)
