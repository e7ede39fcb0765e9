# A real CUDA extension for the ext step's test (tests/build_proof/
# real_torch_test.sh): one of flash-attn 2.8.3's kernel files (about 90 s of
# nvcc on two cores, and 4 GiB at its peak), compiled by
# PyTorch's BuildExtension with the real nvcc and flash-attn's own flags for
# sm_80, and a module that imports. `flash_attn_src` (made by the test) is
# the unpacked flash-attn sdist; torch_shim is not used: the kernels get
# PyTorch's own headers here.
import os

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

here = os.path.dirname(os.path.abspath(__file__))
flash = os.path.join(here, "flash_attn_src", "csrc")
kernels = ["flash_fwd_hdim32_fp16_sm80.cu"]

setup(
    name="gpuctl-proof-ext",
    version="1.0",
    packages=["gpuctl_proof_ext"],
    ext_modules=[
        CUDAExtension(
            "gpuctl_proof_ext._C",
            sources=["gpuctl_proof_ext/_C.cpp"] + [os.path.join(flash, "flash_attn", "src", k) for k in kernels],
            include_dirs=[os.path.join(flash, "flash_attn"), os.path.join(flash, "flash_attn", "src"),
                          os.path.join(flash, "cutlass", "include")],
            extra_compile_args={
                "cxx": ["-O2", "-std=c++17"],
                "nvcc": ["-O3", "-std=c++17", "-U__CUDA_NO_HALF_OPERATORS__", "-U__CUDA_NO_HALF_CONVERSIONS__",
                         "-U__CUDA_NO_HALF2_OPERATORS__", "-U__CUDA_NO_BFLOAT16_CONVERSIONS__",
                         "--expt-relaxed-constexpr", "--expt-extended-lambda", "--use_fast_math",
                         "-gencode", "arch=compute_80,code=sm_80",
                         "--threads", os.environ.get("NVCC_THREADS", "4")],
            },
        )
    ],
    cmdclass={"build_ext": BuildExtension},
)
