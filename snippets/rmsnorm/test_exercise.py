from normkit.words import Words
from rmsnorm import exercise


def test_wrong_kernel_is_caught_at_257():
    r = exercise.try_width(257)
    assert r["block"] == 512 and r["caught"]


def test_wrong_kernel_hides_at_256():
    r = exercise.try_width(256)
    assert r["block"] == 256 and not r["caught"] and r["max_abs_err"] == 0


def test_backward_needs_the_same_n():
    wide = exercise.backward_needs_n(257)
    assert wide["err_with_n"] < 1e-12 and wide["err_with_block"] > 1e-3
    pow2 = exercise.backward_needs_n(256)
    assert pow2["err_with_block"] < 1e-12


def test_exercise_report():
    text = exercise.format_exercise(exercise.run_exercise())
    assert "CAUGHT" in text and "hidden" in text


def test_exercise_report_in_the_readers_language():
    r = {"forward": [{"n": 257, "block": 512, "max_abs_err": 0.41, "caught": True},
                     {"n": 256, "block": 256, "max_abs_err": 0.0, "caught": False}],
         "backward": [{"n": 257, "block": 512, "err_with_n": 1.1e-16, "err_with_block": 0.32}]}
    text = exercise.format_exercise(r, Words("vi"))
    assert "BẮT ĐƯỢC LỖI" in text and "lọt lưới" in text
    assert "max |err| = 4,100\u00a0×\u00a010⁻¹" in text and "1,1\u00a0×\u00a010⁻¹⁶" in text
    assert "N=257  BLOCK=512" in text
