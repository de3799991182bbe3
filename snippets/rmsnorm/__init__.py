"""Chapter 2: RMSNorm — a Triton forward, its backward and a partial reduction for dgamma."""

import normkit  # noqa: F401  (must come before any kernel is defined)

from rmsnorm.ops import (
    CALLS,
    MAX_N,
    SCRATCH_LIMIT_BYTES,
    ContractError,
    RMSNormFunction,
    check_contract,
    reset_calls,
    rms_norm,
    rmsnorm_dx,
    rmsnorm_forward,
    reduce_gamma_grad,
    scratch_bytes,
)
from rmsnorm.reference import manual_backward, rmsnorm_reference

__all__ = [
    "CALLS",
    "MAX_N",
    "SCRATCH_LIMIT_BYTES",
    "ContractError",
    "RMSNormFunction",
    "check_contract",
    "manual_backward",
    "reduce_gamma_grad",
    "reset_calls",
    "rms_norm",
    "rmsnorm_dx",
    "rmsnorm_forward",
    "rmsnorm_reference",
    "scratch_bytes",
]
