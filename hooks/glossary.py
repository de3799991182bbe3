"""The glossary: one data file for three languages, rendered into each language's glossary page.

snippets/normkit/glossary.toml holds every term the site uses, with its form and a one-line
definition in en, zh and vi, and the forms each language rejects. docs/<lang>/glossary.md writes
`{{ glossary }}` where the terms go and this hook puts the terms of the page's language there, so
the page is always the data that tests/test_glossary.py checks the other pages against.

The terms are a definition list (legible on a phone, where Material shrinks table text), in the
alphabetical order of the page's language: English by the term; Chinese by the English term shown
beside each one (a reader looks a term up by the name the literature uses); Vietnamese by its own
alphabet. Each term has the same anchor in every language (glossary/#lane).

Every other page gets a link to the glossary from the first use of each term it uses, in prose:
see "Links from the first use" below.
"""

import posixpath
import re
import unicodedata

import tomllib
from functools import cache
from pathlib import Path

from mkdocs.exceptions import PluginError

GLOSSARY = Path(__file__).resolve().parent.parent / "snippets" / "normkit" / "glossary.toml"
LANGUAGES = ("en", "zh", "vi")
MARKER = "{{ glossary }}"


@cache
def entries():
    """{id: {language: {"term", "definition", "rejected"?}}}, in the order of the file."""
    return tomllib.loads(GLOSSARY.read_text(encoding="utf-8"))


def terms():
    """The entries shown on the glossary pages: ids starting with '_' only list wording to avoid."""
    return {key: entry for key, entry in entries().items() if not key.startswith("_")}


def problems():
    """Every way the data falls short of its schema, as readable lines (empty when complete)."""
    found = []
    for key, entry in entries().items():
        for language in LANGUAGES:
            fields = entry.get(language)
            if fields is None:
                found.append(f"{key}: no [{key}.{language}] table")
                continue
            for field in ("term", "definition"):
                if not str(fields.get(field, "")).strip():
                    found.append(f"{key}.{language}: '{field}' is missing or empty")
            for field in ("rejected", "forms", "not_in"):
                values = fields.get(field, [])
                if not isinstance(values, list) or not all(isinstance(f, str) and f.strip() for f in values):
                    found.append(f"{key}.{language}: '{field}' must be a list of non-empty strings")
        unknown = set(entry) - set(LANGUAGES)
        if unknown:
            found.append(f"{key}: unknown language tables {sorted(unknown)}")
    return found


def rejected_forms(language):
    """(form, id, the form to use instead) for every form the language rejects."""
    for key, entry in entries().items():
        fields = entry.get(language, {})
        for form in fields.get("rejected", []):
            yield form, key, fields.get("term", "")


# The Vietnamese alphabet's order: a ă â b c d đ e ê g h i k l m n o ô ơ p q r s t u ư v x y. Its
# letters with a breve, circumflex or horn (and đ) are letters of their own; the five tone marks only
# break ties. A collation library (PyICU) is a C++ build for this one sort: the rule is short.
VI_LETTER_MARKS = {"\u0306": 1, "\u0302": 2, "\u031b": 3}  # breve, circumflex, horn


def vietnamese_key(text):
    letters, tones = [], []
    for char in text.casefold():
        if char == "đ":
            letters.append(("d", 1))
            continue
        base, *marks = unicodedata.normalize("NFD", char)
        letters.append((base, max((VI_LETTER_MARKS.get(m, 0) for m in marks), default=0)))
        tones.append("".join(m for m in marks if m not in VI_LETTER_MARKS))
    return letters, tones


def sort_key(entry, language):
    if language == "vi":
        return vietnamese_key(entry["vi"]["term"])
    return entry["en"]["term"].casefold(), entry[language]["term"]


def anchor(key):
    return key.replace("_", "-")


ENGLISH_BESIDE = {"zh": "（{}）"}  # full-width parentheses beside Chinese; " ({})" elsewhere


