"""scripts/compare_builds.py: two builds of one commit, figure by figure and verdict by verdict.

Every figure here is SYNTHETIC or a copy of the committed data changed on purpose: none is a measurement."""

import copy
import functools
import json

import pytest

import compare_builds  # scripts/, put on the path by sitecheck
import gpu_build
from layernorm import report as layernorm_report
from normkit import claims
from sitecheck import ROOT


def fig(median, spread=0.002):
    """A SYNTHETIC GPU figure: three runs within ±spread of the median."""
    runs = [median * (1 - spread), median, median * (1 + spread)]
    return {"median": median, "low": runs[0], "high": runs[2], "runs": runs}


def document(results, fingerprint="f" * 16):
    return {"provenance": {"gpu": "SYNTHETIC", "sources_fingerprint": fingerprint}, "results": results}


def no_quotes(name, measurements):
    return {}


def synthetic_build():
    """A build whose lists hold figures that only a field beyond op, provider, M, N and dtype tells apart."""
    return document({
        # two designs at one shape (the designs table)
        "designs": [{"op": "layernorm", "design": design, "N": 2304, "dtype": "bfloat16", "M": 58254,
                     "config": [design, 1, 4, 2, True], "bwd_gpu_us": fig(us)}
                    for design, us in (("row", 283.2), ("staged", 240.5), ("chunked", 301.0))],
        # one provider at two hidden sizes (the Llama step)
        "llama": {"steps": [{"provider": provider, "hidden": hidden, "gpu_us": fig(us)}
                            for provider, hidden, us in (("torch", 2048, 12964.0), ("torch", 4096, 31271.0),
                                                         ("fast", 2048, 11292.0), ("fast", 4096, 29140.0))]},
        # the host steps of one call
        "host_steps": {"M": 8, "N": 4096, "dtype": "bfloat16",
                       "steps": [{"op": "layernorm", "step": step, "host_us": fig(us, 0.2)}
                                 for step, us in (("synchronize", 8.0), ("checks", 12.2), ("views", 11.7))]},
    })


def paths(tree):
    return ["/".join(path) for path, _ in compare_builds.figures(tree)]


def test_figures_are_named_by_every_identifying_field():
    named = paths(synthetic_build())
    assert len(named) == len(set(named)) == 3 + 4 + 3
    assert "results/designs/op=layernorm/design=staged/N=2304/dtype=bfloat16/M=58254/bwd_gpu_us" in named
    assert "results/llama/steps/provider=torch/hidden=4096/gpu_us" in named
    assert "results/host_steps/steps/op=layernorm/step=checks/host_us" in named
    # measured values and a run's error text are not identity; an item with no identifying field
    # is named by its place in the list
    assert claims.item_identity({"op": "x", "N": 8, "loss": 1.25, "error": "Boom", "ok": True}) == "op=x/N=8/ok=True"
    assert paths({"points": [{"us": fig(1.0)}, {"us": fig(2.0)}]}) == ["points/[0]/us", "points/[1]/us"]


def test_a_build_compared_with_itself_pairs_every_figure():
    a = synthetic_build()
    shared, problems, only = compare_builds.compare_figures(a, copy.deepcopy(a))
    assert (shared, problems, only) == (10, [], [])
    lines, failed = compare_builds.compare_data_set("faster", a, copy.deepcopy(a), quotes=no_quotes)
    assert not failed
    assert lines == ["faster: 10 figures in both, 0 in one build only, 0 outside the other build's range; "
                     "0 verdicts or counts changed"]


def test_figures_that_share_a_shape_are_not_paired_with_each_other():
    # build B lists the items in another order: each figure still meets its own, not its neighbour
    a = synthetic_build()
    b = copy.deepcopy(a)
    b["results"]["designs"].reverse()
    b["results"]["llama"]["steps"].reverse()
    b["results"]["host_steps"]["steps"].reverse()
    assert compare_builds.compare_figures(a, b) == (10, [], [])


