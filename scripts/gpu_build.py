"""The GPU build: turn the kernel sources into the numbers the site publishes.

    python scripts/gpu_build.py            # on a CUDA GPU: every step below, in order (make gpu-build)
    python scripts/gpu_build.py tests      # on a CUDA GPU: pytest snippets, which writes the GPU test record
    python scripts/gpu_build.py measure    # on a CUDA GPU: measure the data sets (needs a current record)
    python scripts/gpu_build.py render     # anywhere: tables, plots and quotes from the measurements
    python scripts/gpu_build.py notebooks  # on a CUDA GPU: run the notebooks, keep their outputs
    python scripts/gpu_build.py placeholder --only NAME  # anywhere, no GPU: pages that say "not measured yet"

Each step takes minutes and can be run on its own, so a build that stops is resumed from the step
that stopped (`measure --resume` skips data sets already measured at this commit on these sources).

Data sets: every snippet package with a dataset.toml registers one, named after the package
(layernorm and rmsnorm: the chapters' teaching kernels; faster: every provider side by side).
No MkDocs here: the site is built anywhere from the committed data (make site).

Options: --only NAME (repeatable) picks data sets; --quick runs a tiny sweep to smoke-test the
pipeline (its data is marked quick and the staleness test refuses it); --out DIR measures and
renders into DIR/<name>/ instead of docs/data/ (a second build to compare, scripts/compare_builds.py);
--prior DIR names the build whose verdicts a render keeps where a rebuild's move could turn them
(normkit.claims.remembering; by default the committed build, docs/data/: give a second build the same;
a prior measured on another GPU is not kept).

Every data set's measurements land in docs/data/<name>/measurements.json with their provenance:
GPU, SM count, driver and CUDA versions, torch and triton versions, date, git commit, the device's
copy bandwidth measured in the same run (three repetitions before the data set and three after it: one
figure per data set, the ceiling its pages compare with), and the fingerprint of each measured source:
the snippet modules the measurement imported, less the ones that only write text (PRESENTATION), as
normkit.sources reads them (comments, docstrings and formatting do not count).

The GPU test record, docs/data/gpu-tests.json, is written by `pytest snippets` on a GPU (snippets/conftest.py);
the measure step and `make check` refuse one that failed or does not cover the current sources.

A chapter written on a machine without a GPU gets placeholder data: a measurements.json marked
"placeholder" (its GPU is "PLACEHOLDER") and, for every table, plot and quote its report writes from
the SYNTHETIC numbers of its own test (snippets/<name>/test_report.py: synthetic_measurements()), a
file that says "not measured yet" in the page's language, so the pages build and preview; a page
that quotes a key the report does not write stays an error. `make check` refuses any data set that
did not come from a GPU, naming its file (the tests skip a placeholder data set, in one summary
line); measuring it replaces the whole folder.
"""

import argparse
import datetime
import importlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SNIPPETS = ROOT / "snippets"
DATA = ROOT / "docs" / "data"
GPU_TEST_RECORD = DATA / "gpu-tests.json"


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
from normkit import sources as source_ids  # noqa: E402  (snippets/ is on the path from here on)

# snippet modules that only write text (tables, words, claims) or identify files: a measurement may
# import them, but what they change never changes a number, so they are never measured sources
PRESENTATION = ("report.py", "normkit/words.py", "normkit/tables.py", "normkit/claims.py", "normkit/sources.py")


def is_presentation(name):
    return name.endswith("/report.py") or name in PRESENTATION


def loaded_sources(name):
    """The snippet files a measurement ran: its packages' modules imported in this process, less the
    presentation modules, and the launch tables (*.json) beside them.

    Each data set is measured in a process of its own (measure() below), so what one measured
    never counts as a source of another.
    """
    packages = DATA_SETS[name]["sources"]
    files = set()
    for module in list(sys.modules.values()):
        path = Path(getattr(module, "__file__", None) or "").resolve()
        if path.suffix == ".py" and path.is_relative_to(SNIPPETS):
            package = path.relative_to(SNIPPETS).parts[0]
            relative_name = path.relative_to(SNIPPETS).as_posix()
            if package in packages and not is_presentation(relative_name):
                files.add(relative_name)
                # the launch tables a fast module reads (fast_tuned.json) choose the kernels too
                files.update(p.relative_to(SNIPPETS).as_posix() for p in path.parent.glob("*.json"))
    return sorted(files)


