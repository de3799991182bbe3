"""Where a row's shares and tiles start (normkit/tiles.py)."""

import normkit  # noqa: F401  (first: picks the interpreter when there is no GPU)

import pytest

from normkit.tiles import SHARE_COLUMNS, share_width, staged_config


@pytest.mark.parametrize("element_size", [2, 4])
def test_shares_of_aligned_rows_start_aligned(element_size):
    # a row that starts on 16 bytes (N a multiple of 8 bf16 or 4 fp32 columns) has its
    # second share on 16 bytes too (16136 / 2 = 8068 columns would be 8 bytes off); a
    # row of fewer than 2 * SHARE_COLUMNS columns leaves the second share empty
    for n in range(16 // element_size, 16385, 16 // element_size):
        width = share_width(n, 2)
        assert width * element_size % 16 == 0 and n - width <= width, n


def test_tables_widths_keep_their_halves():
    # the tuned widths (multiples of 256) split exactly in two, as before shares were aligned
    for n in range(256, 16385, 256):
        assert share_width(n, 2) == n // 2 and share_width(n, 1) == n


@pytest.mark.parametrize("n", [1, 257, 1000, 8200, 16136])
@pytest.mark.parametrize("tiles", [1, 2])
def test_a_share_fits_its_tiles(n, tiles):
    _, tile, rows, warps, _, split, _, rest, _ = staged_config(n, 1, 8, 1, 2, 3, tiles, False)
    assert tile + rest >= share_width(n, split) and share_width(n, split) % SHARE_COLUMNS.value == 0


@pytest.mark.parametrize("split", [0, 3, 4])
def test_no_share_left_out(split):
    # the kernels add one other share's row sums: three shares would drop one silently
    with pytest.raises(ValueError, match=f"1 or 2 shares, not {split}"):
        staged_config(20480, 1, 8, 1, split, 2, 1, False)