def test_a_real_disagreement_is_reported_with_its_full_identity():
    a = synthetic_build()
    b = copy.deepcopy(a)
    b["results"]["llama"]["steps"][1]["gpu_us"] = fig(31271.0 * 1.08)  # torch at hidden 4096, 8 % slower
    _, problems, _ = compare_builds.compare_figures(a, b)
    assert len(problems) == 2  # each median outside the other's range
    assert all(p.startswith("results/llama/steps/provider=torch/hidden=4096/gpu_us: build ") for p in problems)
    lines, failed = compare_builds.compare_data_set("faster", a, b, quotes=no_quotes)
    assert failed and "2 outside the other build's range" in lines[0]


def test_a_figure_in_one_build_only_is_reported():
    a = synthetic_build()
    b = copy.deepcopy(a)
    del b["results"]["designs"][2]  # chunked refused in build B, say
    b["results"]["host_steps"]["steps"].append({"op": "layernorm", "step": "launch", "host_us": fig(30.0, 0.2)})
    shared, problems, only = compare_builds.compare_figures(a, b)
    assert (shared, problems) == (9, [])
    assert only == ["only in A: results/designs/op=layernorm/design=chunked/N=2304/dtype=bfloat16/M=58254/bwd_gpu_us",
                    "only in B: results/host_steps/steps/op=layernorm/step=launch/host_us"]
    assert compare_builds.compare_data_set("faster", a, b, quotes=no_quotes)[1]


def test_two_figures_with_one_identity_in_one_build_are_refused():
    a = synthetic_build()
    a["results"]["designs"][1]["design"] = "row"  # two "row" figures at N = 2304
    with pytest.raises(compare_builds.Collision,
                       match="build A: two figures at results/designs/op=layernorm/design=row/N=2304/dtype=bfloat16"):
        compare_builds.figure_map(a)
    lines, failed = compare_builds.compare_data_set("faster", a, copy.deepcopy(a), quotes=no_quotes)
    assert failed and "two figures at results/designs/op=layernorm/design=row/N=2304" in lines[0]


def test_sources_are_compared_by_fingerprint_old_and_new():
    assert compare_builds.sources_id({"sources_fingerprint": "abc", "sources": {"x.py": "1"}}) == "abc"
    assert compare_builds.sources_id({"sources_sha256": "def", "sources": ["x.py"]}) == "def"
    a, b = synthetic_build(), document(synthetic_build()["results"], fingerprint="0" * 16)
    lines, failed = compare_builds.compare_data_set("faster", a, b, quotes=no_quotes)
    assert failed and lines == ["faster: the two builds measured different sources; nothing to compare"]


# --- verdicts, rendered by a data set's own report from a copy of its committed data --------------------

def layernorm_verdicts(name, measurements):
    return compare_builds.verdicts_of(layernorm_report.quotes(measurements["results"], measurements["provenance"]))


@pytest.fixture(scope="module")
def committed_layernorm():
    return json.loads(gpu_build.measurements_path("layernorm").read_text(encoding="utf-8"))


def test_the_committed_data_compared_with_itself_changes_nothing(committed_layernorm):
    lines, failed = compare_builds.compare_data_set("layernorm", committed_layernorm,
                                                    copy.deepcopy(committed_layernorm), quotes=layernorm_verdicts)
    assert not failed
    assert lines[0].endswith("0 in one build only, 0 outside the other build's range; 0 verdicts or counts changed")


def _scaled(fig, factor):
    return {"median": fig["median"] * factor, "low": fig["low"] * factor, "high": fig["high"] * factor,
            "runs": [r * factor for r in fig["runs"]]}


