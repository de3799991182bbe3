"""The one timing protocol of the site: every chapter, notebook and "Going faster" page times with it.

Two figures, never mixed:

- **GPU time** (gpu_us): one call captured in a CUDA graph and replayed, timed with CUDA events.
  The replay launches exactly the kernels the call launched (allocation and autograd included)
  and none of the Python around them, so the figure does not move with a slow or busy host.
  Every speed comparison on the site uses it.
- **Host cost** (host_us): the fastest of many plain calls, each followed by a synchronization:
  what the Python call, autograd and the launches cost when nothing hides them.

Each figure is measured in `repeats` independent repetitions (a new graph, its own warm-up), and
measure_all() runs them as separate passes over every task, so a figure's repetitions are minutes
apart and its spread sees the drift of a run. A figure is {"median", "low", "high", "runs"}.

A graph replays its call on the same inputs. Where one call's bytes fit in the L2 cache, the graph
holds `copies` calls on separate copies of the inputs (enough to cover twice the L2, and at least
two), so that no call reads what the one before it left in the cache (rotating_copies()).
"""

import dataclasses
import statistics
import time

import torch


@dataclasses.dataclass(frozen=True)
class Protocol:
    # A repetition replays the call warmup_calls + samples * calls_per_sample = 60 times. The spread
    # a claim reads comes from the repetitions; the replays inside one only steady its median. At 210
    # replays (the protocol before issue 37) replaying took 176 of the faster data set's 302 s
    # (notes/gpu-build.md compares the spreads of the two protocols)
    warmup_calls: int = 10      # untimed replays (or calls) before the samples
    samples: int = 10           # timed samples; the figure of one repetition is their median
    calls_per_sample: int = 5   # replays timed back to back in one sample
    repeats: int = 3            # independent repetitions, in separate passes
    host_calls: int = 200       # synchronized plain calls per repetition of a host cost
    max_copies: int = 8         # input copies a graph rotates through, at most (MIN_COPIES at least)


PROTOCOL = Protocol()
QUICK = Protocol(warmup_calls=2, samples=3, calls_per_sample=2, repeats=3, host_calls=5, max_copies=2)