def english_beside(entry, language):
    """The English term beside a translated one, in the language's parentheses, or nothing where the
    translated term already shows it. Its parts do not nest: "data type (dtype)" is written
    (data type, dtype), and a part the translated term shows (SM, ulp) is left out."""
    own = entry[language]["term"]
    parts = [part.strip() for part in re.split(r"[()]", entry["en"]["term"]) if part.strip()]
    shown = [part for part in parts if not re.search(rf"(?<!\w){re.escape(part)}(?!\w)", own, re.IGNORECASE)]
    if language == "en" or not shown:
        return ""
    return ENGLISH_BESIDE.get(language, " ({})").format(", ".join(shown))


def listing(language):
    """The terms as a definition list: the term (and the English one), then its definition."""
    lines = []
    for key, entry in sorted(terms().items(), key=lambda item: sort_key(item[1], language)):
        own = entry[language]
        lines += [f'<span id="{anchor(key)}"></span>**{own["term"]}**{english_beside(entry, language)}', "",
                  f":   {own['definition']}", ""]
    return "\n".join(lines)


# --- Links from the first use ------------------------------------------------------------------
#
# Each page links a term to its glossary entry once, where the term is first used in prose. Why a
# hook of our own: the maintained alternatives do something else. Python-Markdown's abbr (and
# pymdownx.snippets' auto_append of an abbreviations file) marks *every* occurrence with a tooltip
# and links nowhere; it cannot tell a first use from the others, nor keep out of headings. Material's
# content.tooltips only styles those. What we need is one link a term a page, at the first use, in
# three languages (Chinese has no spaces between words), never inside code, headings, links, math,
# included files or the {{ chapter.key }} quotes of measured values.
#
# It works on the page's Markdown before measurements.py fills the quotes and before
# pymdownx.snippets includes files, so the quotes and every included table or listing are still
# their one-line placeholders, and are skipped. The forms that count as a use of a term are its
# `term`, its `forms`, and in English their plurals; `not_in` lists longer words that contain a form
# without being a use of it (Chinese 运行 is not a use of 行, "row"). At each position the longest
# form wins, so "atomic lock" is a use of atomic_lock, not of lock. A term the page already links to
# by hand (a link to glossary.md#its-anchor) gets no second link.

FENCE_OPEN = re.compile(r"^(\s*)(`{3,}|~{3,})")
# (an attribute list on a line of its own is skipped; a line that starts and ends with a quote is prose)
SKIPPED_LINE = re.compile(
    r"^\s*(?:#{1,6}\s|;?-{1,}8<-{1,}|!!!|\?\?\?|===\s|///|<|\*\[|\[[^\]]+\]:\s|\|?\s*:?-{3,}|\{(?!\{).*\}\s*$)")
# spans of a line that are not prose: code, math, quotes of measured values, attribute lists,
# images, links, HTML tags and entities, bare addresses
SKIPPED_SPAN = re.compile(
    r"(`+).+?(?<!`)\1(?!`)"
    r"|(?<![\\$])\$(?!\$)[^$\n]+?(?<!\\)\$"
    r"|\\\(.+?\\\)"
    r"|\{\{.*?\}\}"
    r"|\{\s*[:#.\w][^{}\n]*\}"
    r"|!?\[(?:[^\[\]]|\[[^\]]*\])*\](?:\([^)\n]*\)|\[[^\]\n]*\])?"
    r"|<[^>\n]+>|&#?\w+;|https?://\S+")
GLOSSARY_LINK = re.compile(r"\]\((?:\.\./)*glossary\.md#([\w-]+)")


def _english_plurals(form):
    if form[-1].isupper():  # SM, SMs
        return [form, form + "s"]
    if re.search(r"(?:s|x|z|ch|sh)$", form):
        return [form, form + "es"]
    if re.search(r"[^aeiou]y$", form):
        return [form, form[:-1] + "ies"]
    return [form, form + "s"]


