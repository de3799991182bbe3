"""The forward's ladder by width (faster/ladder.py): fitted to a tuning run's forward timings."""

from faster import ladder

# a run's forward timings at three widths: the row design with 8 warps is best narrow, the
# chunked one wide; neither is timed at every width
RUN = {"tuned": [
    {"op": "rmsnorm", "N": n, "fwd": [{"config": c, "pct": p} for c, p in cands]}
    for n, cands in ((1024, [(["row", 1024, 1, 8], 99.0), (["row", 1024, 1, 4], 97.0)]),
                     (2048, [(["row", 2048, 1, 8], 98.0), (["row", 2048, 1, 4], 96.0),
                             (["chunked", 1024, 1, 8], 90.0)]),
                     (4096, [(["row", 4096, 1, 4], 90.0), (["chunked", 1024, 1, 8], 97.0)]))]}


def test_a_row_entry_serves_every_width_relative_to_n():
    pct = ladder.timings(RUN, "rmsnorm")
    assert pct[1024] == {("row", 1, 8): 99.0, ("row", 1, 4): 97.0}


def test_the_ladder_loses_the_least_it_can():
    pct = ladder.timings(RUN, "rmsnorm")
    one = ladder.ladder(pct, 1)  # the only entry timed at all three widths
    assert one == [(1024, 4096, ("row", 1, 4))] and ladder.losses(pct, one) == [2.0, 2.0, 7.0]
    two = ladder.ladder(pct, 2)
    assert two == [(1024, 2048, ("row", 1, 8)), (4096, 4096, ("chunked", 1024, 1, 8))]
    assert ladder.losses(pct, two) == [0.0, 0.0, 0.0]