def source_prints(files, snippets=SNIPPETS):
    """{file: fingerprint} of the named files (relative to snippets/); a missing file is None."""
    return {name: source_ids.fingerprint(snippets / name) if (snippets / name).is_file() else None
            for name in sorted(files)}


def measurements_path(name):
    return DATA / name / "measurements.json"


def relative(path):
    path = Path(path).resolve()
    return path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)


MEASURE_ON_A_GPU = "measure it on a CUDA machine (`python scripts/gpu_build.py --only {name}`) and commit docs/data/{name}/"
PLACEHOLDER_COMMAND = ".venv/bin/python scripts/gpu_build.py placeholder --only {name}"
VERSION = re.compile(r"\d+(\.\d+)+")


def not_from_a_gpu(provenance):
    """Why a provenance is not one that measure_one() recorded on a GPU ("" when it is)."""
    if provenance.get("placeholder"):
        return "it is placeholder data, written to preview the pages without a GPU"
    if re.search(r"synthetic|placeholder|fake|dummy", str(provenance.get("gpu", "")), re.IGNORECASE):
        return f"its GPU is '{provenance.get('gpu')}'"
    recorded = {
        "sm_count": isinstance(provenance.get("sm_count"), int) and provenance["sm_count"] > 0,
        "l2_bytes": isinstance(provenance.get("l2_bytes"), int) and provenance["l2_bytes"] > 0,
        "cuda": VERSION.fullmatch(str(provenance.get("cuda"))) is not None,
        "driver": VERSION.fullmatch(str(provenance.get("driver"))) is not None,
        "copy": bool(provenance.get("copy", {}).get("runs")),
    }
    lacking = [key for key, ok in recorded.items() if not ok]
    return f"it lacks what a GPU run records: {', '.join(lacking)}" if lacking else ""


def data_set_problems(name):
    """Whether a data set's committed measurements came from a GPU, in full, on the current sources."""
    path = measurements_path(name)
    if not path.is_file():
        return [f"{relative(path)} does not exist: {MEASURE_ON_A_GPU.format(name=name)}; to preview its pages "
                f"without a GPU first, `{PLACEHOLDER_COMMAND.format(name=name)}`"]
    provenance = json.loads(path.read_text(encoding="utf-8"))["provenance"]
    reason = not_from_a_gpu(provenance)
    if reason:
        return [f"{relative(path)} did not come from a GPU ({reason}): {MEASURE_ON_A_GPU.format(name=name)}"]
    problems = []
    if provenance.get("quick"):
        problems.append(f"{relative(path)} comes from a --quick smoke run: {MEASURE_ON_A_GPU.format(name=name)}")
    recorded = provenance.get("sources")
    if not isinstance(recorded, dict):
        return problems + [f"{relative(path)} was measured before sources were fingerprinted: "
                           + MEASURE_ON_A_GPU.format(name=name)]
    changed = source_ids.changed(recorded, source_prints(recorded))
    if changed:
        problems.append(f"{relative(path)}: {_files(changed)} changed since the measurement; "
                        + MEASURE_ON_A_GPU.format(name=name))
    return problems


def _files(names, at_most=4):
    shown = ", ".join(f"snippets/{n}" for n in names[:at_most])
    return shown + (f" and {len(names) - at_most} more" if len(names) > at_most else "")


MAKE_A_RECORD = ("run `python scripts/gpu_build.py tests` on a CUDA machine (it runs pytest snippets and writes "
                 "the record) and commit docs/data/gpu-tests.json")