def median_call_ms(fn, warmup_calls=20, samples=50, calls_per_sample=20):
    """Median time of one call of fn, in milliseconds, measured with CUDA events.

    Each sample times calls_per_sample back-to-back calls, after warmup_calls untimed calls. The
    GPU-time figures call it on a graph's replay; the tuner (faster.tune) on plain calls.
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


# At one copy every replay reads the buffers the previous replay left in the L2, however large the
# call: PyTorch's fp32 RMSNorm forward at 4096x4096 (128 MB against 2 x 50 MB of L2) then moved by 5 %
# within a process and 8 % between processes, two copies by 2 % (notes/timing.md).
MIN_COPIES = 2


def rotating_copies(bytes_per_call, protocol=PROTOCOL):
    """How many input copies one graph rotates through: enough to cover twice the L2 cache, at least
    MIN_COPIES, at most protocol.max_copies."""
    l2 = torch.cuda.get_device_properties(torch.cuda.current_device()).L2_cache_size
    return max(MIN_COPIES, min(protocol.max_copies, -(-2 * l2 // max(1, bytes_per_call))))


def gpu_us(make_step, copies=1, protocol=PROTOCOL):
    """One repetition of a GPU-time figure: µs per call of the step, from CUDA-graph replay.

    make_step() builds fresh inputs and returns the step (a function of no arguments); it is called
    `copies` times and the graph captures one call of each step, so the time per call is the
    replay's time divided by `copies`.
    """
    # the steps are built, warmed up and captured on one side stream: a backward pass then runs on
    # the stream of its forward (autograd's rule), which is the capturing one
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        steps = [make_step() for _ in range(copies)]
        for _ in range(3):
            for step in steps:
                step()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream):
        for step in steps:
            step()
    torch.cuda.current_stream().wait_stream(stream)
    try:
        return 1e3 * median_call_ms(graph.replay, protocol.warmup_calls, protocol.samples,
                                    protocol.calls_per_sample) / copies
    finally:
        del graph, steps


def host_us(make_step, protocol=PROTOCOL):
    """One repetition of a host-cost figure: the fastest of host_calls synchronized plain calls, µs."""
    step = make_step()
    for _ in range(protocol.warmup_calls):
        step()
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(protocol.host_calls):
        start = time.perf_counter()
        step()
        torch.cuda.synchronize()
        best = min(best, time.perf_counter() - start)
    return 1e6 * best


def figure(runs):
    """A figure from its repetitions: the median and the range of the runs."""
    return {"median": statistics.median(runs), "low": min(runs), "high": max(runs), "runs": list(runs)}


def measure_all(tasks, protocol=PROTOCOL, seconds=None):
    """{key: figure} for {key: one_run}, where one_run() measures one repetition (gpu_us, host_us, ...).

    The repetitions run as `protocol.repeats` passes over all tasks. A task that raises (a missing
    package, an input the provider refuses) is recorded as {"error": ...} and not tried again.
    With a dict `seconds`, each task's wall-clock seconds over its passes are added to seconds[key].
    """
    runs = {key: [] for key in tasks}
    errors = {}
    for _ in range(protocol.repeats):
        for key, one_run in tasks.items():
            if key in errors:
                continue
            start = time.perf_counter()
            try:
                runs[key].append(one_run())
            except Exception as e:  # noqa: BLE001 - recorded, shown on the page as refused or missing
                errors[key] = {"error": error_text(e)}
            finally:
                torch.cuda.empty_cache()
                if seconds is not None:
                    seconds[key] = seconds.get(key, 0.0) + time.perf_counter() - start
    return {key: errors.get(key) or figure(runs[key]) for key in tasks}


def error_text(e):
    first = str(e).splitlines()[0][:160] if str(e) else ""
    return f"{type(e).__name__}: {first}"


def gb_per_s(n_bytes, ms):
    return n_bytes / (ms * 1e-3) / 1e9


def copy_bandwidth_gb_per_s(n_bytes=2 * 1024**3, protocol=PROTOCOL):
    """Device-to-device copy bandwidth, counting the bytes read plus the bytes written: a figure in GB/s.

    PyTorch's copy_ between two 1 GiB buffers, far larger than the L2 cache, as plain calls: each
    takes a few hundred µs, so the host is never the limit. (Captured in a CUDA graph, the same copy
    becomes a memcpy node that a copy engine runs, a third slower: not the ceiling a kernel meets.)
    It is a measured ceiling, PyTorch's copy kernel on this GPU, not the datasheet's bandwidth.
    """
    src = torch.empty(n_bytes // 2, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    runs = [gb_per_s(n_bytes, median_call_ms(lambda: dst.copy_(src), 5, protocol.samples, 5))
            for _ in range(protocol.repeats)]
    del src, dst
    torch.cuda.empty_cache()
    return figure(runs)


def fixed_cost_fit(points):
    """time = fixed + bytes / bandwidth, fitted by least squares to [(bytes, figure in µs)].

    One fit per repetition (the i-th run of every point), so the fixed cost and the bandwidth come
    with a spread: {"fixed_us": figure, "gb_per_s": figure}. Needs at least two byte counts.
    """
    sizes = [b for b, _ in points]
    if len(set(sizes)) < 2:
        raise ValueError("a fixed-cost fit needs points of at least two sizes")
    fixed, bandwidth = [], []
    for i in range(min(len(f["runs"]) for _, f in points)):
        times = [f["runs"][i] for _, f in points]
        mean_b, mean_t = statistics.fmean(sizes), statistics.fmean(times)
        slope = (sum((b - mean_b) * (t - mean_t) for b, t in zip(sizes, times))
                 / sum((b - mean_b) ** 2 for b in sizes))  # µs per byte
        fixed.append(mean_t - slope * mean_b)
        bandwidth.append(1e-3 / slope if slope > 0 else float("inf"))  # bytes per µs -> GB/s
    return {"fixed_us": figure(fixed), "gb_per_s": figure(bandwidth)}


def figure_text(fig, unit="µs", t=None):
    """A figure as a notebook or a terminal prints it: "11.43 µs (11.36–11.54)", in the numbers of t
    (a normkit.words.Words; by default the reader's, words.reader(): "11,43 µs (11,36–11,54)" in vi)."""
    from normkit import words  # the text of a figure: never a measured source (scripts/gpu_build.py)

    t = t or words.reader()
    return f"{t.number(fig['median'], '.2f')} {unit} ({t.number(fig['low'], '.2f')}–{t.number(fig['high'], '.2f')})"


def protocol_record(protocol, copies=None):
    """What a data set stores about how it timed: the protocol's counts and the rotation."""
    record = dataclasses.asdict(protocol)
    if copies is not None:
        record["copies"] = copies
    return record
