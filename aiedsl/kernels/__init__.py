"""Kernels: the declaration (:mod:`.base`; its parameters in :mod:`.args`, the reference split for
the simulator in :mod:`.prepared`, cycles from a profile in :mod:`.profiled_cycles`, operations
per call in :mod:`.call_ops`), the shipped
library (:mod:`.library`, its matmuls in :mod:`.matmul` and :mod:`.cascade`, its convolutions in
:mod:`.conv`, its norms and activations in
:mod:`.activations`), each kernel's C++ file (:mod:`.text`, from :mod:`.source`), host builds of
that C++ (:mod:`.host`) for testing (:mod:`.host_check`, on the cases of :mod:`.cases`, run as
:mod:`.guarded` says) and profiling (:mod:`.profile`), and the library at several sizes
(:mod:`.samples`).

KERNELS_CPP
    The folder of the hand-written C++ kernels shipped with aiedsl (a ``pathlib.Path``):
    ``kernels_cpp/`` at the project root in a source checkout, ``aiedsl/kernels_cpp/`` in an
    installed wheel. A design's ``declare(source=...)`` finds a file there when it is not
    beside the design; ``aiedsl kernel test LIBFILE.cc`` tests one of them. (Said here because
    ``help()`` of the value itself shows ``Path``'s documentation.)
"""

from aiedsl.kernels.args import buffer, scalar
from aiedsl.kernels.base import Kernel, declare
from aiedsl.kernels.layout import block, block_dims, unblock, unblock_dims
from aiedsl.kernels.paths import KERNELS_CPP
from aiedsl.kernels.cascade import matmul_cascade
from aiedsl.kernels.conv import conv2d_1x1, conv2d_3x3
from aiedsl.kernels.matmul import matmul, matmul_narrow
from aiedsl.kernels.library import (
    add, exp_bf16, gelu, layer_norm, mul, passthrough, reduce_max, reduce_sum, relu, rgba2gray,
    rms_norm, scale, silu, softmax, sub, threshold, vector_scalar, zero,
)

__all__ = [
    "KERNELS_CPP", "Kernel", "add", "block", "block_dims", "buffer", "conv2d_1x1", "conv2d_3x3",
    "declare",
    "exp_bf16",
    "gelu", "layer_norm", "matmul", "matmul_cascade", "matmul_narrow", "mul", "passthrough",
    "reduce_max", "reduce_sum", "relu", "rgba2gray", "rms_norm", "scalar", "scale", "silu",
    "softmax", "sub", "threshold", "unblock", "unblock_dims", "vector_scalar", "zero",
]
