"""faster.probes.call_spans takes a profiler's events apart call by call (the host's share on the
Going faster pages). Profiled here on the CPU: a marked call of a Python autograd Function whose
forward allocates three times, and whose backward runs inside the call too."""

import pytest
import torch

from faster.probes import TRACE_MARK, call_spans


class _Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        for _ in range(3):  # three adjacent allocations: one span, count 3
            torch.empty(4)
        return x * 2

    @staticmethod
    def backward(ctx, dy):
        return dy * 2


def profiled_calls(calls=3):
    x = torch.ones(8, requires_grad=True)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        for _ in range(calls):
            with torch.profiler.record_function(TRACE_MARK):
                torch.autograd.grad(_Scale.apply(x).sum(), x)
        torch.empty(1)  # after the last call: in no call's spans
    return call_spans(prof.events())


def test_each_marked_call_is_taken_apart():
    calls = profiled_calls(3)
    assert len(calls) == 3
    for call in calls:
        spans = call["spans"]
        assert spans, "no host events inside a marked call"
        assert all(0 <= s["start_us"] <= call["call_us"] and s["us"] >= 0 for s in spans)
        assert [s["start_us"] for s in spans] == sorted(s["start_us"] for s in spans)
        assert all(s["depth"] <= 2 for s in spans) and any(s["depth"] == 0 for s in spans)
        # the outermost spans on the caller's thread fit inside the call, one after another
        top = [s for s in spans if s["thread"] == 0 and s["depth"] == 0]
        assert sum(s["us"] for s in top) + call["outside_us"] == pytest.approx(call["call_us"])
        assert call["launches"] == 0 and call["launch_us"] == 0  # no GPU: nothing launched


def test_adjacent_spans_of_one_name_are_merged():
    for call in profiled_calls(2):
        empties = [s for s in call["spans"] if s["name"] == "aten::empty"]
        assert any(s["count"] == 3 for s in empties), empties
        names = [(s["name"], s["thread"], s["depth"]) for s in call["spans"]]
        assert all(a != b for a, b in zip(names, names[1:])), "two adjacent spans of one name and level"


def test_uncovered_time_counts_overlaps_once():
    from faster.probes import _uncovered
    assert _uncovered(10.0, [(1, 3), (2, 5), (7, 8), (9, 12)]) == pytest.approx(10 - 4 - 1 - 1)
    assert _uncovered(5.0, []) == 5.0