@cache
def uses(language):
    """{surface form: id or None}: every form that counts as a use of a term in this language, and
    (mapped to None) the longer words that contain a form without being a use of it."""
    found = {}
    for key, entry in terms().items():
        fields = entry[language]
        forms = fields.get("forms", [fields["term"]])
        if language == "en":
            forms = [plural for form in forms for plural in _english_plurals(form)]
        for form in forms:
            found.setdefault(form, key)
            if form[0].islower():  # a sentence may start with it
                found.setdefault(form[0].upper() + form[1:], key)
        for word in fields.get("not_in", []):
            found[word] = None
    return found


@cache
def use_pattern(language):
    forms = sorted(uses(language), key=len, reverse=True)
    alternatives = "|".join(re.escape(form) for form in forms)
    if language == "zh":  # no spaces between words: the longest form at the earliest position
        return re.compile(f"(?:{alternatives})")
    return re.compile(rf"(?<![\w-])(?:{alternatives})(?![\w-])")


def prose_spans(markdown):
    """(start, end) of the parts of the Markdown that are prose a term may be linked in."""
    spans, offset, fence = [], 0, None
    in_math = False
    for line in markdown.splitlines(keepends=True):
        start, offset = offset, offset + len(line)
        if fence:
            if re.match(rf"^\s*{re.escape(fence[0])}{{{len(fence)}}}[{re.escape(fence[0])}]*\s*$", line):
                fence = None
            continue
        opening = FENCE_OPEN.match(line)
        if opening:
            fence = opening.group(2)
            continue
        if line.strip().startswith("$$"):
            closes_here = line.strip() != "$$" and line.strip().endswith("$$")
            in_math = in_math if closes_here else not in_math
            continue
        if in_math or SKIPPED_LINE.match(line):
            continue
        position = start
        for skipped in SKIPPED_SPAN.finditer(line):
            spans.append((position, start + skipped.start()))
            position = start + skipped.end()
        spans.append((position, offset))
    return [(a, b) for a, b in spans if b > a]


def term_uses(markdown, language):
    """(match, id) for every use of a term in the page's prose, in order."""
    pattern, forms = use_pattern(language), uses(language)
    for start, end in prose_spans(markdown):
        for match in pattern.finditer(markdown, start, end):
            key = forms[match.group(0)]
            if key is not None:
                yield match, key


def link_first_uses(markdown, language, glossary_url, definitions=None):
    """The Markdown with the first use of every term in prose linked to its glossary entry."""
    linked = set(GLOSSARY_LINK.findall(markdown))
    insertions = []
    for match, key in term_uses(markdown, language):
        if anchor(key) in linked:
            continue
        linked.add(anchor(key))
        title = f' "{definitions[key]}"' if definitions else ""
        insertions.append((match.start(), match.end(), f"[{match.group(0)}]({glossary_url}#{anchor(key)}{title})"))
    for start, end, link in reversed(insertions):
        markdown = markdown[:start] + link + markdown[end:]
    return markdown


@cache
def link_titles(language):
    """{term: its definition as a link's title} in one language."""
    return {key: plain_definition(entry[language]["definition"]) for key, entry in terms().items()}


def plain_definition(text):
    """A definition as a link's title: no Markdown, no quotes, and no | (a link may sit in a table
    cell, which a | would end): |x| reads the same as ∣x∣."""
    return re.sub(r"[`*]", "", text).replace('"', "'").replace("|", "\u2223")


def on_page_markdown(markdown, page, config, **kwargs):
    language = config["theme"]["language"]
    if MARKER not in markdown:
        if not page.file.src_uri.endswith(".md"):
            return markdown
        url = posixpath.relpath("glossary.md", posixpath.dirname(page.file.src_uri) or ".")
        return link_first_uses(markdown, language, url, link_titles(language))
    missing = problems()
    if missing:
        raise PluginError(f"{GLOSSARY.name} is incomplete:\n  " + "\n  ".join(missing))
    return markdown.replace(MARKER, listing(language))


def on_pre_build(config, **kwargs):
    # mkdocs serve keeps this module between its rebuilds (on_serve runs once, before the first):
    # read the glossary again at each one, so an edit of glossary.toml shows (snippets/ is watched)
    for cached in (entries, uses, use_pattern, link_titles):
        cached.cache_clear()
