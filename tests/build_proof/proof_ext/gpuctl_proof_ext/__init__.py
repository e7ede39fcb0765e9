# The proof extension's package: torch first, as every torch extension (its
# _C links against torch's libraries), then the compiled module.
import torch  # noqa: F401

from gpuctl_proof_ext._C import kernels

__version__ = "1.0"
