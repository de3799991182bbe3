"""Every value the render inserts reads as words and numbers of the page's language.

The quotes ({{ chapter.key }}) and the tables a report writes are rendered here from the committed
measurements, in every language (scripts/gpu_build.py render, into a temporary folder), and each one is
checked: in Chinese and Vietnamese no English word (a design's configuration key, a verdict, "none")
other than the identifiers, units and names below, no bare dash in a sentence, and one number style per
language, the authoring guide's "Numbers": a minus sign, no exponent in Python's notation, 97% with no
space, Vietnamese decimal commas and grouped thousands, Chinese punctuation full-width. The committed
files must be what the render writes. The built pages are checked for the same number style in prose,
for a multiple or a count said twice, and for the date under each page.
"""

import json
import re
from html import unescape

import pytest

from sitecheck import DOCS, LANGUAGES, MEASURED, built_page, pages, reader_texts
from test_punctuation import prose
from test_wording import visible_text

import gpu_build

OTHERS = [language for language in LANGUAGES if language != "en"]
INLINE_CODE = re.compile(r"(`+)(?!`).+?(?<!`)\1|\$[^$\n]+\$")  # code and math: the same in every language
WORD = re.compile(r"\w+(?:[._-]\w+)*")
LATIN = re.compile(r"[A-Za-z][A-Za-z0-9._-]*")  # a word of ASCII letters (Vietnamese ones carry marks)
# a Vietnamese syllable written without marks ("so", "theo", "cho"): Vietnamese, even where English has it
VI_SYLLABLE = re.compile(r"(?:ngh|ng|nh|ch|gh|gi|kh|ph|qu|th|tr|[bcdghklmnprstvx])?[aeiouy]{1,3}(?:ng|nh|ch|[cmnpt])?",
                         re.IGNORECASE)
# Latin-script words a Chinese or Vietnamese value may hold: names of products and functions, units,
# formats, and the symbols of the formulas (N, M, x). Anything else is English that should be translated.
NAMES = {
    "GPU", "NVIDIA", "H200", "SM", "CUDA", "PyTorch", "torch", "Triton", "Python", "Liger", "Kernel", "Llama",
    "LlamaRMSNorm", "RMSNorm", "LayerNorm", "Hugging", "Face", "Adam", "Git", "SHA-256", "eager", "autograd",
    "Graph", "MSE", "L2", "token", "QuACK", "Liger-Kernel",
}
UNITS = {"µs", "ms", "GB", "s", "MB", "MiB", "KiB", "B", "fp16", "fp32", "bf16", "bfloat16", "float16", "float32"}
SYMBOLS = {"N", "M", "x", "g", "dW", "dB"}
# Vietnamese keeps these English words of the field as its own (glossary.toml gives them as the terms)
VIETNAMESE_LOANWORDS = {"kernel", "host", "warp", "gradient", "checkpoint", "cache", "benchmark", "Driver",
                        "commit", "token", "profiler", "bit", "byte", "build", "graph", "seed", "view",
                        # the glossary's Vietnamese terms that engineers keep in English
                        "tile", "wrapper", "occupancy", "pipeline"}
ALLOWED = {"zh": NAMES | UNITS | SYMBOLS, "vi": NAMES | UNITS | SYMBOLS | VIETNAMESE_LOANWORDS}


def is_identifier(word):
    """A function, module or constant name (rms_norm_fast, torch.compile, PREFETCH): code, not English."""
    return bool(re.search(r"[_.\d]", word)) or (word.isupper() and len(word) > 1)


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    """{data set: folder} with every table and quote rendered from the committed measurements (placeholder
    data renders no report: skipped, as the summary line says)."""
    root = tmp_path_factory.mktemp("rendered")
    for name in MEASURED:
        gpu_build.render(name, root / name)
    return {name: root / name for name in MEASURED}


def quotes(rendered, name, language):
    suffix = "" if language == "en" else f".{language}"
    return json.loads((rendered[name] / f"quotes{suffix}.json").read_text(encoding="utf-8"))


