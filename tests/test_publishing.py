"""What publishing relies on: a valid workflow, links that resolve, a 404 page and page descriptions."""

import subprocess
import sys

import pytest
import yaml

from sitecheck import LANGUAGES, ROOT, built_page, output_dir, pages, tags

import check_links  # scripts/check_links.py (sitecheck puts scripts/ on sys.path)

WORKFLOW = ROOT / ".github" / "workflows" / "pages.yml"


def test_the_publishing_workflow_validates():
    result = subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows", str(WORKFLOW)],
        capture_output=True, text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    text = WORKFLOW.read_text(encoding="utf-8")
    assert "make site" in text and "check_links.py" in text, "the workflow must build strictly and check links"


def test_publishing_waits_for_the_checks_and_the_kernel_tests():
    jobs = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))["jobs"]
    deploy = next(name for name, job in jobs.items() if any("deploy-pages" in s.get("uses", "") for s in job["steps"]))
    build = jobs[deploy]["needs"]
    runs = [step.get("run", "") or step.get("uses", "") for step in jobs[build]["steps"]]
    upload = next(i for i, step in enumerate(runs) if "upload-pages-artifact" in step)
    for command in ("make check", "pytest snippets"):
        at = next((i for i, step in enumerate(runs) if command in step), None)
        assert at is not None and at < upload, f"{WORKFLOW.name}: job '{build}' must run {command} before it uploads the site"


def test_every_internal_link_and_anchor_resolves(site_dir):
    broken, external = check_links.check(site_dir)
    assert not broken, "broken internal links:\n" + "\n".join(broken)
    assert all(url.startswith("https://") for url in external), f"insecure external links: {external}"


@pytest.mark.parametrize("language", LANGUAGES)
def test_each_language_has_a_404_page_linking_home(site_dir, language):
    page = output_dir(site_dir, language) / "404.html"
    assert page.is_file(), f"{language}: no 404 page"
    hreflangs = {attrs.get("hreflang") for tag, attrs in tags(page) if tag == "a" and "not-found" in (attrs.get("class") or "")}
    assert hreflangs == set(LANGUAGES), f"{language}: the 404 page should link to every language's home"


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_page_has_its_own_description_and_a_favicon(site_dir, language):
    descriptions = {}
    for page in pages("en"):
        head = tags(built_page(site_dir, language, page))
        meta = [a.get("content") for t, a in head if t == "meta" and a.get("name") == "description"]
        assert meta and meta[0], f"{language}/{page}: no description for link previews"
        descriptions[page] = meta[0]
        assert any(t == "link" and a.get("rel") == "icon" and a.get("href", "").endswith(".svg") for t, a in head)
    assert len(set(descriptions.values())) == len(descriptions), f"{language}: pages share a description"