def test_a_rebuild_that_moves_every_figure_a_little_changes_no_verdict(committed_layernorm):
    # every GPU time moved by 0.1 %, alternately up and down (a rebuild moved the median figure by 0.2 %),
    # both builds rendered as the GPU build renders them: against the committed build's verdicts (by
    # the rule alone a verdict within 0.2 % of its edge turns: fwd_verdict_n6144 in the H100 data)
    b = copy.deepcopy(committed_layernorm)
    for i, row in enumerate(b["results"]["rows"]):
        row["us"] = _scaled(row["us"], 1.001 if i % 2 else 0.999)
    prior = gpu_build.prior_verdicts(gpu_build.measurements_path("layernorm").parent,
                                     committed_layernorm["provenance"]["gpu"])
    quotes = functools.partial(compare_builds.verdict_quotes, prior=prior)
    lines, failed = compare_builds.compare_data_set("layernorm", committed_layernorm, b, quotes=quotes)
    assert not failed, lines


def test_a_verdict_that_changes_is_reported(committed_layernorm):
    # the Triton backward at the narrowest width made 2.5 times faster in build B: its verdict against
    # torch and the count of widths it is faster at both change, and its figure lies outside A's range
    b = copy.deepcopy(committed_layernorm)
    n = committed_layernorm["results"]["n_values"][0]
    row = next(r for r in b["results"]["rows"] if (r["mode"], r["provider"], r["N"]) == ("backward", "triton", n))
    row["us"] = _scaled(row["us"], 0.4)
    before = layernorm_verdicts("layernorm", committed_layernorm)
    after = layernorm_verdicts("layernorm", b)
    key = f"bwd_verdict_n{n}"
    assert before[key] != "faster" and after[key] == "faster"
    lines, failed = compare_builds.compare_data_set("layernorm", committed_layernorm, b, quotes=layernorm_verdicts)
    assert failed
    assert f"    verdict {key}: {before[key]!r} in A, 'faster' in B" in lines
    assert f"    verdict bwd_vs_torch_tally: {before['bwd_vs_torch_tally']!r} in A, " in "\n".join(lines)
    assert sum(line.startswith(f"    results/rows/mode=backward/provider=triton/N={n}/") for line in lines) == 2


