"""Everything the GPU build measures for this chapter, as one JSON-serialisable dict."""

import torch

from rmsnorm import accuracy, examples, exercise, timing, training


def measure(quick=False, include_timing=None):
    """quick=True is a smoke run: the interpreter subset, a short timing protocol, the small training.

    Timing needs CUDA; include_timing defaults to whether CUDA is available.
    """
    if include_timing is None:
        include_timing = torch.cuda.is_available()
    return assemble(quick, examples.all_examples(), accuracy.run_campaign(campaign_cases(quick)),
                    training.run_integration(training.QUICK if quick else training.FULL), exercise.run_exercise(),
                    timing.run_timing(quick=quick) if include_timing else None)


def campaign_cases(quick):
    """The accuracy campaign's cases: the interpreter's subset in a quick run, else every case."""
    return accuracy.interpreter_cases() if quick else accuracy.campaign_cases()


def assemble(quick, examples_out, accuracy_out, training_out, exercise_out, timing_out=None):
    """The data set from each part's results; a run without timing (no GPU) has no "timing"."""
    result = {"chapter": "rmsnorm", "quick": quick, "examples": examples_out, "accuracy": accuracy_out,
              "training": training_out, "exercise": exercise_out}
    if timing_out is not None:
        result["timing"] = timing_out
    return result
