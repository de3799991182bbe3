"""The published numbers: measured on the current kernel sources, rendered faithfully, quoted from data."""

import html as html_lib
import importlib.util
import json
import re
import shutil
import subprocess
import sys
import types

import pytest

from sitecheck import CHAPTERS, DOCS, LANGUAGES, MEASURED, ROOT, built_page, markdown_pages, snippet_includes

import gpu_build  # scripts/, put on the path by sitecheck
from test_inserted_values import SIZE, WIDTHS
from normkit.tables import localized_name

PLACEHOLDER = re.compile(r"\{\{\s*([a-z][a-z0-9_]*)\.([A-Za-z0-9_]+)\s*\}\}")


def load(chapter):
    """A data set's measurements, refused (naming the file) unless a GPU measured them."""
    path = gpu_build.measurements_path(chapter)
    assert path.is_file(), f"{chapter}: no measurements; run the GPU build (scripts/gpu_build.py --only {chapter})"
    measurements = json.loads(path.read_text(encoding="utf-8"))
    reason = gpu_build.not_from_a_gpu(measurements["provenance"])
    assert not reason, f"docs/data/{chapter}/measurements.json did not come from a GPU: {reason}"
    return measurements


@pytest.mark.parametrize("chapter", MEASURED)
def test_measurements_come_from_a_gpu(chapter):
    load(chapter)


@pytest.mark.parametrize("chapter", MEASURED)
def test_measurements_are_of_the_current_kernel_sources(chapter):
    """Measured on a GPU, not a --quick run, of sources that still exist and have not changed since."""
    problems = gpu_build.data_set_problems(chapter)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("chapter", MEASURED)
def test_measurements_say_where_and_when(chapter):
    provenance = load(chapter)["provenance"]
    for key in ("gpu", "sm_count", "driver", "cuda", "torch", "triton", "date", "git_commit", "copy_gb_per_s"):
        assert provenance.get(key) not in (None, "", "unknown"), f"{chapter}: provenance lacks {key}"


@pytest.mark.parametrize("chapter", MEASURED)
def test_rendered_files_match_the_measurements(chapter, tmp_path):
    load(chapter)  # placeholder files render from placeholder data, and match it: refuse both
    gpu_build.render(chapter, tmp_path)
    committed = DOCS / "data" / chapter
    for rendered in sorted(tmp_path.iterdir()):
        published = committed / rendered.name
        assert published.is_file(), f"{chapter}: {rendered.name} is rendered but not committed"
        assert published.read_bytes() == rendered.read_bytes(), (
            f"{chapter}: docs/data/{chapter}/{rendered.name} differs from what the measurements render to; "
            f"run scripts/gpu_build.py render --only {chapter}"
        )


def _copy_of_snippets(tmp_path):
    snippets = tmp_path / "snippets"
    shutil.copytree(ROOT / "snippets", snippets, ignore=shutil.ignore_patterns("__pycache__"))
    return snippets


@pytest.mark.parametrize("chapter", MEASURED)
def test_a_changed_kernel_line_makes_the_measurements_stale(chapter, tmp_path):
    sources = list(load(chapter)["provenance"]["sources"])
    kernels = [name for name in sources if "@triton.jit" in (gpu_build.SNIPPETS / name).read_text(encoding="utf-8")]
    assert kernels, f"{chapter}: the measured sources hold no kernel"
    snippets = _copy_of_snippets(tmp_path)
    assert gpu_build.source_prints(sources, snippets) == gpu_build.source_prints(sources)
    for name in kernels:
        kernel, original = snippets / name, (gpu_build.SNIPPETS / name).read_text(encoding="utf-8")
        # a comment and a line break are a tidy-up: the same source
        kernel.write_text(original.replace("@triton.jit", "# tidied\n\n@triton.jit", 1), encoding="utf-8")
        assert gpu_build.source_prints([name], snippets) == gpu_build.source_prints([name]), f"{name}: a comment counts"
        # a line of code is another source
        kernel.write_text(original.replace("@triton.jit", "EDITED = 1\n\n\n@triton.jit", 1), encoding="utf-8")
        assert gpu_build.source_prints([name], snippets) != gpu_build.source_prints([name]), f"{name} is not fingerprinted"
        kernel.write_text(original, encoding="utf-8")


