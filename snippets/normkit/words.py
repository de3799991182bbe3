"""The words and numbers of tables, plots and quoted measurements, in the reader's language.

    label("copy", "zh")                    -> "拷贝带宽（同一次运行）"   (from catalogue.toml)
    number(0.282843, ".6f", "vi")          -> "0,282843"
    number(131584, ".0f", "vi")            -> "131 584"            (a no-break space between thousands)
    number(131584, ".0f", "en")            -> "131,584"
    number(-1.98e-05, ".2e", "vi")         -> "−1,98 × 10⁻⁵"        (a minus sign, a power of ten)
    number(6.789, ".2f", "zh", times=True) -> "6.79 倍"         ("6,79 lần" in Vietnamese)
    Words("vi").percent(97.0, ".0f")       -> "97%"
    Words("zh").join(["1", "8", "64"])     -> "1、8 和 64"
    Words("vi").times_span(1.4, 2.7, ".1f") -> "từ 1,4 đến 2,7 lần"   ("1.4× to 2.7×" in English)
    Words("en").tally("vs_widths", {"faster": 13, "on_par": 3, "slower": 0})
                                           -> "faster at 13 and on par at 3 of the 16 widths"
    Words("en").tally("vs_widths", {"faster": 0, "on_par": 0, "slower": 16})
                                           -> "slower at all 16 widths"
    Words("en").portion("acc_result", 0, 72) -> "all 72 accuracy cases within tolerance"
    Words("vi").vector([0.5, -2], ".2f")   -> "[0,50; −2,00]"
    reader()                               -> Words(os.environ["NORMKERNELS_LANGUAGE"]), English when unset

The words live in catalogue.toml beside this file, as data: a [labels.<key>] section with the
text in each language. Numbers are formatted by one function for every language, so a table, a
plot and a sentence that quote the same measurement show it the same way. The style of each
language is the authoring guide's "Numbers" (docs/<lang>/authoring.md). Sizes that a reader passes
to code (a width N, a row count M, a shape 32768×4096) are not numbers in this sense: reports write
them as plain digits, as the listings and the launch tables do.

Code that prints for a reader (a notebook's cells, the helpers they call) takes its language from
the environment: reader() is the Words of NORMKERNELS_LANGUAGE, which scripts/notebooks.py sets for
the kernel that runs each language's notebook. Unset (or empty), it is English, so a terminal
printer (`python -m rmsnorm ...`) and a reader's own run of a notebook print English numbers; a
value that is not a language of the site is an error that names the variable.
"""

import os
import re
import tomllib
from functools import cache
from pathlib import Path

LANGUAGES = ("en", "zh", "vi")
CATALOGUE = Path(__file__).with_name("catalogue.toml")
LANGUAGE_VARIABLE = "NORMKERNELS_LANGUAGE"  # the reader's language, for code that prints (reader())

NBSP = "\u00a0"
# Numbers of four digits stay ungrouped, as SI style has it: 1384, but 12,345 (12 345 in Vietnamese,
# with a no-break space that keeps the number on one line). Vietnamese writes 12,5 for 12.5.
THOUSANDS = {"en": ",", "zh": ",", "vi": NBSP}
DECIMAL = {"en": ".", "zh": ".", "vi": ","}
GROUP_FROM_DIGITS = 5
MINUS = "\u2212"  # −, not the hyphen a Python format writes
TIMES = {"en": "×", "zh": " 倍", "vi": " lần"}  # Vietnamese says a multiple in words: gấp 6,79 lần
# a span of multiples: English marks each end (1.4× to 2.7×); Chinese and Vietnamese say the word once,
# after the span (1.4 到 2.7 倍, từ 1,4 đến 2,7 lần)
TIMES_ONCE_IN_SPAN = {"en": False, "zh": True, "vi": True}
PERCENT = {"en": "%", "zh": "%", "vi": "%"}  # 97%: no space in any of the three
# a parenthesis after a figure: Chinese sets it full-width, with no space ("4190（4100–4280）")
PARENTHESES = {"en": (" (", ")"), "zh": ("（", "）"), "vi": (" (", ")")}
SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")
_NUMBER = re.compile(r"^(?P<sign>[+-]?)(?P<int>\d+)(?:\.(?P<frac>\d+))?(?:e(?P<exp>[+-]\d+))?$")


@cache
def catalogue():
    with CATALOGUE.open("rb") as file:
        return tomllib.load(file)


def label(key, language):
    """The text of a table or plot word in one language; an unknown key or language is an error."""
    entry = catalogue()["labels"].get(key)
    if entry is None:
        raise KeyError(f"'{key}' is not in {CATALOGUE.name}: add a [labels.{key}] section")
    if language not in entry:
        raise KeyError(f"[labels.{key}] in {CATALOGUE.name} has no '{language}' text")
    return entry[language]


