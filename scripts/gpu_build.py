"""The GPU build: turn the kernel sources into the numbers the site publishes.

    python scripts/gpu_build.py            # on a CUDA GPU: test, measure, render, run the notebooks
    python scripts/gpu_build.py measure    # on a CUDA GPU: test, then measure only
    python scripts/gpu_build.py render     # anywhere: tables, plots and quotes from the measurements

Data sets: every snippet package with a dataset.toml registers one, named after the package
(layernorm and rmsnorm: the chapters' teaching kernels; faster: every provider side by side).
No MkDocs here: the site is built anywhere from the committed data (make site).

Options: --only NAME (repeatable) picks data sets; --quick runs a tiny sweep to smoke-test the
pipeline (its data is marked quick and the staleness test refuses it).

Every data set's measurements land in docs/data/<name>/measurements.json with their provenance:
GPU, SM count, driver and CUDA versions, torch and triton versions, date, git commit, the device's
copy bandwidth measured in the same run (three repetitions before the data set and three after it: one
figure per data set, the ceiling its pages compare with), and the hash of the kernel sources measured.
"""

import argparse
import datetime
import hashlib
import importlib
import importlib.util
import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SNIPPETS = ROOT / "snippets"
DATA = ROOT / "docs" / "data"


def registered_data_sets(snippets=SNIPPETS):
    """{name: registration} from every snippets/<name>/dataset.toml, read as data (no package is imported).

    A registration names the module whose measure(quick) produces the data set ("measure"), the
    module whose write(measurements, out_dir) renders it ("render"), and the snippet packages whose
    imported files count as its measured sources ("sources").
    """
    data_sets = {}
    for path in sorted(snippets.glob("*/dataset.toml")):
        with path.open("rb") as file:
            data_sets[path.parent.name] = tomllib.load(file)
    return data_sets


DATA_SETS = registered_data_sets()

# What the GPU machine needs (README.md, "Regenerating the measurements (GPU)", names the same; all are
# pinned in requirements.txt): distribution -> the module this build imports. MkDocs is not needed.
GPU_REQUIREMENTS = {
    "torch": "torch", "triton": "triton", "pytest": "pytest", "pytest-timeout": "pytest_timeout",
    "matplotlib": "matplotlib", "nbclient": "nbclient", "nbformat": "nbformat", "jupytext": "jupytext",
    "ipykernel": "ipykernel",
}


def check_requirements():
    """Stop before anything runs when the machine lacks a package the build needs, naming each one."""
    missing = [name for name, module in GPU_REQUIREMENTS.items() if importlib.util.find_spec(module) is None]
    if missing:
        sys.exit(f"the GPU build needs {', '.join(missing)}: install the CUDA build of torch, then "
                 "pip install -r requirements.txt -e . (README.md, 'Regenerating the measurements (GPU)')")

sys.path.insert(0, str(SNIPPETS))


def loaded_sources(name):
    """The snippet files a measurement ran: its packages' modules imported in this process.

    Each data set is measured in a process of its own (measure() below), so what one measured
    never counts as a source of another.
    """
    packages = DATA_SETS[name]["sources"]
    files = set()
    for module in list(sys.modules.values()):
        path = Path(getattr(module, "__file__", None) or "").resolve()
        if path.suffix == ".py" and path.is_relative_to(SNIPPETS):
            package = path.relative_to(SNIPPETS).parts[0]
            if package in packages:
                files.add(path.relative_to(SNIPPETS).as_posix())
                # the launch tables a fast module reads (fast_tuned.json) choose the kernels too
                files.update(p.relative_to(SNIPPETS).as_posix() for p in path.parent.glob("*.json"))
    return sorted(files)


