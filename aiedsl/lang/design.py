"""``@design``: trace a design function into the IR.

Example
-------
::

    @design(device="npu1_1col")
    def passthrough(inp: Tensor[4096, i32], out: Tensor[4096, i32]):
        ...
"""

from __future__ import annotations

import inspect
import sys
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from aiedsl.errors import DesignError, caller_loc, user_exception
from aiedsl.ir import Design, TensorType
from aiedsl.lang.builder import DesignBuilder
from aiedsl.lang.context import _DESIGN, active, load_context
from aiedsl.lang.tensor import HostTensorRef
from aiedsl.targets import DEVICES, get_target


@dataclass
class DesignHandle:
    """What ``@design`` returns: the traced IR plus the user's numpy reference.

    ``handle.ir`` is the :class:`~aiedsl.ir.Design`; ``@handle.reference`` sets the function that
    computes the expected outputs from the inputs (numpy arrays, in argument order).
    """

    ir: Design
    reference_fn: Callable[..., Any] | None = None
    kernels: dict[str, Any] = field(default_factory=dict)
    """The Python kernel objects by symbol (their numpy references run in the simulator)."""

    @property
    def name(self) -> str:
        """The design's name."""
        return self.ir.name

    @property
    def inputs(self) -> list[str]:
        """Tensors the runtime fills, in argument order."""
        filled = {t.tensor for t in self.ir.runtime if t.op == "fill"}
        return [t.name for t in self.ir.tensors if t.name in filled]

    @property
    def outputs(self) -> list[str]:
        """Tensors the runtime drains, in argument order."""
        drained = {t.tensor for t in self.ir.runtime if t.op == "drain"}
        return [t.name for t in self.ir.tensors if t.name in drained]

    def reference(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """Decorator: the design's numpy reference, ``fn(*inputs) -> output or tuple``."""
        self.reference_fn = fn
        return fn

    def expected(self, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Run the reference on ``inputs`` and name its results by output tensor."""
        if self.reference_fn is None:
            raise DesignError("reference", f"design '{self.name}' has no numpy reference",
                              loc=self.ir.loc, fix=f"decorate a function with "
                              f"@{self.name}.reference")
        try:
            result = self.reference_fn(*(inputs[n] for n in self.inputs))
        except Exception as e:
            raise user_exception(e, f"running the reference of '{self.name}'",
                                 self.ir.loc) from e
        results = result if isinstance(result, tuple) else (result,)
        if len(results) != len(self.outputs):
            raise DesignError(
                "reference", f"the reference of '{self.name}' returned {len(results)} "
                f"array(s) for {len(self.outputs)} output(s) {self.outputs}", loc=self.ir.loc,
                fix="return one array per drained tensor, in argument order")
        return dict(zip(self.outputs, (np.asarray(r) for r in results)))


def design(device: str = "npu1", *, name: str | None = None,
           reference: Callable[..., Any] | None = None) -> Callable[[Callable[..., Any]], DesignHandle]:
    """Declare a design for ``device``; the decorated function is traced at once.

    Its parameters are the host tensors, annotated ``Tensor[..., dtype]``, in the order the host
    passes them. ``--device`` on the command line overrides ``device``.
    """
    loc = caller_loc()
    # Names visible where @design is written, for string annotations of designs defined in a
    # function (module-level designs resolve through the function's globals).
    scope = dict(sys._getframe(1).f_locals)

    def decorate(fn: Callable[..., Any]) -> DesignHandle:
        ctx = load_context()
        dev = (ctx.device if ctx and ctx.device else None) or device
        if dev not in DEVICES:
            raise DesignError("device", f"unknown device {dev!r}", loc=loc, found=dev,
                              fix="use one of " + ", ".join(DEVICES))
        b = DesignBuilder(name or fn.__name__, get_target(dev), loc)
        tensors = []
        try:  # eval_str: designs written with `from __future__ import annotations`
            params = inspect.signature(fn, eval_str=True, locals=scope).parameters
        except NameError as e:
            raise DesignError(
                "design", f"a Tensor annotation of design '{fn.__name__}' names something "
                f"undefined at module level: {e}", loc=loc,
                fix="define the sizes at module level (or with define()) so the annotation "
                "can be evaluated") from None
        for i, (pname, p) in enumerate(params.items()):
            if not isinstance(p.annotation, TensorType):
                raise DesignError(
                    "design", f"argument '{pname}' of design '{fn.__name__}' has no Tensor "
                    "annotation", loc=loc, fix=f"annotate it, e.g. {pname}: Tensor[1024, i32]")
            tensors.append(HostTensorRef(pname, i, p.annotation, loc))
        b.tensors = tensors
        with active(_DESIGN, b):
            fn(*tensors)
        return DesignHandle(b.finalize(dict(ctx.used) if ctx else {}), reference,
                            dict(b.kernel_objs))

    return decorate