def _grouped(digits, separator):
    if len(digits) < GROUP_FROM_DIGITS:
        return digits
    groups = [digits[max(end - 3, 0):end] for end in range(len(digits), 0, -3)]
    return separator.join(reversed(groups))


def number(value, spec, language, times=False):
    """value formatted with a Python format spec (".2f", "+.1f", ".3g", ".2e", ...) in the language's style.

    times=True writes a multiple: 6.79× in English, 6.79 倍 in Chinese, 6,79 lần in Vietnamese. An exponent
    is written as a power of ten (1.98 × 10⁻⁵); what is not a number (nan, inf) is left as Python
    writes it, for tests/test_wording.py to find on a page.
    """
    if language not in LANGUAGES:
        raise ValueError(f"unknown language '{language}'; the site has {LANGUAGES}")
    text = format(value, spec)
    parts = _NUMBER.match(text)
    if parts:
        sign = MINUS if parts["sign"] == "-" else parts["sign"]
        fraction = DECIMAL[language] + parts["frac"] if parts["frac"] is not None else ""
        text = sign + _grouped(parts["int"], THOUSANDS[language]) + fraction
        if parts["exp"] and int(parts["exp"]):
            text += f"{NBSP}×{NBSP}10" + str(int(parts["exp"])).translate(SUPERSCRIPT)
    return text + TIMES[language] if times else text


class Words:
    """One language's words and numbers, handed to a report's render functions as t.

    t("key") is the label; t.number(value, spec), t.times(value, spec) and t.percent(value, spec)
    format numbers, t.times_span(low, high, spec) a span of multiples, t.percent_sign follows a
    number already formatted, t.join(items) writes a list as a sentence says it, t.vector(values,
    spec) a list of numbers as code prints one, and t.date(stamp) a measurement's date.
    """

    def __init__(self, language):
        if language not in LANGUAGES:
            raise ValueError(f"unknown language '{language}'; the site has {LANGUAGES}")
        self.language = language
        self.percent_sign = PERCENT[language]

    def __call__(self, key):
        return label(key, self.language)

    def number(self, value, spec):
        return number(value, spec, self.language)

    def times(self, value, spec):
        return number(value, spec, self.language, times=True)

    def percent(self, value, spec):
        return number(value, spec, self.language) + self.percent_sign

    def date(self, stamp):
        return date(stamp, self.language)

    def parenthesized(self, text):
        """text in parentheses after what precedes it, as the language sets them."""
        opening, closing = PARENTHESES[self.language]
        return f"{opening}{text}{closing}"

    def beside(self, left, right):
        """Two phrases side by side, one space between ("fwd % copy", "kernel vs F.rms_norm"), except
        in Chinese, which puts none between two Chinese characters (「前向占拷贝带宽 %」, 「内核相对参考实现」)
        and keeps it where a Chinese character meets a Latin one (「前向 GPU µs」, 「内核相对 F.rms_norm」)."""
        hanzi = self.language == "zh" and _hanzi(left[-1:]) and _hanzi(right[:1])
        return left + ("" if hanzi else " ") + right

    def vector(self, values, spec):
        """A list of numbers as code prints it: "[0.85, 1.13]"; Vietnamese, whose decimal mark is a
        comma, separates the items with semicolons: "[0,85; 1,13]"."""
        separator = "; " if DECIMAL[self.language] == "," else ", "
        return "[" + separator.join(self.number(value, spec) for value in values) + "]"

    def tally(self, family, counts, with_total=True):
        """How many of a set of verdicts each came out, as the language says it, per case: one verdict
        for all ("slower at all 16 widths"), or the ones that occurred ("faster at 13 and on par at 3
        of the 16 widths") -- never "at 0 widths". counts is {verdict: count} in the order to say them;
        the catalogue's tally_<family>_all_<verdict>, tally_<family>_<verdict> (one part) and
        tally_<family>_mixed (its {parts} and {total}) hold the words, tally_separator and tally_and
        join the parts (Chinese joins clauses with a comma, not 和). Without the total, for a sentence
        that says it once (both_counted): tally_<family>_every_<verdict> ("met at all of them"), or
        the parts alone."""
        total = sum(counts.values())
        seen = [(verdict, count) for verdict, count in counts.items() if count]
        if not seen:
            raise ValueError(f"tally '{family}': no verdicts to count")
        if len(seen) == 1:
            return self(f"tally_{family}_{'all' if with_total else 'every'}_{seen[0][0]}").format(total=total)
        parts = self._clauses(self(f"tally_{family}_{verdict}").format(count=count) for verdict, count in seen)
        return self(f"tally_{family}_mixed").format(parts=parts, total=total) if with_total else parts

    def pair(self, family, items):
        """Verdicts at a few places as one clause, per case: the verdict once where all agree ("on par
        at both shapes: 97% against Liger's 99% at ..."), else each with its place. items are dicts of
        the fields the catalogue's words name, the verdict among them (in the page's words):
        pair_<family>_same ({verdict} and {facts}, each item by pair_<family>_fact) where all agree,
        else pair_<family>_each ({parts}, each item by pair_<family>_part)."""
        verdicts = {item["verdict"] for item in items}
        if len(verdicts) == 1 and len(items) > 1:  # one item is said with its place, never "at both"
            facts = self._clauses(self(f"pair_{family}_fact").format(**item) for item in items)
            return self(f"pair_{family}_same").format(verdict=verdicts.pop(), facts=facts)
        parts = self._clauses(self(f"pair_{family}_part").format(**item) for item in items)
        return self(f"pair_{family}_each").format(parts=parts)

    def _clauses(self, clauses):
        """Clauses joined as a sentence joins them: "a, b and c" (Chinese: a，b，c)."""
        clauses = list(clauses)
        return self("tally_separator").join(clauses[:-1]) + self("tally_and") + clauses[-1] if len(clauses) > 1 \
            else clauses[0]

    def both(self, family, first, second):
        """Two clauses that say the same thing said once, per case: both_<family>_same ({tally}) where
        they agree ("forward meets its target at all 12 widths, and so does its forward+backward"), else
        both_<family>_each ({first}, {second})."""
        if first == second:
            return self(f"both_{family}_same").format(tally=first)
        return self(f"both_{family}_each").format(first=first, second=second)

    def both_counted(self, family, first, second):
        """Two tallies over one set ({verdict: count} each), with the set's size said once, per case:
        both_<family>_same where they agree, else both_<family>_each_counted ({total}, {first},
        {second}: "Of the 12 shapes, the forward target is ..., the forward+backward one ..."); two
        sets of different sizes each say their own (both)."""
        if first == second or sum(first.values()) != sum(second.values()):
            return self.both(family, self.tally(family, first), self.tally(family, second))
        return self(f"both_{family}_each_counted").format(
            total=sum(first.values()), first=self.tally(family, first, with_total=False),
            second=self.tally(family, second, with_total=False))

    def portion(self, family, count, total):
        """How many of a set something holds, per case: <family>_none where none does ("all 72 accuracy
        cases within tolerance"), <family>_all where all do, else <family>_some with {count} and {total}
        ("3 of the 72 accuracy cases out of tolerance") -- never "0 of 72"."""
        case = "none" if not count else "all" if count == total else "some"
        return self(f"{family}_{case}").format(count=self.number(count, "d"), total=self.number(total, "d"))

    def span(self, low, high):
        """Two ends of a span of values already formatted, per case: the value once where they agree."""
        return low if low == high else self("span_range").format(low=low, high=high)

    def times_span(self, low, high, spec):
        """A span of multiples, the unit as the language says it: after each end in English ("1.4× to
        2.7×"), once after the span in Chinese and Vietnamese ("1.4 到 2.7 倍", "từ 1,4 đến 2,7 lần");
        one multiple where the ends agree."""
        if TIMES_ONCE_IN_SPAN[self.language]:
            return self.span(self.number(low, spec), self.number(high, spec)) + TIMES[self.language]
        return self.span(self.times(low, spec), self.times(high, spec))

    def join(self, items):
        """"1, 8, 64 and 512" ("1、8、64 和 512", "1, 8, 64 và 512"); the language's "none" for no items."""
        items = list(items)
        if not items:
            return self("none")
        if len(items) == 1:
            return items[0]
        return self("list_separator").join(items[:-1]) + self("list_and") + items[-1]


