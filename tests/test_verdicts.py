"""Every verdict a page states follows the site's rule, and stands beside the figures it rests on.

A page's verdict ("faster", "on par", "met", ...) is a quote, {{ set.key }}. The report that wrote it
also wrote, in docs/data/<set>/basis.json, what it rests on (normkit.claims.cite): the ranges it
compared and the quotes that show its figures. Here, in every language, each verdict quote a page uses

- has a basis (a verdict with none could rest on anything),
- is followed by the rule on those ranges, as the reference pages state it: a time is faster or slower
  only where the two stated ranges lie apart by the margin; a host cost where the range of the paired
  speed-up clears 1 by its margin; a target is met where the whole range lies at or above it, missed
  where all of it lies below. A verdict on the rule's edge (within EDGE, a rebuild's move) may keep the
  previous build's (normkit.claims.remembering), so either reading passes there;
- and shares its paragraph (or list item) with at least one quote that shows its figures, so that the
  reader sees what the verdict reads.

Nothing is measured here: the test reads the pages' sources and what the GPU build rendered.
"""

import json
import re

import pytest

from sitecheck import DOCS, LANGUAGES, MEASURED
from normkit import claims
from normkit.words import Words

QUOTE = re.compile(r"\{\{\s*(\w+)\.(\w+)\s*\}\}")
VERDICT_LABELS = ("faster", "slower", "on_par", "target_met", "target_missed", "target_within")
RULE_WORDS = {"faster": "faster", "slower": "slower", "on_par": "on_par",
              "target_met": "met", "target_missed": "missed", "target_within": "within"}


def data(name, stem, language="en"):
    suffix = "" if language == "en" else f".{language}"
    return json.loads((DOCS / "data" / name / f"{stem}{suffix}.json").read_text(encoding="utf-8"))


def reading(word, language):
    """The rule's word for a verdict as the page wrote it, in its language."""
    t = Words(language)
    return next(RULE_WORDS[label] for label in VERDICT_LABELS if t(label) == word)


def by_rule(entry, scale=(1.0, 1.0)):
    """The verdict the site's rule gives on a basis, its figures scaled (a rebuild's move)."""
    kind, ranges = entry["kind"], [[v * s for v in r] for r, s in zip(entry["ranges"], scale)]
    margin = claims.MARGIN[kind]
    if entry["rule"] == "against":
        (low, high), target = ranges[0], entry["target"]
        return "met" if low >= target else "missed" if high < target else "within"
    if entry["rule"] == "speedup":  # other / fast, its range as compare() reads it
        low, high = ranges[0]
        return "faster" if low > 1 + margin else "slower" if high * (1 + margin) < 1 else "on_par"
    (a_low, a_high), (b_low, b_high) = ranges
    return "faster" if b_low > a_high * (1 + margin) else "slower" if a_low > b_high * (1 + margin) else "on_par"


def allowed(entry):
    """What the rule gives, and, on its edge, what a rebuild's move of the figures could give. A
    speed-up's one range is the ratio of two figures that each move by EDGE (claims._remembered
    moves them in opposite directions): the ratio moves by (1 + EDGE) / (1 - EDGE)."""
    edge = claims.EDGE[entry["kind"]]
    if entry["rule"] == "speedup":
        ratio = (1 + edge) / (1 - edge)
        moves = [(1.0,), (ratio,), (1 / ratio,)]
    else:
        moves = [(1.0, 1.0), (1 + edge, 1 - edge), (1 - edge, 1 + edge)]
    return {by_rule(entry, move) for move in moves}


def blocks(text):
    """Paragraphs and list items of a page's source: the unit in which a reader reads a verdict."""
    return [b for b in re.split(r"\n\s*\n|\n(?=\s*[-*] )", text) if b.strip()]


def pages_with_verdicts(language):
    for page in sorted((DOCS / language).rglob("*.md")):
        for block in blocks(page.read_text(encoding="utf-8")):
            for name, key in QUOTE.findall(block):
                if name in MEASURED:
                    yield page, block, name, key


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_verdict_on_a_page_follows_the_rule_beside_its_figures(language):
    bases = {name: data(name, "basis") for name in MEASURED}
    quotes = {name: data(name, "quotes", language) for name in MEASURED}
    verdict_words = {Words(language)(label) for label in VERDICT_LABELS}
    checked, problems = 0, []
    for page, block, name, key in pages_with_verdicts(language):
        where = f"{page.relative_to(DOCS)}: {name}.{key}"
        said = quotes[name].get(key)
        if said not in verdict_words:
            continue
        entry = bases[name].get(key)
        if entry is None:
            problems.append(f"{where} says '{said}' with no basis (cite it in the report: normkit.claims.cite)")
            continue
        checked += 1
        if reading(said, language) not in allowed(entry):
            problems.append(f"{where} says '{said}', the rule gives {by_rule(entry)} on {entry['ranges']}")
        shown = {k for n, k in QUOTE.findall(block) if n == name}
        if not shown & set(entry["shows"]):
            problems.append(f"{where} says '{said}' without any of its figures ({', '.join(entry['shows'])}) "
                            f"in the same paragraph")
    assert not problems, "\n".join(problems)
    assert checked, f"no verdict found on the {language} pages: the test reads nothing"


def test_every_basis_follows_the_rule():
    """Every verdict the reports cite, used on a page or not, is one the rule allows on its figures."""
    for name in MEASURED:
        quotes = data(name, "quotes")
        for key, entry in data(name, "basis").items():
            assert reading(quotes[key], "en") in allowed(entry), (name, key, quotes[key], entry)


def test_the_rule_here_is_the_rule_of_the_reports():
    """by_rule() is this test's own reading of the rule; on synthetic figures it agrees with normkit.claims."""
    fig = lambda m: {"median": m, "low": m * 0.99, "high": m * 1.01, "runs": [m * 0.99, m, m * 1.01]}  # noqa: E731
    for other in (50.0, 96.0, 100.0, 104.0, 110.0, 200.0):
        for kind in ("gpu", "host"):
            with claims.citing() as basis:
                claims.cite("k", (fig(100.0), fig(other)), kind, ())
            assert by_rule(basis["k"]) == claims.time_verdict(fig(100.0), fig(other), kind), (other, kind)
        with claims.citing() as basis:
            claims.cite("k", (fig(other),), "gpu", (), target=100.0)
        assert by_rule(basis["k"]) == claims.against(fig(other), 100.0, "gpu"), other