def gpu_test_problems(record_path=GPU_TEST_RECORD, snippets=SNIPPETS, skip=()):
    """Whether the GPU test record passed and covers the snippet files as they are now; the files of
    the packages in skip (placeholder data sets, not measured or tested on a GPU yet) are left out."""
    name = relative(record_path)
    if not record_path.is_file():
        return [f"{name} does not exist: no record says the snippets pass on a GPU; {MAKE_A_RECORD}"]
    record = json.loads(record_path.read_text(encoding="utf-8"))
    problems = []
    if record.get("failed") or record.get("errors"):
        problems.append(f"{name}: {record.get('failed', 0)} failed and {record.get('errors', 0)} erroring tests "
                        f"on the {record.get('device')} at commit {str(record.get('commit'))[:12]}: fix them, then "
                        + MAKE_A_RECORD)
    changed = [name for name in source_ids.changed(record.get("sources", {}), source_ids.fingerprints(
        source_ids.tree_files(snippets), snippets)) if name.split("/")[0] not in skip]
    if changed:
        problems.append(f"{name}: {_files(changed)} changed since the GPU tests ran (commit "
                        f"{str(record.get('commit'))[:12]}): {MAKE_A_RECORD}")
    return problems


def git_commit():
    return source_ids.git_commit(ROOT)


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


NO_GPU = ("measuring needs a CUDA GPU, and this machine has none: nothing was measured. To preview a chapter's "
          "pages here, give its data set placeholder data (`" + PLACEHOLDER_COMMAND + "`: the pages then say "
          "'not measured yet'); measure it on a CUDA machine with `python scripts/gpu_build.py --only {name}`")


def require_cuda(names):
    import torch

    if not torch.cuda.is_available():
        sys.exit(NO_GPU.format(name=names[0] if len(names) == 1 else "<name>"))


def run_snippet_tests():
    """pytest snippets on the GPU, across the CPU's cores (pytest-xdist, when installed): each test
    compiles its own kernels, and compiling is one core's work. It writes the GPU test record."""
    workers = ["-n", str(min(8, os.cpu_count() or 1))] if importlib.util.find_spec("xdist") else []
    print(f"== pytest snippets (on the GPU{', ' + workers[1] + ' workers' if workers else ''})", flush=True)
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", *workers, str(SNIPPETS)], cwd=ROOT)
    if result.returncode != 0:
        sys.exit("snippet tests failed on the GPU (above; docs/data/gpu-tests.json records it): nothing is "
                 "measured until they pass")


def require_a_current_record():
    problems = gpu_test_problems()
    if problems:
        sys.exit("measuring waits for the snippet tests to pass on a GPU at these sources: " + "; ".join(problems))


def measured_here(name, out):
    """Whether the data set's measurements in out already come from this commit and cover its sources."""
    path = out / name / "measurements.json"
    if not path.is_file():
        return False
    provenance = json.loads(path.read_text(encoding="utf-8"))["provenance"]
    return (provenance.get("git_commit") == git_commit() and not not_from_a_gpu(provenance)
            and isinstance(provenance.get("sources"), dict)
            and not source_ids.changed(provenance["sources"], source_prints(provenance["sources"])))


WARM_PROCESSES = 8  # side by side before a data set is measured, when its measure module has warm()


def has_warm(name):
    return hasattr(importlib.import_module(DATA_SETS[name]["measure"]), "warm")


def start_warming(name, quick):
    """Processes that fill the compile caches with the data set's kernels (its module's warm()): they
    time nothing that is kept, so they may run beside the tests."""
    command = [sys.executable, __file__, "warm-one", "--only", name] + (["--quick"] if quick else [])
    return [subprocess.Popen(command + ["--part", f"{k}/{WARM_PROCESSES}"], cwd=ROOT) for k in range(WARM_PROCESSES)]


def finish_warming(name, workers, start):
    if any(worker.wait() != 0 for worker in workers):
        sys.exit(f"warming the compile caches for {name} failed (its error is above): nothing was measured")
    print(f"== {name}: compile caches warm at {time.perf_counter() - start:.0f} s", flush=True)


def warm_one(name, quick, part):
    k, parts = map(int, part.split("/"))
    importlib.import_module(DATA_SETS[name]["measure"]).warm(quick, k, parts)