def test_presentation_modules_are_never_measured_sources():
    for chapter in MEASURED:
        sources = load(chapter)["provenance"]["sources"]
        assert not [name for name in sources if gpu_build.is_presentation(name)], chapter


def test_the_measured_sources_are_the_modules_the_measurement_imported():
    # a fresh process, as gpu_build.measure() gives each data set
    script = (
        "import importlib, json, sys; sys.path.insert(0, 'scripts'); import gpu_build; "
        "importlib.import_module('rmsnorm.benchmark'); print(json.dumps(gpu_build.loaded_sources('rmsnorm')))"
    )
    run = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True)
    sources = json.loads(run.stdout.strip().splitlines()[-1])
    assert "rmsnorm/ops.py" in sources and "normkit/runtime.py" in sources
    assert not any(name.startswith("layernorm/") or "/test_" in name for name in sources)


def _quoted(markdown):
    """The measured quotes of a page: placeholders that name a data set (other hooks own {{ page.* }})."""
    return [(name, key) for name, key in PLACEHOLDER.findall(markdown) if name in gpu_build.DATA_SETS]


def _quotes(chapter, language):
    return json.loads((DOCS / "data" / chapter / localized_name("quotes.json", language)).read_text(encoding="utf-8"))


def test_every_quoted_number_exists_in_the_data():
    for language, page, markdown in markdown_pages():
        for chapter, key in _quoted(markdown):
            assert key in _quotes(chapter, language), (
                f"{language}/{page}: quotes {chapter}.{key}, which the data does not hold"
            )


@pytest.mark.parametrize("language", LANGUAGES)
def test_quoted_numbers_appear_in_the_built_pages(site_dir, language):
    for lang, page, markdown in markdown_pages():
        if lang != language:
            continue
        html = html_lib.unescape(built_page(site_dir, language, page).read_text(encoding="utf-8"))
        assert "{{" not in re.sub(r"<code>.*?</code>|<pre.*?</pre>", "", html, flags=re.DOTALL), (
            f"{language}/{page}: a placeholder was left in the built page"
        )
        for chapter, key in _quoted(markdown):
            if chapter not in MEASURED:
                continue  # placeholder data: "not measured yet" (the summary line says it was skipped)
            quoted = _quotes(chapter, language)[key]
            assert quoted in html, f"{language}/{page}: {chapter}.{key} = {quoted!r} is not on the page"


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("chapter", CHAPTERS)
def test_each_chapter_shows_its_measurements_with_provenance(chapter, language):
    """The chapter shows its plot; its tables and provenance are on the chapter's page or, where the
    page would be too long for a phone, on the reference page beside it, which the chapter links."""
    markdown = (DOCS / language / chapter / "index.md").read_text(encoding="utf-8")
    reference = DOCS / language / chapter / "reference.md"
    includes = snippet_includes(markdown)
    if reference.is_file():
        assert "(reference.md" in markdown, f"{language}/{chapter}: the chapter does not link its reference page"
        includes += snippet_includes(reference.read_text(encoding="utf-8"))
    assert f"{chapter}/provenance.md" in includes, f"{language}/{chapter}: no provenance table (GPU, versions, date)"
    assert any(t.startswith(f"{chapter}/") and t.endswith(".md") and "provenance" not in t for t in includes), (
        f"{language}/{chapter}: no table of measured results"
    )
    assert f"../data/{chapter}/" in markdown and ".svg" in markdown, f"{language}/{chapter}: no plot of the results"


