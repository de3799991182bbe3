"""Launch helpers written once for every chapter: input checks, block sizes and warps."""

import triton


class ContractError(ValueError):
    """An input the kernels do not accept. Raised before anything is allocated or launched."""


def require(condition, message):
    if not condition:
        raise ContractError(message)


def require_same_device(reference_name, reference, **others):
    for name, tensor in others.items():
        require(
            tensor.device == reference.device,
            f"{name} is on {tensor.device} but {reference_name} is on {reference.device}",
        )


def require_kernel_device(name, tensor):
    """Triton kernels run on CUDA tensors, or on CPU tensors under the interpreter."""
    from normkit.runtime import DEVICE

    require(
        tensor.device.type == DEVICE.type,
        f"{name} is on {tensor.device}, but the kernels here run on {DEVICE.type}",
    )


def fused_block_size(n_cols, element_size, max_bytes=65536):
    """Smallest power of two that holds a whole row, refusing rows wider than max_bytes."""
    limit = max_bytes // element_size
    require(
        n_cols <= limit,
        f"rows of N={n_cols} elements are wider than the fused limit of {limit} "
        f"elements ({max_bytes} bytes at {element_size} bytes each)",
    )
    return triton.next_power_of_2(n_cols)


def warps_for_block(block_size):
    """One warp per 256 elements of a row, between 1 and 8 warps."""
    return min(max(block_size // 256, 1), 8)


def rows_of(x):
    """View x as a contiguous (M, N) matrix of rows over its last dimension."""
    n_cols = x.shape[-1]
    return x.reshape(-1, n_cols).contiguous(), n_cols