def sources_hash(files, snippets=SNIPPETS):
    """SHA-256 over the named files (paths relative to snippets/) and their contents."""
    digest = hashlib.sha256()
    for name in files:
        digest.update(name.encode())
        digest.update(b"\0")
        digest.update((snippets / name).read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()


def measurements_path(name):
    return DATA / name / "measurements.json"


def git_commit():
    """The commit the sources came from; the device copy has no .git, so the caller may pass it."""
    if os.environ.get("NORMKERNELS_COMMIT"):
        return os.environ["NORMKERNELS_COMMIT"]
    try:
        return subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def device_provenance():
    import torch
    import triton

    properties = torch.cuda.get_device_properties(0)
    driver = subprocess.run(
        ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
        capture_output=True, text=True,
    ).stdout.strip() or "unknown"
    return {
        "gpu": properties.name,
        "sm_count": properties.multi_processor_count,
        "driver": driver,
        "cuda": torch.version.cuda,
        "torch": torch.__version__,
        "triton": triton.__version__,
        "python": sys.version.split()[0],
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "git_commit": git_commit(),
        "l2_bytes": properties.L2_cache_size,
    }


def run_snippet_tests():
    print("== pytest snippets (on the GPU)", flush=True)
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", str(SNIPPETS)], cwd=ROOT)
    if result.returncode != 0:
        sys.exit("snippet tests failed on the GPU: nothing was measured")


def measure(names, quick):
    """Measure each data set in a fresh process, so its measured sources are exactly its own."""
    for name in names:
        command = [sys.executable, __file__, "measure-one", "--only", name] + (["--quick"] if quick else [])
        subprocess.run(command, cwd=ROOT, check=True)


def measure_one(name, quick):
    import torch

    if not torch.cuda.is_available():
        sys.exit("measure needs a CUDA GPU")
    from normkit import bench

    provenance = device_provenance()
    protocol = bench.QUICK if quick else bench.PROTOCOL
    before = bench.copy_bandwidth_gb_per_s(protocol=protocol)
    print(f"== measuring {name} on the {provenance['gpu']} (copy {before['median']:.0f} GB/s)", flush=True)
    results = importlib.import_module(DATA_SETS[name]["measure"]).measure(quick=quick)
    after = bench.copy_bandwidth_gb_per_s(protocol=protocol)
    # one ceiling per data set: the copy's repetitions before and after the measurement, together
    copy = bench.figure(before["runs"] + after["runs"])
    provenance |= {"copy": copy, "copy_gb_per_s": round(copy["median"], 1)}
    sources = loaded_sources(name)
    document = {
        "provenance": {**provenance, "sources": sources, "sources_sha256": sources_hash(sources), "quick": quick},
        "results": results,
    }
    path = measurements_path(name)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    print(f"   wrote {path.relative_to(ROOT)}", flush=True)


PROVENANCE_ROWS = ("gpu", "sm_count", "copy_gb_per_s", "driver", "cuda", "torch", "triton", "python", "date",
                   "git_commit", "sources_sha256")


def provenance_table(provenance, t):
    from normkit.claims import with_range

    rows = ["| | |", "|---|---|"]
    for key in PROVENANCE_ROWS:
        value = provenance[key]
        if key in ("git_commit", "sources_sha256"):
            value = f"`{str(value)[:12]}`"
        elif key == "copy_gb_per_s":
            value = with_range(provenance["copy"], "copy", t)
        rows.append(f"| {t(key)} | {value} |")
    return "\n".join(rows) + "\n"


def render(name, out_dir=None):
    """Tables, plots and quotes for one data set, from its committed measurements."""
    # imported here, not at the top: a measuring process must not count the renderer as a measured source
    from normkit.tables import write_localized

    out_dir = out_dir or DATA / name
    out_dir.mkdir(parents=True, exist_ok=True)
    measurements = json.loads(measurements_path(name).read_text(encoding="utf-8"))
    importlib.import_module(DATA_SETS[name]["render"]).write(measurements, out_dir)
    write_localized(out_dir, "provenance.md", lambda t: provenance_table(measurements["provenance"], t))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("step", nargs="?", choices=("all", "measure", "render", "measure-one"), default="all")
    parser.add_argument("--only", action="append", choices=tuple(DATA_SETS), help="a data set to build (repeatable)")
    parser.add_argument("--quick", action="store_true", help="tiny sweeps, to smoke-test the pipeline")
    parser.add_argument("--skip-tests", action="store_true", help="measure without running pytest first")
    args = parser.parse_args()
    names = args.only or list(DATA_SETS)

    if args.step == "measure-one":
        measure_one(*names, args.quick)
        return
    if args.step in ("all", "measure"):
        check_requirements()
        if not args.skip_tests:
            run_snippet_tests()
        measure(names, args.quick)
    if args.step in ("all", "render"):
        for name in names:
            render(name)
            print(f"== rendered docs/data/{name}", flush=True)
    if args.step == "all":
        import notebooks  # scripts/notebooks.py: run each notebook (nbclient), record its GPU outputs

        notebooks.build(execute_cells=True)
        print("== GPU build done: commit docs/data/ and the notebooks; the site builds anywhere (make site)")

if __name__ == "__main__":
    main()