@pytest.mark.parametrize("language", [lang for lang in LANGUAGES if lang != "en"])
def test_tables_are_shown_in_the_language_of_the_page(site_dir, language):
    for lang, page, markdown in markdown_pages():
        if lang != language:
            continue
        built = html_lib.unescape(built_page(site_dir, language, page).read_text(encoding="utf-8"))
        for target in snippet_includes(markdown):
            localized = DOCS / "data" / target.replace(".md", f".{language}.md")
            if not target.endswith(".md") or not localized.is_file() or target.split("/")[0] not in MEASURED:
                continue  # a listing, or a table not rendered in this language, or placeholder data
            lines = localized.read_text(encoding="utf-8").splitlines()
            header = next(line for line in lines if line.startswith("|"))
            for cell in filter(None, (c.strip() for c in header.split("|"))):
                cell = re.sub(r"`([^`]+)`", r"<code>\1</code>", cell)  # a configuration key, as code
                assert cell in built, f"{language}/{page}: the {language} table {localized.name} is not shown ({cell!r})"


def _hook():
    spec = importlib.util.spec_from_file_location("measurements_hook", ROOT / "hooks" / "measurements.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _inserted(language):
    """Every number the hook inserts into the pages of one language, as (page, placeholder, text)."""
    hook = _hook()
    config = {"theme": {"language": language}}
    for lang, page, markdown in markdown_pages():
        if lang != language:
            continue
        placeholders = [f"{{{{ {name}.{key} }}}}" for name, key in _quoted(markdown)]
        page_stub = types.SimpleNamespace(file=types.SimpleNamespace(src_uri=page))
        texts = hook.on_page_markdown("\n".join(placeholders), page=page_stub, config=config).split("\n")
        yield from ((page, placeholder, text) for placeholder, text in zip(placeholders, texts))


# Sizes are written as in code, never grouped: a shape, a width, a range or a list of them (SIZE), and
# the widths a sentence names (WIDTHS): the rules test_inserted_values reads the rendered quotes with
def test_inserted_numbers_follow_the_vietnamese_format():
    inserted = list(_inserted("vi"))
    assert any("," in text for _, _, text in inserted), "no decimal comma in any inserted Vietnamese number"
    for page, placeholder, text in inserted:
        if SIZE.search(text) or not re.search(r"\d", text):
            continue
        assert not re.search(r"\d\.\d", text), f"vi/{page}: {placeholder} -> {text!r} has an English decimal point"
        assert not re.search(r"(?<![\d,])\d{5}", WIDTHS.sub("", text)), \
            f"vi/{page}: {placeholder} -> {text!r} has no space between thousands"


def test_inserted_multiples_read_bei_in_chinese():
    inserted = list(_inserted("zh"))
    assert any(text.endswith(" 倍") for _, _, text in inserted), "no multiple among the Chinese quotes"
    for page, placeholder, text in inserted:
        assert not re.search(r"\d×$", text), f"zh/{page}: {placeholder} -> {text!r} is a multiple written '×'"


def test_english_quotes_are_inserted_as_rendered():
    for page, placeholder, text in _inserted("en"):
        chapter, key = PLACEHOLDER.match(placeholder).groups()
        assert text == _quotes(chapter, "en")[key], f"en/{page}: {placeholder}"


def test_readme_and_gpu_build_agree_on_what_the_gpu_machine_needs():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Regenerating the measurements (GPU)", 1)[1].split("\n## ", 1)[0]
    named = set(re.findall(r"`([a-z][a-z0-9-]*)`", section))
    pinned = {line.split("==")[0].strip() for line in (ROOT / "requirements.txt").read_text().splitlines()
              if "==" in line and not line.startswith("#")}
    for name in gpu_build.GPU_REQUIREMENTS:
        assert name in named, f"README's GPU section does not name {name}, which scripts/gpu_build.py needs"
        assert name in pinned, f"{name} is needed by the GPU build but not pinned in requirements.txt"


def test_data_is_rendered_in_every_language_the_site_builds():
    from normkit.words import LANGUAGES as RENDERED

    assert tuple(LANGUAGES) == RENDERED, "scripts/build_site.py and normkit/words.py name different languages"