def test_the_command_compares_two_folders(tmp_path, capsys, committed_layernorm):
    for build in ("a", "b"):
        (tmp_path / build / "layernorm").mkdir(parents=True)
        (tmp_path / build / "layernorm" / "measurements.json").write_text(json.dumps(committed_layernorm))
    assert compare_builds.main([str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    out = capsys.readouterr().out
    pairs = len(compare_builds.figure_map(committed_layernorm))
    assert "faster: not in both builds, skipped" in out and f"layernorm: {pairs} figures in both" in out
    assert (ROOT / "scripts" / "compare_builds.py").is_file()


# --- one build's verdicts on an edge (--edges) ---------------------------------------------------------

def test_moved_scales_every_figure_by_its_kinds_move():
    a = synthetic_build()
    b = compare_builds.moved(a, seed=1)
    for (path, fig), (_, moved) in zip(compare_builds.figures(a), compare_builds.figures(b)):
        factor = moved["median"] / fig["median"]
        share = compare_builds.EDGE_MOVE[compare_builds.kind_of(path)]
        assert factor == pytest.approx(1 + share) or factor == pytest.approx(1 - share)
        assert [moved["low"], moved["high"], *moved["runs"]] == pytest.approx(
            [factor * v for v in (fig["low"], fig["high"], *fig["runs"])])
    assert a == synthetic_build()  # the build itself is left as it was


def test_edges_lists_the_verdicts_a_small_move_turns():
    # SYNTHETIC: two GPU pairs; the first's ranges are 3.1 % apart, just past the 3 % margin (faster,
    # on the edge); the second's 20 % apart (faster, far from it)
    def pair(b_median):
        return [{"provider": "fast", "gpu_us": fig(100.0)}, {"provider": "torch", "gpu_us": fig(b_median)}]
    edge = 100.2 * 1.03 * 1.031 / 0.97 / 0.998  # b's stated low end 3.1 % above a's top
    tree = document({"near": pair(edge), "far": pair(130.0)})

    def verdicts(name, m):
        return {key: claims.time_verdict(m["results"][key][0]["gpu_us"], m["results"][key][1]["gpu_us"], "gpu")
                for key in ("near", "far")}

    assert verdicts("x", tree) == {"near": "faster", "far": "faster"}
    assert compare_builds.edge_verdicts("x", tree, trials=8, quotes=verdicts) == {"near": {"faster", "on_par"}}


# --- verdicts on an edge: both builds keep the committed build's (normkit.claims.remembering) -----------

def test_two_builds_on_either_side_of_an_edge_tell_one_story_with_the_committed_verdicts(committed_layernorm):
    # the committed layernorm data, once with the forward at the narrowest width just past the "faster"
    # edge against torch and once just short of it (a SYNTHETIC move of 1 % each way): rendered by their
    # rule alone the two builds disagree; rendered as the GPU build renders them, against the committed
    # verdicts, they say what the committed build said
    n = committed_layernorm["results"]["n_values"][0]
    rows = {(r["mode"], r["provider"]): r for r in committed_layernorm["results"]["rows"] if r["N"] == n}
    ours, theirs = rows[("forward", "triton")]["us"], rows[("forward", "torch")]["us"]
    edge = claims.stated(theirs, "gpu")[0] / (1 + claims.MARGIN["gpu"]) / (1 + claims.REPRODUCIBILITY["gpu"])

    def build(factor):
        b = copy.deepcopy(committed_layernorm)
        row = next(r for r in b["results"]["rows"] if (r["mode"], r["provider"], r["N"]) == ("forward", "triton", n))
        row["us"] = _scaled(row["us"], edge * factor / ours["median"])
        return b

    fast, on_par = build(0.99), build(1.01)
    key = f"fwd_verdict_n{n}"
    assert layernorm_verdicts("layernorm", fast)[key] == "faster"
    assert layernorm_verdicts("layernorm", on_par)[key] == "on par"
    _, failed = compare_builds.compare_data_set("layernorm", fast, on_par, quotes=layernorm_verdicts)
    assert failed
    for prior_verdict in ("lower", "on_par"):
        prior = {f"compare | gpu | results/rows/mode=forward/provider=triton/N={n}/bytes={rows[('forward', 'triton')]['bytes']}/us"
                 f" | results/rows/mode=forward/provider=torch/N={n}/bytes={rows[('forward', 'torch')]['bytes']}/us": prior_verdict}
        quotes = lambda name, m: compare_builds.verdict_quotes(name, m, prior=prior)  # noqa: E731
        lines, failed = compare_builds.compare_data_set("layernorm", fast, on_par, quotes=quotes)
        assert not failed, lines
        assert quotes("layernorm", fast)[key] == {"lower": "faster", "on_par": "on par"}[prior_verdict]


def test_the_committed_verdicts_are_what_the_committed_data_render_to():
    for name in gpu_build.DATA_SETS:
        folder = gpu_build.measurements_path(name).parent
        if gpu_build.load_measurements(name)["provenance"].get("placeholder"):
            continue
        assert (folder / gpu_build.VERDICTS).is_file(), f"docs/data/{name}/{gpu_build.VERDICTS} is missing"
        gpu = gpu_build.load_measurements(name)["provenance"]["gpu"]
        assert gpu_build.prior_verdicts(folder, gpu), f"docs/data/{name}/{gpu_build.VERDICTS} is of another GPU"


def test_a_prior_build_on_another_gpu_is_not_kept(tmp_path):
    # verdicts stated on one GPU say nothing of where another GPU's figures sit against an edge
    (tmp_path / gpu_build.VERDICTS).write_text(json.dumps({"gpu": "NVIDIA H200", "verdicts": {"k": "lower"}}))
    assert gpu_build.prior_verdicts(tmp_path, "NVIDIA H200") == {"k": "lower"}
    assert gpu_build.prior_verdicts(tmp_path, "NVIDIA H100 80GB HBM3") == {}
    assert gpu_build.prior_verdicts(tmp_path / "nowhere", "NVIDIA H200") == {}