def tables(rendered, language):
    """(file name, text) of every table a report renders in one language."""
    for name, folder in rendered.items():
        for path in sorted(folder.glob(f"*.{language}.md")):
            yield f"{name}/{path.name}", path.read_text(encoding="utf-8")


def english_vocabulary(rendered):
    """Every word the English quotes and tables hold: what must not reach a Vietnamese value."""
    texts = [value for name in rendered for value in quotes(rendered, name, "en").values()]
    texts += [path.read_text(encoding="utf-8") for folder in rendered.values() for path in folder.glob("*.md")
              if not re.search(r"\.(?:zh|vi)\.md$", path.name)]
    return {word for text in texts for word in LATIN.findall(INLINE_CODE.sub(" ", text))}


def english_words(text, language, vocabulary):
    """The English words of a Chinese or Vietnamese value, code left out."""
    found = []
    for word in WORD.findall(INLINE_CODE.sub(" ", text)):
        allowed = word in ALLOWED[language] or word[0].lower() + word[1:] in ALLOWED[language]  # a sentence's start
        if not LATIN.fullmatch(word) or allowed or is_identifier(word):
            continue
        # Vietnamese writes in Latin letters: only a word the English renderings use, and no Vietnamese
        # syllable, is English
        if language == "zh" or (word in vocabulary and not VI_SYLLABLE.fullmatch(word)):
            found.append(word)
    return found


# one number style per language (the authoring guide's "Numbers")
STYLE = {
    "a hyphen for a minus sign": re.compile(r"(?<![\w\d])-\d"),
    "Python's exponent notation": re.compile(r"\de[+-]?\d"),
    "a space before %": re.compile(r"\d\s%"),
}
VI_STYLE = {
    "a decimal point": re.compile(r"(?<![\d.])\d+\.\d+(?![\d.])"),
    "a decimal comma written as a list": re.compile(r"\d; \d"),
}
ZH_STYLE = {"half-width punctuation beside Chinese": re.compile(r"[\u3400-\u9fff）][,:;](?:\s|$)|[,:;]\s[\u3400-\u9fff（]")}
# sizes are written as in code, never grouped: a shape (32768×4096), or a width, a range of widths
# (1024–16384) or a list of them, as any of the languages joins a list (tests/test_measurements.py
# reads the inserted values with the same rule)
SIZE_JOIN = r"(?:–|, |; |、| và | and | 和 )"
SIZE = re.compile(rf"\d×\d|^\d+(?:{SIZE_JOIN}\d+)*$")
# and in a sentence, the widths after "N = " wherever they stand, or a list of widths that ends it
# (faster.quotes.widths_sentence)
WIDTHS = re.compile(rf"N = \d+(?:{SIZE_JOIN}\d+)*|(?:: |：)\d+(?:{SIZE_JOIN}\d+)*[.。]$")
UNGROUPED = re.compile(r"(?<![\d\u00a0,.])\d{5,}")


def style_problems(text, language):
    """What in a value breaks its language's number style, as short phrases."""
    rules = STYLE | (VI_STYLE if language == "vi" else ZH_STYLE if language == "zh" else {})
    plain = INLINE_CODE.sub(" ", text)
    found = [what for what, rule in rules.items() if rule.search(plain)]
    if language == "vi" and not SIZE.search(text) and UNGROUPED.search(WIDTHS.sub("", plain)):
        found.append("five digits or more with no space between thousands")
    return found


@pytest.mark.parametrize("language", OTHERS)
def test_every_quote_reads_in_the_language_of_the_page(rendered, language):
    vocabulary = english_vocabulary(rendered)
    found = []
    for name in rendered:
        for key, value in sorted(quotes(rendered, name, language).items()):
            where = f"{name}.{key} ({language}) = {value!r}"
            found += [f"{where}: the English word '{w}'" for w in english_words(value, language, vocabulary)]
            found += [f"{where}: {what}" for what in style_problems(value, language)]
            if "—" in value:
                found.append(f"{where}: a dash where a sentence needs a word")
    assert not found, "quotes that do not read in the page's language:\n" + "\n".join(found)


