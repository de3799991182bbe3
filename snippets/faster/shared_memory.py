"""What a staged backward program keeps in shared memory: the rule the tuner fits its candidates
by (faster.tune) and the pages quote (faster.quotes); faster/test_tune.py checks it against what
the compiler allocates."""

SHARED_BYTES = 227 * 1024  # an H200 SM's shared memory, all of it for one program at most


def staged_shared(rows, row_cols, stages, element_size):
    """Shared memory of a staged program: Triton's pipeliner keeps STAGES - 1 steps of
    x and dy there (the step being computed is in registers): the compiled kernels of
    tune-18 use 16,440 bytes at N = 1024, fp32, 3 stages, and 24,636 with 4."""
    return (stages - 1) * rows * row_cols * 2 * element_size
