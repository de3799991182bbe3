"""Which rows the forwards read from aligned windows, and with what (normkit/aligned.py). The
windows themselves are tested through the kernels: layernorm/ and rmsnorm/test_fast.py (values),
faster/test_layouts.py (16-byte accesses, compiled for sm_90)."""

import normkit  # noqa: F401  (first: picks the interpreter when there is no GPU)

import pytest
import torch

from normkit import aligned


@pytest.mark.parametrize("n, element_size, start", [(4096, 2, 16), (4097, 2, 2), (4098, 2, 4), (4100, 2, 8),
                                                   (4104, 2, 16), (4097, 4, 4), (4098, 4, 8)])
def test_row_alignment(n, element_size, start):
    assert aligned.row_alignment(n, element_size) == start


def test_a_window_holds_the_row_from_any_offset():
    # a row starts up to V - 1 lanes into its window: 4097 bf16 columns need 4104 lanes
    assert aligned.window(4097, 2) == 8192 and aligned.window(8185, 2) == 8192
    assert aligned.window(8186, 2) == 16384 and aligned.window(8189, 4) == 8192 and aligned.window(8190, 4) == 16384


def test_window_config_keeps_the_entry_where_it_can():
    row, chunked = ("row", 8192, 2, 4), ("chunked", 1024, 1, 8, 1)
    assert aligned.window_config(row, 4104, 2, 16384) == row  # rows on 16 bytes: as it is
    assert aligned.window_config(row, 4098, 2, 16384) == row  # two elements an access: as it is
    w = aligned.WINDOW_WARPS
    assert aligned.window_config(row, 4097, 2, 16384) == ("aligned", 8192, 2, w, row)  # the entry's rows
    assert aligned.window_config(row, 4097, 4, 16384) == ("aligned", 8192, 2, w, row)  # fp32: one element too
    assert aligned.window_config(chunked, 8449, 2, 16384) == ("aligned", 16384, 1, w, chunked)
    assert aligned.window_config(chunked, 16383, 2, 16384) == chunked  # its window would be 32768 lanes
    assert aligned.window_config(("row", 2048, 2, 4), 1025, 2, 16384) == ("row", 2048, 2, 4)  # WINDOW_MIN_COLS


def test_walk_config_takes_about_four_steps():
    row, chunked = ("row", 8192, 2, 4), ("chunked", 2048, 1, 8, 1)
    assert aligned.walk_config(row, 4104, 2) == row  # rows on 16 bytes: as it is
    assert aligned.walk_config(row, 4098, 2) == row  # two elements an access: as it is
    assert aligned.walk_config(row, 4097, 2) == ("aligned", 1024, 1, 4, row)
    assert aligned.walk_config(row, 2049, 2) == ("aligned", 1024, 1, 4, row)  # at least 1024 lanes
    assert aligned.walk_config(row, 2047, 2) == row  # WALK_MIN_COLS in 16 bits
    assert aligned.walk_config(row, 4097, 4) == row  # and in fp32
    assert aligned.walk_config(chunked, 8193, 4) == chunked  # fp32 rows are not walked (OFFSET_FP32)
    assert aligned.walk_config(chunked, 10241, 2) == ("aligned", 2048, 1, 8, chunked)  # 2560 -> 2048
    assert aligned.walk_config(chunked, 12289, 2) == ("aligned", 4096, 1, 8, chunked)  # 3072 -> 4096
    assert aligned.walk_config(chunked, 16383, 2) == ("aligned", 4096, 1, 8, chunked)
    assert aligned.walk_lanes(4097, 1024) == 5 * 1024  # four steps from lane V: V + 4096 lanes