@pytest.mark.parametrize("language", OTHERS)
def test_every_table_reads_in_the_language_of_the_page(rendered, language):
    vocabulary = english_vocabulary(rendered)
    found = []
    for name, text in tables(rendered, language):
        for number, line in enumerate(text.splitlines(), start=1):
            where = f"{name}:{number}"
            found += [f"{where}: the English word '{w}'" for w in english_words(line, language, vocabulary)]
            if name.endswith(f"provenance.{language}.md"):
                continue  # versions (CUDA 13.0) and a timestamp, written as their tools write them
            found += [f"{where}: {what}: {line[:100]}" for what in style_problems(line, language)
                      if "five digits" not in what]  # a table's cells hold sizes (N = 16384) beside numbers
    assert not found, "table text that does not read in the page's language:\n" + "\n".join(found)


def test_english_follows_the_same_number_style(rendered):
    found = [f"{name}.{key} = {value!r}: {what}" for name in rendered
             for key, value in quotes(rendered, name, "en").items() for what in style_problems(value, "en")]
    for name, folder in rendered.items():
        for path in folder.glob("*.md"):
            if not re.search(r"\.(?:zh|vi)\.md$", path.name):
                found += [f"{name}/{path.name}: {what}" for what in style_problems(path.read_text(encoding="utf-8"), "en")]
    assert not found, "\n".join(found)


def test_the_committed_tables_and_quotes_are_what_the_render_writes(rendered):
    stale = []
    for name, folder in rendered.items():
        for path in sorted(folder.iterdir()):
            if path.suffix in (".md", ".json"):
                committed = DOCS / "data" / name / path.name
                if not committed.is_file() or committed.read_text(encoding="utf-8") != path.read_text(encoding="utf-8"):
                    stale.append(committed.relative_to(DOCS.parent).as_posix())
    assert not stale, ("rendered files differ from a fresh render of the committed measurements: "
                       f"{', '.join(stale)}; run `.venv/bin/python scripts/gpu_build.py render` and commit docs/data")


def test_the_checks_find_what_they_look_for():
    vocabulary = {"row", "faster", "none"}
    assert english_words("前向采用 row 设计，`PREFETCH=0`，torch.compile", "zh", vocabulary) == ["row"]
    assert english_words("thiết kế row, nhanh hơn, theo hàng", "vi", vocabulary) == ["row"]
    assert style_problems("82 %", "zh") == ["a space before %"]
    assert style_problems("1,98e-05", "vi") == ["Python's exponent notation"]
    assert style_problems("-0,5", "vi") == ["a hyphen for a minus sign"]
    assert style_problems("131584 B", "vi") == ["five digits or more with no space between thousands"]
    assert style_problems("32768×4096", "vi") == [] and style_problems("10240 và 12288", "vi") == []
    assert style_problems("Có 2 độ rộng như vậy: 8193 và 16136.", "vi") == []
    assert style_problems("Có 16136 hàng: 8193 và 16136.", "vi") == ["five digits or more with no space between thousands"]
    # a range or a list of sizes, and widths after "N = " anywhere in a sentence, stay plain digits
    assert style_problems("1024–16384", "vi") == [] and SIZE.search("16384; 32768") and SIZE.search("1024–16384")
    assert style_problems("Ở N = 16383 và 16385, lượt ngược chậm hơn.", "vi") == []
    assert style_problems("Ở N = 4097, có 16136 hàng.", "vi") == ["five digits or more with no space between thousands"]
    assert style_problems("前向, GPU µs", "zh") == ["half-width punctuation beside Chinese"]
    assert style_problems("4250 (4160–4340) GB/s", "zh") == []


# --- The built pages: what the reader sees, numbers typed by the authors included