def measure(names, quick, out=DATA, resume=False, warming=None):
    """Measure each data set in a fresh process, so its measured sources are exactly its own.
    warming: {name: warm-up processes already started}; a data set with warm() and none is warmed first."""
    warming = dict(warming or {})
    for name in names:
        if resume and measured_here(name, out):
            print(f"== {name}: already measured at this commit on these sources (--resume)", flush=True)
            continue
        start = time.perf_counter()
        if name in warming or has_warm(name):
            finish_warming(name, warming.pop(name, None) or start_warming(name, quick), start)
        command = [sys.executable, __file__, "measure-one", "--only", name, "--out", str(out)] + (
            ["--quick"] if quick else [])
        if subprocess.run(command, cwd=ROOT).returncode != 0:
            sys.exit(f"measuring {name} failed (its error is above): {out / name} was left as it was")
        print(f"== {name}: measured in {time.perf_counter() - start:.0f} s", flush=True)
    for workers in warming.values():  # started for a data set that --resume skipped
        for worker in workers:
            worker.wait()


def measure_one(name, quick, out=DATA):
    require_cuda([name])
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
    prints = source_prints(loaded_sources(name))
    document = {
        "provenance": {**provenance, "sources": prints, "sources_fingerprint": source_ids.combined(prints),
                       "quick": quick},
        "results": results,
    }
    write_measurements(name, document, out / name / "measurements.json")


def write_measurements(name, document, path=None):
    """A data set's new measurements; they replace a placeholder's or synthetic data's whole folder."""
    path = path or measurements_path(name)
    if path.is_file() and not_from_a_gpu(json.loads(path.read_text(encoding="utf-8"))["provenance"]):
        shutil.rmtree(path.parent)  # none of those files may outlive a measurement
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    print(f"   wrote {path}", flush=True)


PROVENANCE_ROWS = ("gpu", "sm_count", "copy_gb_per_s", "driver", "cuda", "torch", "triton", "python", "date",
                   "git_commit", "sources_fingerprint")


def provenance_table(provenance, t, record=None):
    """The data set's provenance, and the GPU test record's line when there is one."""
    from normkit.claims import with_range

    rows = ["| | |", "|---|---|"]
    for key in PROVENANCE_ROWS:
        value = provenance[key]
        if key in ("git_commit", "sources_fingerprint"):
            value = f"`{str(value)[:12]}`"
        elif key == "copy_gb_per_s":
            value = with_range(provenance["copy"], "copy", t)
        elif key == "date":
            value = t.date(value)
        rows.append(f"| {t(key)} | {value} |")
    if record:
        value = t("gpu_tests_value").format(passed=record["passed"], skipped=record["skipped"],
                                             date=t.date(record["date"]), commit=f"`{record['commit'][:12]}`")
        rows.append(f"| {t('gpu_tests')} | {value} |")
    return "\n".join(rows) + "\n"


def gpu_test_record():
    return json.loads(GPU_TEST_RECORD.read_text(encoding="utf-8")) if GPU_TEST_RECORD.is_file() else None


def load_measurements(name, path=None):
    path = path or measurements_path(name)
    if not path.is_file():
        sys.exit(f"{relative(path)} does not exist, so there is nothing to render: {MEASURE_ON_A_GPU.format(name=name)}; "
                 f"to preview its pages without a GPU, `{PLACEHOLDER_COMMAND.format(name=name)}`")
    return json.loads(path.read_text(encoding="utf-8"))


VERDICTS = "verdicts.json"  # the verdicts a render stated: the next build keeps those on their edge


def prior_verdicts(folder, gpu):
    """{key: verdict} that the build in folder (docs/data/<name>/, say) stated on this GPU; {} where it
    wrote none, or measured another GPU: there the figures are another machine's, and a verdict on its
    edge there says nothing of this one (a build on a new GPU starts from the rule alone)."""
    path = Path(folder) / VERDICTS
    if not path.is_file():
        return {}
    stated = json.loads(path.read_text(encoding="utf-8"))
    return stated["verdicts"] if stated.get("gpu") == gpu else {}


