"""Do two GPU builds of one commit tell the same story? Compare their measurements figure by figure.

    python scripts/compare_builds.py DIR_A DIR_B     # each holds <data set>/measurements.json
    python scripts/compare_builds.py docs/data /tmp/rebuild --prior /tmp/committed
        # after `cp -r docs/data /tmp/committed`, make gpu-build, and gpu_build.py measure and render
        # --out /tmp/rebuild --prior /tmp/committed: both builds kept the committed build's verdicts on an edge

A figure is normkit.bench's {median, low, high, runs}. Each is named by its full identity: the keys
on the way to it and, for every list item on that way, all of the item's scalar fields that are not
measured values (every string, whole number and truth value: op, provider, design, mode, label, M, N,
dtype, hidden, step, kernel, ...; floats and an "error" text are outcomes, not identity). Two figures
of one build with one identity are refused, naming the path: the comparison would pair the wrong ones.

Then, for every data set both builds measured from the same sources (provenance "sources_fingerprint",
or the older "sources_sha256"):
  - every figure present in one build only is listed;
  - each build's median must lie inside the range the other build states (normkit.claims.stated, with
    the reproducibility floor of its kind: host cost, copy bandwidth or GPU time);
  - both builds' English quotes are rendered through the data set's report, as the GPU build rendered
    them (a verdict on its edge keeps the --prior build's: normkit.claims.remembering), and every
    verdict and count (a quote with no digit in it, such as "faster", "on par", "met", or a key that
    counts verdicts or names the widths a verdict picks) must read the same.
Prints what disagrees and exits 1 if anything does.

    python scripts/compare_builds.py --edges docs/data     # one build: which verdicts sit on an edge?

lists the verdicts and counts of one build that turn when every figure moves as far as a rebuild
moves most figures, each rendered against the build's own verdicts as a rebuild of it would be (EDGE_MOVE: GPU time 0.8 %, the 95th percentile between two builds; copy 1.2 %;
host costs 6 %, which moves a paired ratio by about the 12 % seen), each figure up or down at random,
in --trials such builds: the verdicts a second build of the same commit is likely to turn.
"""

import argparse
import copy
import functools
import json
import math
import random
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "snippets"))

from normkit import claims  # noqa: E402

import gpu_build  # noqa: E402  (scripts/, beside this file)

WORD = re.compile(r"^[^\d]*$")  # a verdict or a status: text with no digit in it
# counts of verdicts (said per case: "faster at 13 and on par at 3 of the 16 widths"), and the sentences
# that name the widths a verdict picks ("at N = 12288, 16384")
COUNT_KEY = re.compile(r"_(count|met|missed|within|behind_n|missed_n|within_n|sentence|tally|tallies)$")


class Collision(ValueError):
    """Two figures of one build with one identity."""


figures = claims.figures  # (path, figure) of a measurements tree, each named by its full identity


def figure_map(tree, build="A"):
    """{path: figure}; a Collision names the first path two figures of the build share."""
    out = {}
    for path, fig in figures(tree):
        if path in out:
            raise Collision(f"build {build}: two figures at {'/'.join(path)}: the comparison cannot tell them "
                            "apart (give their list items a field that differs)")
        out[path] = fig
    return out


def kind_of(path):
    text = "/".join(path)
    return "host" if "host" in text else "copy" if "copy" in text else "gpu"


def _finite(fig):
    return all(isinstance(fig[k], (int, float)) and math.isfinite(fig[k]) for k in ("median", "low", "high"))


def compare_figures(a, b):
    """(shared, problems, only): figures in both, every median outside the other build's range, and
    the figures present in one build only ("only in A: path")."""
    mine, theirs = figure_map(a, "A"), figure_map(b, "B")
    problems = []
    for path in mine.keys() & theirs.keys():
        ours, other = mine[path], theirs[path]
        if not (_finite(ours) and _finite(other)):
            if _finite(ours) != _finite(other):
                problems.append(f"{'/'.join(path)}: a number in one build, none in the other")
            continue
        kind = kind_of(path)
        for first, second, which in ((ours, other, "A"), (other, ours, "B")):
            low, high = claims.stated(second, kind)
            if not low <= first["median"] <= high:
                problems.append(f"{'/'.join(path)}: build {which}'s median {first['median']:.4g} lies outside "
                                f"build {'B' if which == 'A' else 'A'}'s range {low:.4g}–{high:.4g} ({kind})")
    only = [f"only in {which}: {'/'.join(path)}" for which, here, there in (("A", mine, theirs), ("B", theirs, mine))
            for path in sorted(here.keys() - there.keys())]
    return len(mine.keys() & theirs.keys()), sorted(problems), only


def sources_id(provenance):
    """The one digest of the measured sources: "sources_fingerprint", or "sources_sha256" of older data."""
    return provenance.get("sources_fingerprint", provenance.get("sources_sha256"))


