"""The forward's ladder by width (FastNorm.FORWARD): how close K contiguous width ranges, one
configuration each, come to the per-width best of a tuning run (faster.tune's report; CPU only).

A configuration is taken relative to N (the row design's BLOCK_N is N's power of two), as a
launch table's entry, so one entry can serve a range of widths. For K = 1 ... --most it finds the
ladder that loses the least on average (dynamic programming over the run's widths; an entry
serves a range only where the run timed it at every width of the range) and prints its mean and
worst loss in points of % of copy against the per-width best, and the K = --rungs ladder as the
op's class writes it.

    python -m faster.ladder DIR/tune.json --op layernorm [--rungs 4]
"""

import argparse
import json

from faster.tune import table_entry_of


def timings(run, op):
    """{N: {relative config: % of copy}} of the run's forward candidates for one op."""
    out = {}
    for r in run["tuned"]:
        if r["op"] == op and r.get("fwd"):
            out[r["N"]] = {tuple(table_entry_of(c["config"])): c["pct"] for c in r["fwd"]
                           if c.get("ok", True)}
    return dict(sorted(out.items()))


def best_entry(widths, pct):
    """The entry that loses the least on average over `widths` (timed at all), and that loss."""
    common = set.intersection(*(set(pct[n]) for n in widths))
    if not common:
        return None, float("inf")
    best = {n: max(pct[n].values()) for n in widths}
    entry = min(common, key=lambda c: sum(best[n] - pct[n][c] for n in widths))
    return entry, sum(best[n] - pct[n][entry] for n in widths)


def ladder(pct, rungs):
    """The ladder of `rungs` contiguous ranges with the least total loss."""
    ns = list(pct)
    cost = {(i, j): best_entry(ns[i:j], pct) for i in range(len(ns)) for j in range(i + 1, len(ns) + 1)}
    inf = float("inf")
    total = [[inf] * (len(ns) + 1) for _ in range(rungs + 1)]
    back = [[None] * (len(ns) + 1) for _ in range(rungs + 1)]
    total[0][0] = 0.0
    for k in range(1, rungs + 1):
        for j in range(1, len(ns) + 1):
            for i in range(j):
                c = total[k - 1][i] + cost[i, j][1]
                if c < total[k][j]:
                    total[k][j], back[k][j] = c, i
    out, j = [], len(ns)
    for k in range(rungs, 0, -1):
        i = back[k][j]
        if i is None:
            return None
        out.append((ns[i], ns[j - 1], cost[i, j][0]))
        j = i
    return out[::-1]


def losses(pct, rungs):
    """Each width's loss against its best, in points, on a ladder."""
    best = {n: max(p.values()) for n, p in pct.items()}
    return [best[n] - pct[n][e] for lo, hi, e in rungs for n in pct if lo <= n <= hi]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("run")
    parser.add_argument("--op", required=True)
    parser.add_argument("--most", type=int, default=8)
    parser.add_argument("--rungs", type=int, default=4, help="the ladder to print as code")
    args = parser.parse_args()
    pct = timings(json.load(open(args.run, encoding="utf-8")), args.op)
    print(f"{args.run} {args.op}: {len(pct)} widths, {min(map(len, pct.values()))}-"
          f"{max(map(len, pct.values()))} candidates a width")
    for k in range(1, args.most + 1):
        rungs = ladder(pct, k)
        if rungs is None:
            print(f"K={k}: no ladder (no entry timed across a range)")
            continue
        lost = losses(pct, rungs)
        print(f"K={k}: mean loss {sum(lost) / len(lost):.2f}, worst {max(lost):.2f} points")
        if k == args.rungs:
            print("    (" + ", ".join(f"({hi}, {e!r})" for _, hi, e in rungs) + ")")


if __name__ == "__main__":
    main()
