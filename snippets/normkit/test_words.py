"""The catalogue of table and plot words, and the one number format per language."""

import re

import pytest

from normkit.tables import localized_name, write_localized
from normkit.words import LANGUAGE_VARIABLE, LANGUAGES, Words, catalogue, label, number, reader

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
    (6.789, ".2f", "6.79"), (1384, ".0f", "1384"), (0.001, "g", "0.001"), (4262.25, ".1f", "4262.2"),
])
def test_english_short_numbers_are_python_format_unchanged(value, spec, expected):
    assert number(value, spec, "en") == expected == format(value, spec)


@pytest.mark.parametrize("language, grouped", [("en", "131,584"), ("zh", "131,584"), ("vi", f"131{NBSP}584")])
def test_five_digits_and_more_are_grouped_in_threes_four_are_not(language, grouped):
    assert number(131584, ".0f", language) == grouped
    assert number(1384, "d", language) == "1384"


@pytest.mark.parametrize("value, spec, expected", [
    (12.5, ".1f", "12,5"), (0.282843, ".6f", "0,282843"), (131584, ".0f", f"131{NBSP}584"),
    (1384, ".0f", "1384"),  # four digits stay ungrouped
    (1234567.25, ".2f", f"1{NBSP}234{NBSP}567,25"), (0.001, "g", "0,001"),
])
def test_vietnamese_writes_a_decimal_comma_and_spaces_between_thousands(value, spec, expected):
    assert number(value, spec, "vi") == expected


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_negative_number_has_a_minus_sign_not_a_hyphen(language):
    assert number(-20.04, "+.1f", language) == "\u221220" + ("," if language == "vi" else ".") + "0"
    assert number(0.05, "+.1f", language).startswith("+")


@pytest.mark.parametrize("language, expected", [
    ("en", f"1.98{NBSP}×{NBSP}10⁻⁵"), ("zh", f"1.98{NBSP}×{NBSP}10⁻⁵"), ("vi", f"1,98{NBSP}×{NBSP}10⁻⁵"),
])
def test_an_exponent_is_written_as_a_power_of_ten(language, expected):
    assert number(1.98e-05, ".2e", language) == expected
    assert number(1e-05, "g", language) == f"1{NBSP}×{NBSP}10⁻⁵"
    assert number(2.5, ".1e", language) == ("2,5" if language == "vi" else "2.5")  # 10⁰ is not written


def test_multiples_per_language():
    assert number(6.789, ".2f", "en", times=True) == "6.79×"
    assert number(6.789, ".2f", "zh", times=True) == "6.79 倍"
    assert number(6.789, ".2f", "vi", times=True) == "6,79 lần"  # gấp 6,79 lần: Vietnamese says it in words
    assert Words("zh").times(0.5, ".2f") == "0.50 倍"


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_percentage_has_no_space_before_its_sign(language):
    assert Words(language).percent(97.25, ".1f") == ("97,2%" if language == "vi" else "97.2%")


@pytest.mark.parametrize("language, items, expected", [
    ("en", ["1", "8", "64"], "1, 8 and 64"), ("zh", ["1", "8", "64"], "1、8 和 64"), ("vi", ["1", "8", "64"], "1, 8 và 64"),
    ("en", ["2048"], "2048"), ("zh", [], "无"), ("vi", [], "không có"),
])
def test_a_list_reads_as_a_sentence_says_it(language, items, expected):
    assert Words(language).join(items) == expected


def test_unknown_language_is_refused():
    with pytest.raises(ValueError, match="'de'"):
        number(1.0, ".1f", "de")


def test_write_localized_writes_one_file_per_language(tmp_path):
    write_localized(tmp_path, "t.md", lambda t: f"{t('copy')}: {t.number(4262.25, '.1f')}\n")
    texts = {lang: (tmp_path / localized_name("t.md", lang)).read_text(encoding="utf-8") for lang in LANGUAGES}
    assert texts == {"en": "copy bandwidth (same run): 4262.2\n", "zh": "拷贝带宽（同一次运行）: 4262.2\n",
                     "vi": "băng thông sao chép (cùng lần chạy): 4262,2\n"}


def test_a_measurement_date_in_each_language():
    stamp = "2026-12-01 22:22 UTC"
    assert Words("en").date(stamp) == "December 1, 2026, 22:22 UTC"
    assert Words("zh").date(stamp) == "2026年12月1日 22:22 UTC"
    assert Words("vi").date(stamp) == "1 tháng 12 năm 2026, 22:22 UTC"
    assert Words("vi").date("2026-03-09") == "9 tháng 3 năm 2026"
    assert Words("zh").date("-") == "-"  # not a date: as it is