def verdicts_document(measurements, verdicts):
    return json.dumps({"gpu": measurements["provenance"]["gpu"], "verdicts": verdicts}, indent=1,
                      ensure_ascii=False) + "\n"


def render_report(name, measurements, out_dir, prior):
    """The data set's report.write() into out_dir, its figures named (normkit.claims.identify) and its
    verdicts on an edge kept from prior, a {key: verdict} (claims.remembering); returns what it stated."""
    from normkit import claims

    with claims.remembering(prior) as ledger:
        importlib.import_module(DATA_SETS[name]["render"]).write(claims.identify(measurements), out_dir)
    return ledger.verdicts()


def render(name, out_dir=None, measured=None, prior_dir=None):
    """Tables, plots and quotes for one data set into out_dir (docs/data/<name>/), from the measurements
    in `measured` (by default the committed ones, docs/data/<name>/measurements.json); a verdict on its
    edge keeps the one the build in prior_dir stated (by default the committed build, docs/data/<name>/)."""
    # imported here, not at the top: a measuring process must not count the renderer as a measured source
    from normkit.tables import write_localized

    out_dir = out_dir or DATA / name
    measurements = load_measurements(name, measured)
    if measurements["provenance"].get("placeholder"):
        write_placeholder_files(name, out_dir)
        return
    # read before out_dir's is written over
    prior = prior_verdicts(prior_dir or DATA / name, measurements["provenance"]["gpu"])
    out_dir.mkdir(parents=True, exist_ok=True)
    stated = render_report(name, measurements, out_dir, prior)
    (out_dir / VERDICTS).write_text(verdicts_document(measurements, stated), encoding="utf-8")
    write_localized(out_dir, "provenance.md", lambda t: provenance_table(measurements["provenance"], t,
                                                                        gpu_test_record()))


# --- Placeholder data: a chapter's pages built and previewed before a GPU has measured it.

PLACEHOLDER = {"placeholder": True, "gpu": "PLACEHOLDER", "quick": False, "sources": []}
# what the pages show instead of each measured file, in every language of the site
NOT_MEASURED = {
    "en": {"quote": "*not measured yet*", "title": "Not measured yet",
           "note": "The GPU build writes `{file}` here when it measures this chapter: "
                   "`python scripts/gpu_build.py --only {name}` on a CUDA machine.",
           "plot": "not measured yet", "plot_note": "the GPU build draws {file}"},
    "zh": {"quote": "*尚未测量*", "title": "尚未测量",
           "note": "GPU 构建测量本章时会在这里写入 `{file}`：在有 CUDA 的机器上运行 "
                   "`python scripts/gpu_build.py --only {name}`。",
           "plot": "尚未测量", "plot_note": "GPU 构建会绘制 {file}"},
    "vi": {"quote": "*chưa đo*", "title": "Chưa đo",
           "note": "Bản dựng GPU sẽ ghi `{file}` vào đây khi đo chương này: chạy "
                   "`python scripts/gpu_build.py --only {name}` trên một máy có CUDA.",
           "plot": "chưa đo", "plot_note": "bản dựng GPU sẽ vẽ {file}"},
}
PLACEHOLDER_PLOT = """<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 400 150" width="400" height="150">
  <rect x="2" y="2" width="396" height="146" rx="8" fill="none" stroke="#888" stroke-width="2" stroke-dasharray="8 6"/>
  <text x="200" y="72" text-anchor="middle" font-family="sans-serif" font-size="26" fill="#888">{plot}</text>
  <text x="200" y="104" text-anchor="middle" font-family="sans-serif" font-size="13" fill="#888">{plot_note}</text>
</svg>
"""


SYNTHETIC = "synthetic_measurements"  # what a chapter's test_report.py renders: SYNTHETIC numbers, never published
WRITE_IT_AS = "write it as templates/chapter/snippets/scalenorm/test_report.py does"


def placeholder_data_sets():
    """The registered data sets whose measurements are placeholder data (not measured yet)."""
    return [name for name in DATA_SETS if measurements_path(name).is_file()
            and load_measurements(name)["provenance"].get("placeholder")]


