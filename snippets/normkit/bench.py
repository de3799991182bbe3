"""One timing helper for every chapter, and the copy bandwidth the results are compared to."""

import statistics

import torch


def median_call_ms(fn, warmup_calls=20, samples=50, calls_per_sample=20):
    """Median time of one call of fn, in milliseconds, measured with CUDA events.

    Each sample times calls_per_sample back-to-back calls of the whole function
    (allocation and autograd included), after warmup_calls untimed calls.
    """
    for _ in range(warmup_calls):
        fn()
    torch.cuda.synchronize()
    per_call = []
    for _ in range(samples):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(calls_per_sample):
            fn()
        end.record()
        end.synchronize()
        per_call.append(start.elapsed_time(end) / calls_per_sample)
    return statistics.median(per_call)


def gb_per_s(n_bytes, ms):
    return n_bytes / (ms * 1e-3) / 1e9


def copy_bandwidth_gb_per_s(n_bytes=2 * 1024**3):
    """Device-to-device copy bandwidth, counting the bytes read plus the bytes written."""
    src = torch.empty(n_bytes // 2, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    ms = median_call_ms(lambda: dst.copy_(src), warmup_calls=5, samples=20, calls_per_sample=5)
    return gb_per_s(n_bytes, ms)
