"""The words and numbers of tables, plots and quoted measurements, in the reader's language.

    label("copy", "zh")                 -> "拷贝带宽（同一次运行）"   (from catalogue.toml)
    number(0.282843, ".6f", "vi")       -> "0,282843"
    number(131584, ".0f", "vi")         -> "131 584"                (a no-break space between thousands)
    number(6.789, ".2f", "zh", times=True) -> "6.79 倍"

The words live in catalogue.toml beside this file, as data: a [labels.<key>] section with the
text in each language. Numbers are formatted by one function for every language, so a table, a
plot and a sentence that quote the same measurement show it the same way.
"""

import re
import tomllib
from functools import cache
from pathlib import Path

LANGUAGES = ("en", "zh", "vi")
CATALOGUE = Path(__file__).with_name("catalogue.toml")

# Vietnamese writes 12,5 and 131 584 (as the RMSNorm source document does). Numbers of four digits
# stay ungrouped, as SI style has it: 1384, but 12 345. A no-break space keeps a number on one line.
THOUSANDS = {"vi": "\u00a0"}
DECIMAL = {"vi": ","}
GROUP_FROM_DIGITS = 5
TIMES = {"en": "×", "zh": " 倍", "vi": "×"}
_DIGITS = re.compile(r"^(?P<sign>[+-]?)(?P<int>\d+)(?:\.(?P<frac>\d+))?(?P<rest>.*)$")


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


def number(value, spec, language, times=False):
    """value formatted with a Python format spec (".2f", "+.1f", ".3g", ...) in the language's style.

    times=True writes a multiple: 6.79× in English and Vietnamese, 6.79 倍 in Chinese.
    """
    if language not in LANGUAGES:
        raise ValueError(f"unknown language '{language}'; the site has {LANGUAGES}")
    text = format(value, spec)
    parts = _DIGITS.match(text)
    if parts and language in DECIMAL:
        digits = parts["int"]
        if len(digits) >= GROUP_FROM_DIGITS:
            groups = [digits[max(end - 3, 0):end] for end in range(len(digits), 0, -3)]
            digits = THOUSANDS[language].join(reversed(groups))
        fraction = DECIMAL[language] + parts["frac"] if parts["frac"] is not None else ""
        text = f"{parts['sign']}{digits}{fraction}{parts['rest'].replace('.', DECIMAL[language])}"
    return text + TIMES[language] if times else text


class Words:
    """One language's words and numbers, handed to a report's render functions as t.

    t("key") is the label; t.number(value, spec) and t.times(value, spec) format numbers.
    """

    def __init__(self, language):
        if language not in LANGUAGES:
            raise ValueError(f"unknown language '{language}'; the site has {LANGUAGES}")
        self.language = language

    def __call__(self, key):
        return label(key, self.language)

    def number(self, value, spec):
        return number(value, spec, self.language)

    def times(self, value, spec):
        return number(value, spec, self.language, times=True)


ENGLISH = Words("en")