def placeholder_summary(names):
    """The one line that a run which skips placeholder data sets prints (make test, the tests)."""
    folders = ", ".join(f"docs/data/{name}/" for name in names)
    command = MEASURE_ON_A_GPU.format(name=names[0] if len(names) == 1 else "<name>")
    return (f"skipped placeholder data, not measured yet: {folders} (make check and publishing refuse it: "
            f"{command})")


def synthetic_render(name, out_dir):
    """What the data set's report writes from the SYNTHETIC measurements its own test renders
    (snippets/<name>/test_report.py: synthetic_measurements()): the quotes, tables and plots that the
    placeholder stands in for. A page that takes anything else from the data set stays an error."""
    import traceback

    test = f"snippets/{name}/test_report.py"
    if not (SNIPPETS / name / "test_report.py").is_file():
        sys.exit(f"{test} does not exist: the placeholder renders snippets/{name}/report.py on the SYNTHETIC "
                 f"measurements its test renders, {SYNTHETIC}(), to learn which quotes, tables and plots the "
                 f"pages may take; {WRITE_IT_AS}")
    try:
        measurements = getattr(importlib.import_module(f"{name}.test_report"), SYNTHETIC, None)
        if measurements is None:
            sys.exit(f"{test} has no {SYNTHETIC}(), the SYNTHETIC input of report.write() that the placeholder "
                     f"renders to learn which quotes, tables and plots the pages may take; {WRITE_IT_AS}")
        importlib.import_module(DATA_SETS[name]["render"]).write(measurements(), out_dir)
    except Exception as error:  # noqa: BLE001 - an author's report: one sentence, where it failed
        frame = traceback.extract_tb(error.__traceback__)[-1]
        where = f"{relative(frame.filename)}:{frame.lineno}" if Path(frame.filename).is_relative_to(ROOT) else frame.filename
        sys.exit(f"snippets/{name}/report.py failed on the SYNTHETIC measurements of {test} "
                 f"({type(error).__name__}: {error}, at {where}), so no placeholder was written: fix it; "
                 f"`.venv/bin/python -m pytest {test}` shows where")


def language_of(file_name):
    """The language a rendered file is written in: NAME.<lang>.EXT, or English for NAME.EXT."""
    from normkit.words import LANGUAGES

    parts = file_name.split(".")
    return parts[-2] if len(parts) > 2 and parts[-2] in LANGUAGES else "en"


def write_placeholder_files(name, out_dir):
    """For every file the report writes (its SYNTHETIC render) and the provenance table, one that says
    "not measured yet" in its language; the quotes keep the report's keys, each saying it."""
    import tempfile

    from normkit.tables import localized_name
    from normkit.words import LANGUAGES

    with tempfile.TemporaryDirectory() as synthetic:
        synthetic_render(name, Path(synthetic))
        rendered = {path.name: path for path in Path(synthetic).iterdir() if path.is_file()}
        out_dir.mkdir(parents=True, exist_ok=True)
        rendered |= {localized_name("provenance.md", language): None for language in LANGUAGES}
        for file, path in sorted(rendered.items()):
            language = language_of(file)
            words, target = NOT_MEASURED[language], out_dir / file
            public = f"{name}/{file.replace(f'.{language}.', '.') if language != 'en' else file}"
            if file.endswith(".json"):
                keys = json.loads(path.read_text(encoding="utf-8"))
                target.write_text(json.dumps({key: words["quote"] for key in keys}, sort_keys=True), "utf-8")
            elif file.endswith(".svg"):
                target.write_text(PLACEHOLDER_PLOT.format(
                    plot=words["plot"], plot_note=words["plot_note"].format(file=public)), "utf-8")
            else:
                note = words["note"].format(file=f"docs/data/{public}", name=name)
                target.write_text(f'!!! warning "{words["title"]}"\n    {note}\n' if file.endswith(".md")
                                  else note + "\n", "utf-8")