def _hanzi(character):
    return "\u4e00" <= character <= "\u9fff"


MONTHS_EN = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
             "October", "November", "December")
DATES = {"en": "{month_name} {day}, {year}", "zh": "{year}年{month}月{day}日", "vi": "{day} tháng {month} năm {year}"}


def date(stamp, language):
    """A measurement's "2026-12-01 22:22 UTC" as the language writes it, as the pages' own dates are:
    "December 1, 2026, 22:22 UTC", "2026年12月1日 22:22 UTC", "1 tháng 12 năm 2026, 22:22 UTC"."""
    day_part, _, time_part = stamp.partition(" ")
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", day_part):
        return stamp  # not a date (a stand-in such as "-"): as it is
    year, month, day = (int(v) for v in day_part.split("-"))
    text = DATES[language].format(year=year, month=month, day=day, month_name=MONTHS_EN[month - 1])
    if not time_part:
        return text
    return f"{text}{'' if language == 'zh' else ','} {time_part}"


ENGLISH = Words("en")


def reader():
    """The Words of the reader's language: NORMKERNELS_LANGUAGE (en, zh or vi), English when unset."""
    language = os.environ.get(LANGUAGE_VARIABLE) or "en"
    if language not in LANGUAGES:
        raise ValueError(f"{LANGUAGE_VARIABLE}={language!r} is not a language of the site: "
                         f"set it to one of {', '.join(LANGUAGES)}, or leave it unset for en")
    return Words(language)