def verdict_quotes(name, measurements, prior=None):
    """The English verdicts and counts the data set's report renders, as the GPU build renders them: a
    verdict on its edge keeps prior's ({key: verdict}, the build both builds rendered against)."""
    with tempfile.TemporaryDirectory() as out:
        gpu_build.render_report(name, measurements, Path(out), prior or {})
        quotes = json.loads((Path(out) / "quotes.json").read_text(encoding="utf-8"))
    return verdicts_of(quotes)


def verdicts_of(quotes):
    return {key: value for key, value in quotes.items()
            if key != "gpu" and (WORD.match(value) or COUNT_KEY.search(key))}


def changed_verdicts(quotes_a, quotes_b):
    """Every verdict or count that reads differently, or is in one build's quotes only."""
    return [f"{key}: {quotes_a.get(key)!r} in A, {quotes_b.get(key)!r} in B"
            for key in sorted(quotes_a.keys() | quotes_b.keys()) if quotes_a.get(key) != quotes_b.get(key)]


def compare_data_set(name, a, b, quotes=verdict_quotes):
    """(lines, failed) for one data set's two measurement documents."""
    if sources_id(a["provenance"]) != sources_id(b["provenance"]):
        return [f"{name}: the two builds measured different sources; nothing to compare"], True
    try:
        shared, problems, only = compare_figures(a, b)
    except Collision as error:
        return [f"{name}: {error}"], True
    changed = changed_verdicts(quotes(name, a), quotes(name, b))
    lines = [f"{name}: {shared} figures in both, {len(only)} in one build only, {len(problems)} outside the "
             f"other build's range; {len(changed)} verdicts or counts changed"]
    lines += [f"    {line}" for line in only + problems + [f"verdict {c}" for c in changed]]
    return lines, bool(problems or only or changed)


# How far a rebuild moves most figures of each kind (notes/timing.md): the 95th percentile of GPU time,
# the copy's move, and a host cost's move that moves a paired ratio of two by about the 12 % seen.
EDGE_MOVE = {"gpu": 0.008, "copy": 0.012, "host": 0.06}


def moved(tree, seed):
    """A copy of a measurements tree with every figure scaled by 1 ± EDGE_MOVE of its kind (the sign
    at random, the same for all of a figure's numbers): a SYNTHETIC rebuild, never published."""
    rng, out = random.Random(seed), copy.deepcopy(tree)
    for path, fig in figures(out):
        fig.update(claims.scaled(fig, 1 + rng.choice((-1, 1)) * EDGE_MOVE[kind_of(path)]))
    return out


def edge_verdicts(name, measurements, trials=8, quotes=verdict_quotes):
    """{key: set of what it read}: the verdicts and counts that some of `trials` moved copies turn (quotes
    renders with the build's own verdicts as the prior: what a rebuild of it would keep)."""
    base = quotes(name, measurements)
    seen = {}
    for seed in range(trials):
        other = quotes(name, moved(measurements, seed))
        for key in base.keys() | other.keys():
            if base.get(key) != other.get(key):
                seen.setdefault(key, {base.get(key)}).add(other.get(key))
    return seen


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("a", type=Path)
    parser.add_argument("b", type=Path, nargs="?")
    parser.add_argument("--edges", action="store_true", help="one build: list the verdicts on an edge")
    parser.add_argument("--trials", type=int, default=8)
    parser.add_argument("--prior", type=Path,
                        help="the build both builds rendered against (PRIOR/<name>/verdicts.json): the committed "
                             "one they were measured from; without it every verdict follows its rule alone")
    args = parser.parse_args(argv)
    if args.edges:
        return edges(args.a, args.trials)
    if args.b is None:
        parser.error("two builds to compare, or --edges and one")
    failed = False
    for name in gpu_build.DATA_SETS:
        paths = [folder / name / "measurements.json" for folder in (args.a, args.b)]
        if not all(p.is_file() for p in paths):
            print(f"{name}: not in both builds, skipped")
            continue
        a, b = (json.loads(p.read_text(encoding="utf-8")) for p in paths)
        prior = gpu_build.prior_verdicts(args.prior / name, a["provenance"]["gpu"]) if args.prior else {}
        lines, bad = compare_data_set(name, a, b, quotes=functools.partial(verdict_quotes, prior=prior))
        print("\n".join(lines))
        failed |= bad
    return 1 if failed else 0


def edges(folder, trials):
    """Print, for each data set of one build, the verdicts that moved copies of it turn; exit 1 if any."""
    found = False
    for name in gpu_build.DATA_SETS:
        path = folder / name / "measurements.json"
        if not path.is_file():
            continue
        measurements = json.loads(path.read_text(encoding="utf-8"))
        own = functools.partial(verdict_quotes, prior=gpu_build.prior_verdicts(path.parent,
                                                                               measurements["provenance"]["gpu"]))
        turned = edge_verdicts(name, measurements, trials, quotes=own)
        print(f"{name}: {len(turned)} verdicts or counts turn in {trials} rebuilds moved by {EDGE_MOVE}")
        for key in sorted(turned):
            print(f"    {key}: " + " / ".join(sorted(repr(v) for v in turned[key])))
        found |= bool(turned)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