PROSE_STYLE = {
    "en": {"a space before %": re.compile(r"\d\s%")},
    "zh": {"a space before %": re.compile(r"\d\s%")},
    "vi": {"a space before %": re.compile(r"\d\s%"),
           "a multiple said twice ('gấp … ×')": re.compile(r"gấp\s+[\d,]+\s*×|[\d,]+×\s+lần\b"),
           "a count said twice": re.compile(r"\b\d+ ?/ ?\d+ (?:trên|trong|của) (?:tổng số )?(?:\d+|hai|ba|bốn|năm|sáu|"
                                            r"bảy|tám|chín|mười)\b")},
}
MINUS_RULE = {"a hyphen for a minus sign": STYLE["a hyphen for a minus sign"]}
REVISION_DATE = re.compile(r'<span class="git-revision-date-localized-plugin[^"]*"[^>]*>(.*?)</span>', re.DOTALL)
REVISION_TITLE = re.compile(r'<span class="git-revision-date-localized-plugin[^"]*" title="([^"]*)"')
DATES = {"en": r"[A-Z][a-z]+ \d{1,2}, \d{4}", "zh": r"\d{4}年\d{1,2}月\d{1,2}日", "vi": r"\d{1,2} tháng \d{1,2} năm \d{4}"}


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_built_pages_write_numbers_in_one_style(site_dir, language):
    found = []
    for page in pages(language):
        text = visible_text(built_page(site_dir, language, page).read_text(encoding="utf-8"))
        rules = PROSE_STYLE[language] | (MINUS_RULE if page.endswith(".md") else {})  # a notebook's code is text
        for what, rule in rules.items():
            found += [f"{language}/{page}: {what}: …{text[max(0, m.start() - 40):m.end() + 30]}…"
                      for m in rule.finditer(text)]
    assert not found, "numbers in another style than the authoring guide's (fix the page source):\n" + "\n".join(found)


# A size a Vietnamese author types (a width, a row count, a side of a shape) is a multiple of 256, as
# every width and row count the pages choose is; a number of five digits or more that is not one, and
# stands neither after "N = " nor in a shape, is a count, which Vietnamese groups: 2 147 483 647.
TYPED_SIZE_STEP = 256
IN_A_SHAPE = re.compile(r"\d\s?×\s?\d")


def ungrouped_counts(text):
    """The numbers of five digits or more a Vietnamese text writes without grouping that are not sizes."""
    clean = prose(text)
    for match in UNGROUPED.finditer(clean):
        around = clean[max(0, match.start() - 3):match.end() + 3]
        if int(match.group()) % TYPED_SIZE_STEP and not IN_A_SHAPE.search(around) \
                and not clean[:match.start()].endswith("N = "):
            yield clean[max(0, match.start() - 30):match.end() + 20].replace("\n", " ")


def test_the_typed_number_rule_keeps_sizes_as_in_code_and_groups_counts():
    assert not list(ungrouped_counts("Ở 16384 cột, 32768 phần tử; 262400 × 8192; N = 16385; 10923×12288."))
    assert len(list(ungrouped_counts("Giá trị lớn nhất là 2147483647, với 16385 cột."))) == 2
    assert not list(ungrouped_counts("Giá trị lớn nhất là 2\u00a0147\u00a0483\u00a0647, `x[2147483647]`, $N = 12289$."))


def test_vietnamese_pages_group_typed_counts_and_keep_sizes_as_in_code():
    found = [f"{name}: …{where}…" for name, text in reader_texts("vi") if not name.startswith("docs/data/")
             for where in ungrouped_counts(text)]
    assert not found, ("five digits or more with no space between thousands, not a size (a multiple of "
                       f"{TYPED_SIZE_STEP}, after 'N = ' or in a shape): group it with no-break spaces, "
                       "as the authoring guide says:\n" + "\n".join(found))


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_date_under_each_page_reads_as_the_language_writes_a_date(site_dir, language):
    seen = 0
    for page in pages(language):
        html = built_page(site_dir, language, page).read_text(encoding="utf-8")
        for date in REVISION_DATE.findall(html):
            seen += 1
            date = unescape(re.sub(r"<[^>]+>", "", date)).strip()
            assert re.fullmatch(DATES[language], date), f"{language}/{page}: the page's date reads {date!r}"
        for title in REVISION_TITLE.findall(html):  # the tooltip: the same date, then the time
            assert re.fullmatch(DATES[language] + r" \d{1,2}:\d{2}:\d{2} \S+", unescape(title)), \
                f"{language}/{page}: the date's tooltip reads {title!r}"
    assert seen, f"{language}: no page shows its date"