@pytest.mark.parametrize("language, expected", [("en", "[0.85, −2.00]"), ("zh", "[0.85, −2.00]"), ("vi", "[0,85; −2,00]")])
def test_a_vector_of_numbers_keeps_its_items_apart_in_every_language(language, expected):
    assert Words(language).vector([0.849, -2], ".2f") == expected


@pytest.mark.parametrize("value, language", [(None, "en"), ("", "en"), ("en", "en"), ("zh", "zh"), ("vi", "vi")])
def test_the_reader_language_comes_from_the_environment_english_when_unset(monkeypatch, value, language):
    if value is None:
        monkeypatch.delenv(LANGUAGE_VARIABLE, raising=False)
    else:
        monkeypatch.setenv(LANGUAGE_VARIABLE, value)
    assert reader().language == language


def test_an_unknown_reader_language_names_the_variable_and_the_languages(monkeypatch):
    monkeypatch.setenv(LANGUAGE_VARIABLE, "fr")
    with pytest.raises(ValueError, match=r"NORMKERNELS_LANGUAGE='fr'.*en, zh, vi"):
        reader()


@pytest.mark.parametrize("counts, expected", [
    ({"faster": 0, "on_par": 0, "slower": 16}, ("slower at all 16 widths", "在全部 16 个宽度上都更慢",
                                                "chậm hơn ở cả 16 độ rộng")),
    ({"faster": 13, "on_par": 3, "slower": 0}, ("faster at 13 and on par at 3 of the 16 widths",
                                                "16 个宽度中有 13 个更快，3 个持平",
                                                "nhanh hơn ở 13 độ rộng và ngang nhau ở 3 độ rộng (trong tổng số 16)")),
    ({"faster": 10, "on_par": 3, "slower": 3}, ("faster at 10, on par at 3 and slower at 3 of the 16 widths",
                                                "16 个宽度中有 10 个更快，3 个持平，3 个更慢",
                                                "nhanh hơn ở 10 độ rộng, ngang nhau ở 3 độ rộng và chậm hơn ở 3 độ rộng "
                                                "(trong tổng số 16)")),
])
def test_a_tally_says_each_case_as_written_never_a_count_of_zero(counts, expected):
    assert tuple(Words(lang).tally("vs_widths", counts) for lang in LANGUAGES) == expected


def test_every_tally_and_pair_has_its_words_in_every_language():
    families = {"vs_widths": ("faster", "on_par", "slower"), "targets": ("met", "missed", "within"),
                "sweep": ("met", "missed", "within"), "host": ("met", "within", "missed")}
    for language in LANGUAGES:
        t = Words(language)
        for family, verdicts in families.items():
            for verdict in verdicts:
                assert "{total}" in t(f"tally_{family}_all_{verdict}") and "{count}" in t(f"tally_{family}_{verdict}")
            assert "0" not in t.tally(family, dict(zip(verdicts, (2, 0, 1))))
        for family in ("best_other", "liger"):
            assert {"{verdict}", "{place}"} <= set(re.findall(r"\{\w+\}", t(f"pair_{family}_part")))
            assert "{verdict}" in t(f"pair_{family}_same") and "{place}" in t(f"pair_{family}_fact")


def test_a_pair_says_one_verdict_once_and_two_each_at_its_place():
    same = [{"verdict": "on par", "place": "32768×4096", "other": "Liger", "fast": "97%", "pct": "99%"},
            {"verdict": "on par", "place": "32768×8192", "other": "QuACK", "fast": "96%", "pct": "97%"}]
    assert Words("en").pair("best_other", same) == ("The forward alone is on par at both shapes: 97% against "
                                                    "Liger's 99% at 32768×4096 and 96% against QuACK's 97% at 32768×8192.")
    zh = [dict(item, verdict="持平") for item in same]
    assert Words("zh").pair("best_other", zh) == ("单看前向，和其余实现里最快的那一个相比，在两个形状上都持平："
                                                  "32768×4096 下 97% 对 Liger 的 99%，32768×8192 下 96% 对 QuACK 的 97%。")
    assert Words("en").pair("best_other", same[:1]) == ("The forward alone is on par at 32768×4096 "
                                                        "(97% against Liger's 99%).")  # one place: never "both"
    mixed = [{"verdict": "nhanh hơn", "place": "2048"}, {"verdict": "ngang nhau", "place": "4096"}]
    assert Words("vi").pair("liger", mixed) == ("so với RMSNorm của Liger-Kernel thì nhanh hơn ở kích thước "
                                                "ẩn 2048 và ngang nhau ở kích thước ẩn 4096")


