"""python -m rmsnorm reference|check-forward|check-backward|check-gamma|train-integration|benchmark|exercise"""

import argparse
import sys

from normkit.runtime import DEVICE, INTERPRETED


def cmd_reference(args):
    from rmsnorm.examples import format_examples
    from rmsnorm.reference import check_reference_gradients
    from rmsnorm.training import FULL, make_splits

    print(format_examples())
    r = check_reference_gradients()
    print(f"gradcheck of the float64 reference: {'passed' if r['gradcheck'] else 'FAILED'}")
    print(f"manual_backward against autograd: max difference {r['manual_vs_autograd']:.1e}")
    splits = make_splits(FULL, device="cpu")
    print("synthetic splits: " + ", ".join(f"{k} {tuple(v[0].shape)} -> {tuple(v[1].shape)}" for k, v in splits.items()))
    return 0 if r["gradcheck"] and r["manual_vs_autograd"] < 1e-12 else 1


def _campaign(quantity):
    def run(args):
        from rmsnorm.accuracy import campaign_cases, format_campaign, interpreter_cases, run_campaign

        cases = interpreter_cases() if args.quick else campaign_cases()
        result = run_campaign(cases)
        print(format_campaign(result, quantity))
        return 0 if not any(f["quantity"] == quantity for f in result["failures"]) else 1

    return run


def cmd_train(args):
    from rmsnorm.training import FULL, QUICK, format_integration, run_integration

    cfg = QUICK if (INTERPRETED and not args.full) or args.quick else FULL
    r = run_integration(cfg)
    print(format_integration(r))
    ok = (r["kernel_forwards"] == cfg.steps and r["kernel_backwards"] == cfg.steps and r["reload_diff"] == 0)
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


def cmd_benchmark(args):
    if INTERPRETED:
        print("benchmark needs a CUDA GPU: under the interpreter there are no CUDA events, and "
              "interpreted timings would say nothing about a GPU.")
        return 2
    from normkit.bench import copy_bandwidth_gb_per_s
    from rmsnorm.timing import format_timing, run_timing

    copy = copy_bandwidth_gb_per_s()["median"]
    print(f"device copy bandwidth: {copy:,.0f} GB/s")
    print(format_timing(run_timing(quick=args.quick), copy))
    return 0


def cmd_exercise(args):
    from rmsnorm.exercise import format_exercise, run_exercise

    r = run_exercise()
    print(format_exercise(r))
    f257, f256 = r["forward"]
    return 0 if f257["caught"] and not f256["caught"] else 1


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m rmsnorm", description="Chapter 2: RMSNorm, step by step.")
    sub = parser.add_subparsers(dest="command", required=True)
    commands = {
        "reference": (cmd_reference, "worked examples, gradcheck of the reference, the synthetic splits"),
        "check-forward": (_campaign("y"), "accuracy campaign: the forward output y"),
        "check-backward": (_campaign("dx"), "accuracy campaign: the input gradient dx"),
        "check-gamma": (_campaign("dgamma"), "accuracy campaign: the weight gradient dgamma"),
        "train-integration": (cmd_train, "train reference and kernel branches, reload a checkpoint"),
        "benchmark": (cmd_benchmark, "timing protocol (CUDA only)"),
        "exercise": (cmd_exercise, "the wrong divide-by-BLOCK kernel, caught at N=257, hidden at N=256"),
    }
    for name, (fn, text) in commands.items():
        p = sub.add_parser(name, help=text)
        p.set_defaults(fn=fn)
        if name.startswith("check-") or name in ("train-integration", "benchmark"):
            p.add_argument("--quick", action="store_true", help="a smaller smoke run")
        if name == "train-integration":
            p.add_argument("--full", action="store_true", help="the full configuration, even on the CPU")
    args = parser.parse_args(argv)
    where = "Triton interpreter on the CPU" if INTERPRETED else f"CUDA device {DEVICE}"
    print(f"[rmsnorm {args.command} — running on the {where}]")
    return args.fn(args)


if __name__ == "__main__":
    sys.exit(main())
