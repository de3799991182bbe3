"""Everything the GPU build measures for this chapter, as one JSON-serialisable dict."""

import torch

from rmsnorm import accuracy, examples, exercise, timing, training


def measure(quick=False, include_timing=None):
    """quick=True is a smoke run: the interpreter subset, a short timing protocol, the small training.

    Timing needs CUDA; include_timing defaults to whether CUDA is available.
    """
    if include_timing is None:
        include_timing = torch.cuda.is_available()
    result = {
        "chapter": "rmsnorm",
        "quick": quick,
        "examples": examples.all_examples(),
        "accuracy": accuracy.run_campaign(accuracy.interpreter_cases() if quick else None),
        "training": training.run_integration(training.QUICK if quick else training.FULL),
        "exercise": exercise.run_exercise(),
    }
    if include_timing:
        result["timing"] = timing.run_timing(quick=quick)
    return result