def test_a_span_of_equal_ends_is_one_value():
    assert Words("en").span("2×", "2×") == "2×"
    assert Words("vi").span("1,8 lần", "2,2 lần") == "từ 1,8 lần đến 2,2 lần"


def test_a_span_of_multiples_says_the_unit_as_the_language_does():
    # English marks each end; Chinese and Vietnamese say the word once, after the span
    assert tuple(Words(lang).times_span(1.44, 2.71, ".1f") for lang in LANGUAGES) == (
        "1.4× to 2.7×", "1.4 到 2.7 倍", "từ 1,4 đến 2,7 lần")
    assert tuple(Words(lang).times_span(1.96, 2.04, ".1f") for lang in LANGUAGES) == ("2.0×", "2.0 倍", "2,0 lần")


@pytest.mark.parametrize("count, expected", [
    (0, ("all 72 accuracy cases within tolerance", "72 个精度用例全部在容差之内",
         "cả 72 trường hợp kiểm tra độ chính xác đều nằm trong dung sai")),
    (3, ("3 of the 72 accuracy cases out of tolerance", "72 个精度用例中有 3 个超出容差",
         "3 trong 72 trường hợp kiểm tra độ chính xác nằm ngoài dung sai")),
    (72, ("all 72 accuracy cases out of tolerance", "72 个精度用例全部超出容差",
          "cả 72 trường hợp kiểm tra độ chính xác đều nằm ngoài dung sai")),
])
def test_a_portion_says_none_some_or_all_never_a_count_of_zero(count, expected):
    assert tuple(Words(lang).portion("acc_result", count, 72) for lang in LANGUAGES) == expected


def test_every_portion_has_its_words_in_every_language():
    for language in LANGUAGES:
        for family in ("acc_result", "acc_outside"):
            assert "{total}" in Words(language)(f"{family}_none") and "{total}" in Words(language)(f"{family}_all")
            assert {"{count}", "{total}"} <= set(re.findall(r"\{\w+\}", Words(language)(f"{family}_some")))
            assert "0" not in Words(language).portion(family, 0, 12)


def test_two_tallies_that_agree_are_said_once():
    same = "meets its target at all 12 widths"
    assert Words("en").both("sweep", same, same) == "forward meets its target at all 12 widths, and so does its forward+backward"
    assert Words("en").both("host", "missed at all 12 shapes", "met at all 12 shapes") == (
        "The forward target is missed at all 12 shapes, the forward+backward one met at all 12 shapes")
    zh = Words("zh").tally("host", {"missed": 12})
    assert Words("zh").both("host", zh, zh) == "前向和前向+反向两个目标在全部 12 个形状上都未达到"


def test_two_tallies_over_one_set_say_its_size_once():
    mixed, every = {"met": 0, "within": 7, "missed": 5}, {"met": 12, "within": 0, "missed": 0}
    assert Words("en").both_counted("host", mixed, every) == (
        "Of the 12 shapes, the forward target is inside the range at 7 and missed at 5, "
        "the forward+backward one met at all of them")
    assert Words("zh").both_counted("host", mixed, every) == (
        "12 个形状中，前向目标：7 个无法判定，5 个未达到；前向+反向目标：全部达到")
    assert Words("vi").both_counted("host", every, mixed) == (
        "Trong 12 hình dạng, mục tiêu lượt xuôi đạt ở tất cả, còn mục tiêu lượt xuôi + lượt ngược "
        "nằm trong khoảng đo ở 7 và không đạt ở 5")
    # the same counts: said once; sets of different sizes: each with its own
    assert Words("en").both_counted("host", every, every) == (
        "Both targets, forward and forward+backward, are met at all 12 shapes")
    assert Words("en").both_counted("host", every, {"met": 0, "within": 0, "missed": 3}) == (
        "The forward target is met at all 12 shapes, the forward+backward one missed at all 3 shapes")


@pytest.mark.parametrize("language, left, right, expected", [
    ("en", "fwd", "% copy", "fwd % copy"), ("vi", "kernel so với", "F.rms_norm", "kernel so với F.rms_norm"),
    ("zh", "前向", "占拷贝带宽 %", "前向占拷贝带宽 %"), ("zh", "前向", "GPU µs", "前向 GPU µs"),
    ("zh", "内核相对", "F.rms_norm", "内核相对 F.rms_norm")])
def test_phrases_side_by_side_are_spaced_except_between_two_chinese_characters(language, left, right, expected):
    assert Words(language).beside(left, right) == expected
