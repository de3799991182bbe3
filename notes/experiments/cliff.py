"""Do widths that are not multiples of 256 run at the speed of their neighbours? (issue 21's "no cliff")

Reads a `faster.tune --check` run whose --widths hold both multiples of 256 and widths between them,
and prints, per op and pass, each in-between width's % of copy against the lower of its two
neighbouring multiples of 256 in the same run:

    python -m faster.tune --check --widths 4096,4097,4100,4104,4160,4224,4352 --out DIR
    python notes/experiments/cliff.py DIR/tune.json

A width more than the run-to-run spread (1.5 points in tune-20 against check-21) below both
neighbours is a cliff. With a second run, each width's change against it instead (a fix against
cliff-1, say), where it is beyond the spread:

    python notes/experiments/cliff.py DIR/tune.json notes/data/cliff-1-bfloat16.json"""

import json
import sys

SPREAD = 1.5


def main(path):
    runs = json.load(open(path))["tuned"]
    by = {(r["op"], r["N"]): r for r in runs}
    for (op, n), r in sorted(by.items()):
        if n % 256 == 0:
            continue
        low, high = (n // 256) * 256, (n // 256 + 1) * 256
        for kind in ("fwd", "bwd"):
            neighbours = [by[(op, m)][f"best_{kind}"]["pct"] for m in (low, high) if (op, m) in by]
            if not neighbours:
                continue
            pct, floor = r[f"best_{kind}"]["pct"], min(neighbours)
            verdict = "CLIFF" if pct < floor - SPREAD else "ok"
            print(f"{op[:3]} {kind} N={n:5d} {pct:5.1f}% (neighbours {', '.join(f'{p:.1f}' for p in neighbours)}) {verdict}")


def against(path, baseline):
    now = {(r["op"], r["N"]): r for r in json.load(open(path))["tuned"]}
    before = {(r["op"], r["N"]): r for r in json.load(open(baseline))["tuned"]}
    for key in sorted(now.keys() & before.keys()):
        for kind in ("fwd", "bwd"):
            a, b = before[key][f"best_{kind}"]["pct"], now[key][f"best_{kind}"]["pct"]
            if abs(b - a) > SPREAD:
                print(f"{key[0][:3]} {kind} N={key[1]:5d} {a:5.1f}% -> {b:5.1f}% ({b - a:+.1f})")


if __name__ == "__main__":
    against(*sys.argv[1:3]) if len(sys.argv) > 2 else main(sys.argv[1])
