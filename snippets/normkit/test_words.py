"""The catalogue of table and plot words, and the one number format per language."""

import pytest

from normkit.tables import localized_name, write_localized
from normkit.words import LANGUAGES, Words, catalogue, label, number

NBSP = "\u00a0"


def test_every_word_is_in_every_language():
    for key, entry in catalogue()["labels"].items():
        assert sorted(entry) == sorted(LANGUAGES), f"[labels.{key}] has {sorted(entry)}, needs {sorted(LANGUAGES)}"
        assert all(text.strip() for text in entry.values()), f"[labels.{key}] has an empty text"


def test_label_reads_the_catalogue_and_names_what_is_missing():
    assert label("copy", "zh") == "拷贝带宽（同一次运行）"
    with pytest.raises(KeyError, match="no_such_word"):
        label("no_such_word", "en")
    with pytest.raises(KeyError, match="'fr'"):
        label("copy", "fr")


@pytest.mark.parametrize("value, spec, expected", [
    (6.789, ".2f", "6.79"), (1384, ".0f", "1384"), (131584, ".0f", "131584"), (-0.05, "+.1f", "-0.1"),
    (1.98e-05, ".2e", "1.98e-05"), (0.001, "g", "0.001"),
])
def test_english_is_python_format_unchanged(value, spec, expected):
    assert number(value, spec, "en") == expected == format(value, spec)


@pytest.mark.parametrize("value, spec, expected", [
    (12.5, ".1f", "12,5"), (0.282843, ".6f", "0,282843"), (131584, ".0f", f"131{NBSP}584"),
    (1384, ".0f", "1384"),  # four digits stay ungrouped
    (1234567.25, ".2f", f"1{NBSP}234{NBSP}567,25"), (-20.04, "+.1f", "-20,0"), (1.98e-05, ".2e", "1,98e-05"),
    (0.001, "g", "0,001"),
])
def test_vietnamese_writes_a_decimal_comma_and_spaces_between_thousands(value, spec, expected):
    assert number(value, spec, "vi") == expected


def test_multiples_per_language():
    assert number(6.789, ".2f", "en", times=True) == "6.79×"
    assert number(6.789, ".2f", "zh", times=True) == "6.79 倍"
    assert number(6.789, ".2f", "vi", times=True) == "6,79×"
    assert Words("zh").times(0.5, ".2f") == "0.50 倍"


def test_unknown_language_is_refused():
    with pytest.raises(ValueError, match="'de'"):
        number(1.0, ".1f", "de")


def test_write_localized_writes_one_file_per_language(tmp_path):
    write_localized(tmp_path, "t.md", lambda t: f"{t('copy')}: {t.number(4262.25, '.1f')}\n")
    texts = {lang: (tmp_path / localized_name("t.md", lang)).read_text(encoding="utf-8") for lang in LANGUAGES}
    assert texts == {"en": "copy bandwidth (same run): 4262.2\n", "zh": "拷贝带宽（同一次运行）: 4262.2\n",
                     "vi": "băng thông sao chép (cùng lần chạy): 4262,2\n"}
