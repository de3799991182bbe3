"""Do two GPU builds of one commit tell the same story? Compare their measurements figure by figure.

    python scripts/compare_builds.py DIR_A DIR_B     # each holds <data set>/measurements.json
    python scripts/compare_builds.py docs/data other/docs/data

For every figure present in both (a timing with its repetitions: normkit.bench's median, low, high,
runs), each build's median must lie inside the range the other build states (normkit.claims.stated,
with the reproducibility floor of its kind: host cost, copy bandwidth or GPU time). Then both builds'
English quotes are rendered, and every quote that is a verdict or a count (a word such as "faster",
"on par", "met", "host", or a whole number) must read the same. Prints what disagrees and exits 1
if anything does; the measured sources of the two builds must be the same.
"""

import argparse
import importlib
import json
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "snippets"))

from normkit import claims  # noqa: E402

import gpu_build  # noqa: E402  (scripts/, beside this file)

FIGURE_KEYS = {"median", "low", "high", "runs"}
WORD = re.compile(r"^[^\d]*$")  # a verdict or a status: text with no digit in it
# counts of verdicts, and the widths a verdict names ("12288, 16384")
COUNT_KEY = re.compile(r"_(count|met|missed|within|behind_n|missed_n|within_n)$")


def figures(node, path=()):
    """(path, figure) for every figure inside a measurements tree."""
    if isinstance(node, dict):
        if FIGURE_KEYS <= node.keys():
            yield path, node
            return
        for key, value in node.items():
            yield from figures(value, path + (str(key),))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            label = "/".join(str(value.get(k)) for k in ("op", "provider", "mode", "label", "M", "N", "dtype", "kernel")
                             if k in value) if isinstance(value, dict) else ""
            yield from figures(value, path + (label or str(index),))


def kind_of(path):
    text = "/".join(path)
    return "host" if "host" in text else "copy" if "copy" in text else "gpu"


def compare_figures(a, b):
    problems, mine = [], dict(figures(a))
    shared = 0
    for path, theirs in figures(b):
        ours = mine.get(path)
        if ours is None:
            continue
        shared += 1
        kind = kind_of(path)
        for first, second, which in ((ours, theirs, "A"), (theirs, ours, "B")):
            low, high = claims.stated(second, kind)
            if not low <= first["median"] <= high:
                other = "B" if which == "A" else "A"
                problems.append(f"{'/'.join(path)}: build {which}'s median {first['median']:.4g} lies outside "
                                f"build {other}'s range {low:.4g}–{high:.4g} ({kind})")
    return shared, problems


def verdict_quotes(name, measurements):
    """The English quotes the data set's report renders, through its write() like the GPU build."""
    with tempfile.TemporaryDirectory() as out:
        importlib.import_module(gpu_build.DATA_SETS[name]["render"]).write(measurements, out)
        quotes = json.loads((Path(out) / "quotes.json").read_text(encoding="utf-8"))
    return {key: value for key, value in quotes.items()
            if key != "gpu" and (WORD.match(value) or COUNT_KEY.search(key))}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("a", type=Path)
    parser.add_argument("b", type=Path)
    args = parser.parse_args()
    failed = False
    for name in gpu_build.DATA_SETS:
        paths = [folder / name / "measurements.json" for folder in (args.a, args.b)]
        if not all(p.is_file() for p in paths):
            print(f"{name}: not in both builds, skipped")
            continue
        a, b = (json.loads(p.read_text(encoding="utf-8")) for p in paths)
        if a["provenance"]["sources_sha256"] != b["provenance"]["sources_sha256"]:
            print(f"{name}: the two builds measured different sources; nothing to compare")
            failed = True
            continue
        shared, problems = compare_figures(a, b)
        quotes_a, quotes_b = verdict_quotes(name, a), verdict_quotes(name, b)
        changed = [f"{key}: '{quotes_a[key]}' in A, '{quotes_b.get(key)}' in B"
                   for key in sorted(quotes_a) if quotes_a[key] != quotes_b.get(key)]
        print(f"{name}: {shared} figures in both, {len(problems)} outside the other build's range; "
              f"{len(quotes_a)} verdicts and counts, {len(changed)} changed")
        for line in problems + changed:
            print("   ", line)
        failed |= bool(problems or changed)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