def test_offset_config_walks_rows_off_16_bytes_in_short_chunks():
    offset16 = ("chunked", aligned.OFFSET_CHUNK, 1, aligned.OFFSET_WARPS)
    offset = {2: offset16}
    chunked, wide_row, row = ("chunked", 4096, 1, 16), ("row", 16384, 1, 8), ("row", 8192, 2, 8)
    assert aligned.offset_config(chunked, 8192, 2, offset) == chunked  # rows on 16 bytes: as it is
    assert aligned.offset_config(chunked, 8200, 2, offset) == chunked
    for n in (8194, 8196, 8193):  # rows on 4, 8 and 2 bytes
        assert aligned.offset_config(chunked, n, 2, offset) == offset16
    assert aligned.offset_config(wide_row, 12290, 2, offset) == offset16  # above OFFSET_ROW_MAX_LANES
    assert aligned.offset_config(row, 4098, 2, offset) == row  # a row that fits in registers
    walk = aligned.walk_config(chunked, 12289, 2)
    assert aligned.offset_config(walk, 12289, 2, offset) == walk  # the aligned designs: as they are
    assert aligned.offset_config(chunked, 4098, 4, offset) == chunked  # no fp32 rule: the ladder's
    with_fp32 = offset | {4: aligned.OFFSET_FP32}
    for n in (4097, 4098, 8193, 12290):  # fp32 rows on 4 and 8 bytes
        assert aligned.offset_config(chunked, n, 4, with_fp32) == aligned.OFFSET_FP32
    assert aligned.offset_config(chunked, 4100, 4, with_fp32) == chunked  # on 16 bytes
    assert aligned.offset_config(("row", 4096, 2, 16), 4095, 4, with_fp32) == ("row", 4096, 2, 16)


@pytest.mark.parametrize("n, v, lanes, edges", [
    (4097, 8, 4096, 16),    # 4104 lanes from the window's start: 4096 and the rest in the edges
    (4098, 8, 8192, 16), (8193, 8, 8192, 16), (3001, 8, 4096, 16), (257, 8, 256, 16),
    (4097, 4, 4096, 8),     # fp32: four lanes to 16 bytes
    (1, 8, 8, 16)])
def test_classes_hold_a_window_as_a_power_of_two_and_edges(n, v, lanes, edges):
    assert aligned.class_lanes(n, v) == lanes and aligned.class_edges(n, lanes, v) == edges


@pytest.mark.parametrize("n, element_size, classes", [
    (8193, 2, ("classes", 8192, 1, 8, 2, True, 8, 16, ("row", 16384, 1, 32, 1, False))),
    (4097, 2, ("classes", 4096, 1, 4, 4, True, 8, 16, ("row", 8192, 1, 16, 1, True))),
    (3001, 2, ("classes", 4096, 1, 4, 4, True, 8, 16, ("row", 4096, 1, 8, 2, True))),
    (1025, 2, ("classes", 1024, 1, 1, 16, True, 8, 16, ("row", 2048, 1, 4, 4, True))),
    # fp32: rows on 4 bytes, from 4096 lanes, without prefetching
    (3001, 4, ("classes", 4096, 1, 4, 4, False, 4, 8, ("row", 4096, 1, 8, 2, True))),
    (8193, 4, ("classes", 8192, 1, 8, 2, False, 4, 8, ("row", 16384, 1, 32, 1, False))),
    # 16384 lanes: at most 8 warps, no prefetch
    (12289, 2, ("classes", 16384, 1, 8, 2, False, 8, 16, ("row", 16384, 1, 32, 1, False))),
    # odd rows where the classes measured behind, or were not tried: the row rule
    (20001, 2, ("row", 32768, 1, 32, 1, False)), (511, 2, ("row", 512, 1, 1, 16, True)),
    (2049, 4, ("row", 4096, 1, 8, 2, True)), (4097, 8, ("row", 8192, 1, 16, 1, True)),
    (4098, 2, None), (4100, 2, None),  # rows on 4 and 8 bytes in 16 bits: as tuned
    (4096, 2, None), (4100, 4, None)])  # rows on 16 bytes: as tuned
def test_rows_off_16_bytes_take_the_classes_backward(n, element_size, classes):
    table = ("staged", 1)
    assert aligned.classes_config(table, n, element_size) == (classes or table)