def placeholder(name):
    """Placeholder data for a data set that no GPU has measured yet; refuses to replace a measurement."""
    path = measurements_path(name)
    measured = load_measurements(name)["provenance"] if path.is_file() else None
    if measured and not not_from_a_gpu(measured):
        sys.exit(f"{relative(path)} holds measurements from the {measured['gpu']}: placeholder data would "
                 "replace them, so nothing was written")
    if path.parent.is_dir():
        shutil.rmtree(path.parent)  # the placeholders of files the pages no longer take
    path.parent.mkdir(parents=True)
    document = {"provenance": PLACEHOLDER, "results": None}
    path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    render(name)
    print(f"== docs/data/{name}: placeholder data (not measured yet); `make serve` previews its pages. "
          f"Before publishing: {MEASURE_ON_A_GPU.format(name=name)}", flush=True)


def data_set(name):
    """An --only argument: a registered data set, or a message saying how one is registered."""
    if name not in DATA_SETS:
        raise argparse.ArgumentTypeError(
            f"no data set '{name}': a data set is registered by snippets/{name}/dataset.toml (the authoring "
            f"guide, 'Add a chapter'); the registered ones are {', '.join(DATA_SETS)}")
    return name


STEPS = ("tests", "measure", "render", "notebooks")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("step", nargs="?", choices=("all", *STEPS, "placeholder", "measure-one", "warm-one"),
                        default="all")
    parser.add_argument("--only", action="append", type=data_set, help="a data set to build (repeatable)")
    parser.add_argument("--quick", action="store_true", help="tiny sweeps, to smoke-test the pipeline")
    parser.add_argument("--resume", action="store_true",
                        help="measure: skip data sets already measured at this commit on these sources")
    parser.add_argument("--out", type=Path, default=DATA,
                        help="measure and render into OUT/<name>/ (a second build, to compare)")
    parser.add_argument("--prior", type=Path, default=DATA,
                        help="render: the build whose verdicts on an edge this one keeps (PRIOR/<name>/verdicts.json;"
                             " by default the committed one)")
    parser.add_argument("--part", default="0/1", help=argparse.SUPPRESS)  # warm-one: K/W
    args = parser.parse_args()
    names = args.only or list(DATA_SETS)
    out = args.out.resolve()

    if args.step == "measure-one":
        measure_one(*names, args.quick, out)
        return
    if args.step == "warm-one":
        warm_one(*names, args.quick, args.part)
        return
    if args.step == "placeholder":
        unmeasured = [name for name in DATA_SETS if not measurements_path(name).is_file()]
        if not (args.only or unmeasured):
            sys.exit("every data set has measurements: name the one to preview with --only <name>")
        for name in args.only or unmeasured:
            placeholder(name)
        return
    steps = STEPS if args.step == "all" else (args.step,)
    start = time.perf_counter()
    if {"tests", "measure", "notebooks"} & set(steps):
        check_requirements()
        require_cuda(names)
    warming = {}
    if "tests" in steps:
        if "measure" in steps:  # the compile caches fill on the other cores while the tests run
            warming = {name: start_warming(name, args.quick) for name in names if has_warm(name)}
        try:
            run_snippet_tests()
        except SystemExit:  # the tests failed: nothing will be measured
            for worker in (w for workers in warming.values() for w in workers):
                worker.kill()
            raise
        print(f"== tests done at {time.perf_counter() - start:.0f} s", flush=True)
    if "measure" in steps:
        require_a_current_record()
        measure(names, args.quick, out, args.resume, warming)
    if "render" in steps:
        for name in names:
            render(name, out / name, out / name / "measurements.json", args.prior.resolve() / name)
            print(f"== rendered {relative(out / name)}", flush=True)
    if "notebooks" in steps:
        import notebooks  # scripts/notebooks.py: run each notebook (nbclient), record its GPU outputs

        notebooks.build(execute_cells=True)
        print(f"== notebooks done at {time.perf_counter() - start:.0f} s", flush=True)
    if args.step == "all":
        print(f"== GPU build done in {time.perf_counter() - start:.0f} s: commit docs/data/ and the notebooks; "
              "the site builds anywhere (make site)")


if __name__ == "__main__":
    main()
