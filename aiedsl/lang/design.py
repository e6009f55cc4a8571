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
from typing import Any, Callable, NoReturn

import numpy as np

from aiedsl.dtypes import numpy_kind
from aiedsl.errors import DesignError, counted
from aiedsl.flags import check_flag
from aiedsl.ir.design import Design
from aiedsl.ir.loc import Loc
from aiedsl.ir.types import TensorType
from aiedsl.lang.callables import check_callable, check_returning, check_traced
from aiedsl.lang.context import _DESIGN, active, design_module
from aiedsl.lang.load import load_context
from aiedsl.lang.names import check_tensor_name, decorated_name
from aiedsl.lang.reference_params import check_reference_names, check_unfilled_parameters
from aiedsl.lang.tensor import HostTensorRef
from aiedsl.lang.to_ir import to_ir
from aiedsl.lang.trace import DesignTrace
from aiedsl.source_loc import caller_loc, decorator_loc, def_line, function_loc, user_line
from aiedsl.targets import DEFAULT_DEVICE, known_target
from aiedsl.text import whole_ints
from aiedsl.user_errors import raised_by_user, user_exception
from aiedsl.values import masked, shown


def _first_nonfinite(arr: np.ndarray) -> tuple[tuple[int, ...], int] | None:
    """Where ``arr``'s first NaN or infinity is, and how many there are; None if none (or
    ``arr`` holds no floats). Told in the array's own type (bf16 too): no wide copy."""
    if numpy_kind(arr.dtype) != "f" or not arr.size:
        return None
    bad = ~np.isfinite(arr)
    if not bad.any():
        return None
    return tuple(int(x) for x in np.unravel_index(int(np.argmax(bad)), arr.shape)), \
        int(bad.sum())


def _nonfinite_input(inputs: dict[str, np.ndarray]) -> str | None:
    """The first NaN or infinity among float ``inputs``, as ``'A'[3, 5]``; None if all are
    finite (a reference that returns NaN for NaN in is not the one to blame)."""
    for n, a in inputs.items():
        found = _first_nonfinite(np.asarray(a))
        if found is not None:
            return f"'{n}'{list(found[0])}"
    return None

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
    declared: dict[str, Any] = field(default_factory=dict)
    """The kernels its design file binds to a name at its top level (declared there, or
    imported), called by the design or not, by symbol (:func:`~aiedsl.loader.load_design` fills
    it): ``aiedsl kernel test`` and ``kernel profile`` run those no core calls too, as a kernel
    is written and tested before it is called."""
    nonfinite: bool = False
    """The reference may expect NaN or infinity (``@d.reference(nonfinite=True)``); otherwise
    any NaN or infinity, expected or produced, fails."""

    def __reduce_ex__(self, protocol: Any) -> Any:
        # a design loaded from its file lives in a module of that load alone, which no other
        # process can import: pickle's own error named that module (a sweep's pool)
        made = [self.reference_fn, *(getattr(k, "reference", None) for k in self.kernels.values())]
        modules = [getattr(fn, "__module__", None) or "" for fn in made]
        if any(design_module(m) != m for m in modules):
            raise DesignError(
                "design", f"the design '{self.name}' loaded from its file does not pickle: its "
                "reference and kernels live in that load's own module, which another process "
                "cannot import", loc=caller_loc(),
                fix="send the design file's path and defines to the worker and load it there: "
                "load_design(path, defines) (a SimResult, a RunResult and a DesignError do "
                "pickle, to send back)")
        return super().__reduce_ex__(protocol)

    def __repr__(self) -> str:
        # short: the IR's own repr runs to hundreds of KB
        fn = self.reference_fn
        ref = "no reference" if fn is None else f"reference {getattr(fn, '__name__', '?')}()"
        return (f"DesignHandle({self.name} on {self.ir.device}: {', '.join(self.inputs)} -> "
                f"{', '.join(self.outputs)}; {ref})")

    @property
    def name(self) -> str:
        """The design's name."""
        return self.ir.name

    @property
    def inputs(self) -> list[str]:
        """Tensors the runtime fills, in argument order."""
        return self.ir.filled_tensors()

    @property
    def outputs(self) -> list[str]:
        """Tensors the runtime drains, in argument order."""
        drained = {t.tensor for t in self.ir.runtime if t.op == "drain"}
        return [t.name for t in self.ir.tensors if t.name in drained]

    def reference(self, fn: Callable[..., Any] | None = None, *, nonfinite: bool = False
                  ) -> Any:
        """Decorator: the design's numpy reference, ``fn(*inputs) -> output``, or a tuple or list
        of outputs for several.

        ``@d.reference(nonfinite=True)`` declares that NaN or infinity are expected values.
        """
        # Where d.reference(...) is written. Applied bare (@d.reference), Python 3.10 gives the
        # def line, 3.11 the decorator's; a function's own errors point at its first line.
        loc = caller_loc()
        nonfinite = check_flag(nonfinite, "nonfinite", loc, "give nonfinite=True when NaN or "
                               "infinity are expected values, or leave it out", rule="reference")

        def set_(f: Callable[..., Any]) -> Callable[..., Any]:
            self.use_reference(f, nonfinite, loc)
            return f

        return set_ if fn is None else set_(fn)

    def use_reference(self, fn: Callable[..., Any], nonfinite: bool, loc: Loc) -> None:
        """Make ``fn`` the reference (what :meth:`reference` does), a mistake reported at
        ``loc`` unless ``fn`` is a user's function (then at its first line)."""
        before = function_loc(self.reference_fn) if self.reference_fn is not None else None
        here = function_loc(fn) or loc
        if before is not None and before.path == here.path and before.line != here.line:
            # a second reference in one file replaced the first without a word (a tester: an
            # edited copy left above it may be the one that runs); a notebook's cell run
            # again is another file, and replaces it
            raise DesignError(
                "reference", f"design '{self.name}' has a reference already: "
                f"{getattr(self.reference_fn, '__name__', 'a function')} at line {before.line}",
                loc=here, related=[("the first reference", before)],
                limit="one reference per design", found=f"a second, "
                f"{getattr(fn, '__name__', 'a function')}",
                fix="keep one of them (a reference returns every output, as a tuple for "
                    "several)")
        check_returning(fn, f"the reference of '{self.name}'", loc)
        what = f"the reference of '{self.name}'"
        check_unfilled_parameters(fn, self.inputs, self.ir, what, loc)
        check_callable(fn, len(self.inputs), what, loc)
        check_reference_names(fn, self.inputs, {t.name for t in self.ir.tensors}, what, loc)
        self.reference_fn, self.nonfinite = fn, nonfinite

    def expected(self, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Run the reference on ``inputs`` and name its results by output tensor.

        Each result must be a numeric array of its output's size, of the output's kind (integer
        outputs take integer results), and finite unless the reference says ``nonfinite``.
        """
        fn = self.reference_fn
        if fn is None:
            raise DesignError("reference", f"design '{self.name}' has no numpy reference",
                              loc=self.ir.loc, fix=f"decorate a function with "
                              f"@{self.name}.reference (from Python, simulate(..., check=False) "
                              "or art.run(..., check=False) runs it without one, unchecked)")
        where = function_loc(fn) or self.ir.loc
        try:
            result = fn(*(self._as_declared(n, inputs[n]) for n in self.inputs))
        except ValueError as e:
            if "read-only" not in str(e):  # numpy's words for a write to a read-only array
                raise user_exception(e, f"running the reference of '{self.name}'", where) from e
            raise DesignError(
                "reference", f"the reference of '{self.name}' writes into a read-only array",
                loc=user_line(e.__traceback__) or where,
                limit=f"its inputs ({', '.join(self.inputs)}) are the caller's arrays, read-only: "
                "written, they would change the caller's data and what the next run is given",
                found=f"ValueError: {e}", fix="compute into a new array (x + 1, not x += 1), "
                "or copy the input first (x = x.copy())") from None
        except BaseException as e:
            if not raised_by_user(e):
                raise
            raise user_exception(e, f"running the reference of '{self.name}'", where) from e
        several = len(self.outputs) > 1
        limit = ("one array per drained tensor, in argument order (a tuple or list of them for "
                 f"several: {', '.join(self.outputs)})")
        fix = f"return {', '.join(self.outputs)}" if several else "return the array itself"
        if isinstance(result, dict):
            raise DesignError(
                "reference", f"the reference of '{self.name}' returned a dict", loc=where,
                limit=limit, found=f"a dict of {sorted(result)}", fix=fix)
        # several outputs: a tuple or a list of arrays, one each (a list for one output is the
        # array itself, as numpy reads it)
        results = tuple(result) if isinstance(result, tuple) or (
            several and isinstance(result, list)) else (result,)
        if len(results) != len(self.outputs):
            raise DesignError(
                "reference", f"the reference of '{self.name}' returned {len(results)} "
                f"value(s) for {len(self.outputs)} output(s) {self.outputs}", loc=where,
                limit=limit, found=f"{len(results)} value(s)" + (
                    f" in a {type(result).__name__}" if isinstance(result, (tuple, list)) else
                    ""), fix=f"{fix}, one array per drained tensor in argument order"
                if several else fix)
        return {name: self._checked(name, r, where, inputs)
                for name, r in zip(self.outputs, results)}

    def _as_declared(self, name: str, arr: np.ndarray) -> np.ndarray:
        """Input ``name`` as the reference is handed it: in its tensor's declared shape (a
        caller may pass any shape of the right size, which the run reads in row-major order),
        and read-only (it is the caller's array, or what the simulator read)."""
        view = np.asarray(arr).reshape(self.ir.tensor(name).type.shape)  # a new array object
        view.flags.writeable = False
        return view

    def _checked(self, name: str, value: Any, where: Loc,
                 inputs: dict[str, np.ndarray]) -> np.ndarray:
        """One reference result, checked against its output tensor."""
        t = self.ir.tensor(name).type
        what = f"the reference of '{self.name}' returned"
        if value is None:
            raise DesignError("reference", f"{what} None for output '{name}'", loc=where,
                              limit=f"an array of {t.numel} values ({t})", found="None",
                              fix="return the expected array (is a `return` missing?)")
        mask, data = masked(value)  # numpy.ma: the masked elements are not compared
        arr = np.asarray(data)
        kind = numpy_kind(arr.dtype)
        want = "f" if t.dt.is_float else "iub"
        if kind not in want or kind not in "iubf":
            raise DesignError(
                "reference", f"{what} {arr.dtype} values for output '{name}' ({t})", loc=where,
                limit="floats for a float output, integers for an integer one",
                found=f"{arr.dtype}, shape {list(arr.shape)}",
                fix="return numbers of the output's kind, e.g. "
                f".astype(np.{np.dtype(t.dt.numpy).name})")
        if arr.size != t.numel:
            returned = f"a scalar, {shown(value)}," if arr.ndim == 0 else \
                f"an array of shape {list(arr.shape)} ({counted(arr.size, 'value')})"
            raise DesignError(
                "reference", f"{what} {returned} for output '{name}' ({t})", loc=where,
                limit=f"{counted(t.numel, 'value')}, shape {list(t.shape)}",
                found=counted(arr.size, "value"), fix="return an array of the output's shape")
        if arr.ndim > 1 and len(t.shape) > 1 and tuple(arr.shape) != tuple(t.shape):
            # same size, other shape: reshaping would compare a transposed (or otherwise
            # reordered) result element by element; a flat result is taken as it comes
            raise DesignError(
                "reference", f"{what} an array of shape {list(arr.shape)} for output '{name}' "
                f"({t})", loc=where, limit=f"shape {list(t.shape)} (or a flat array of its "
                f"{t.numel} values in row-major order)", found=f"shape {list(arr.shape)}",
                fix="return the output's shape (is a .T or a reshape missing?)")
        if mask is not None:  # numpy.ma keeps a mask of its data's shape
            # what a masked element holds is no one's: 0, so no check below looks at it
            arr = np.where(mask, np.zeros((), arr.dtype), arr)
        if not t.dt.is_float:
            _check_holds(arr.reshape(t.shape), name, t, what, where)
        found = None if self.nonfinite else _first_nonfinite(arr)
        if found is not None:
            i, count = found
            source = _nonfinite_input(inputs)
            raise DesignError(
                "reference", f"{what} {arr[i]} at {list(i)} of output '{name}'"
                + (f" (input {source} is not finite either)" if source else ""), loc=where,
                limit="finite values (NaN never compares equal, so it would hide a wrong "
                "result)", found=f"{count} value(s) that are NaN or infinite",
                fix=("pass finite inputs" if source else "fix the reference")
                + f", or declare them expected with @{self.name}.reference(nonfinite=True)")
        if mask is not None and np.any(mask):
            return np.ma.masked_array(arr.reshape(t.shape), mask=np.reshape(mask, t.shape))
        return arr.reshape(t.shape)


def _check_holds(arr: np.ndarray, name: str, t: TensorType, what: str, where: Loc) -> None:
    """A reference's result ``arr`` for integer output ``name`` (of type ``t``) holds values
    the output's type holds, and is not bool; else a DesignError at ``where``. Cast for the
    comparison, 398 for a u8 output became 142 (what no kernel computes) and True became 1
    (a mask of 255 then failed, a kernel writing 0 and 1 passed), without a word."""
    np_dt = np.dtype(t.dt.numpy)
    if arr.dtype == np.bool_:
        raise DesignError(
            "reference", f"{what} bool values for output '{name}' ({t})", loc=where,
            limit=f"{t.dt} values: True and False would be compared as 1 and 0",
            found=f"bool, shape {list(arr.shape)}",
            fix=f"return the values the kernel writes: np.where(mask, 255, 0).astype("
                f"np.{np_dt.name}), or mask.astype(np.{np_dt.name}) for 1 and 0")
    info = np.iinfo(np_dt)  # type: ignore[type-var]  # an integer output here
    if arr.size == 0 or (info.min <= arr.min() and arr.max() <= info.max):
        return
    span = int(info.max) - int(info.min) + 1
    wrap = f"x % {span}" if info.min == 0 else f"(x + {-info.min}) % {span} - {-info.min}"
    bad = (arr < info.min) | (arr > info.max)
    i = tuple(int(x) for x in np.unravel_index(int(np.flatnonzero(bad)[0]), arr.shape))
    outside = arr[bad]  # their range, not the whole array's (which the limit's values share)
    raise DesignError(
        "reference", f"{what} {arr[i]} at {list(i)} of output '{name}' ({t}), which {t.dt} "
        "does not hold", loc=where, limit=f"{t.dt} values: {info.min} to {info.max}",
        found=f"{int(bad.sum())} value(s) outside it, from {outside.min()} to {outside.max()} "
              f"({arr.dtype})",
        fix=f"narrow as the kernel does: saturate (np.clip(x, {info.min}, {info.max})) or wrap "
            f"({wrap}), then .astype(np.{np_dt.name})")


def _not_positional(fn: Callable[..., Any], pname: str, p: inspect.Parameter,
                    params: Any, loc: Loc) -> NoReturn:
    """Refuse a design function's parameter that the host tensors cannot be passed to by
    position (``*, out``, ``*args``, ``**kw``): @design calls the function with them in
    order, which said "takes 1 positional argument but 2 were given". ``params`` are the
    function's, for the fix's ``def`` line."""
    kind, written = (("a keyword-only parameter", f"*, {pname}") if p.kind == p.KEYWORD_ONLY
                     else ("a *args parameter", f"*{pname}") if p.kind == p.VAR_POSITIONAL
                     else ("a **kwargs parameter", f"**{pname}"))
    if p.kind == p.KEYWORD_ONLY:  # every named parameter, plain, as its type is written
        plain = ", ".join(f"{n}: {_written_type(q.annotation)}" for n, q in params.items()
                          if q.kind not in (q.VAR_POSITIONAL, q.VAR_KEYWORD))
        fix = f"remove the `*` before it: def {fn.__name__}({plain})"
    else:
        fix = (f"name each host tensor as a parameter of its own in place of {written}, e.g. "
               f"def {fn.__name__}(inp: Tensor[1024, i32], out: Tensor[1024, i32])")
    raise DesignError(
        "design", f"design '{fn.__name__}' takes '{pname}' as {kind}", loc=loc,
        limit="one plain parameter per host tensor, annotated with its Tensor type: @design "
        "passes the tensors by position, in order", found=written, fix=fix)


def _written_type(annotation: object) -> str:
    """A parameter's Tensor annotation as a design writes it: ``Tensor[4096, i32]``."""
    if not isinstance(annotation, TensorType):
        return "Tensor[...]"
    return f"Tensor[{', '.join(map(str, annotation.shape))}, {annotation.dtype}]"


def design(device: str = DEFAULT_DEVICE, *, name: str | None = None,
           reference: Callable[..., Any] | None = None,
           flows: str = "circuit") -> Callable[[Callable[..., Any]], DesignHandle]:
    """Declare a design for ``device``; the decorated function is traced at once.

    Its parameters are the host tensors, annotated ``Tensor[..., dtype]``, in the order the host
    passes them. ``--device`` on the command line overrides ``device``. ``flows="packet"`` makes
    every fifo stream packet-switched (aiecc ``--packet-sw-objFifos``): streams share wires by
    packet id, for designs whose circuit-switched wires run out.
    """
    loc = caller_loc()
    if callable(device):  # @design written bare: Python hands the function over as device
        raise DesignError(
            "design", f"@design is applied to '{getattr(device, '__name__', device)}' without "
            "its parentheses", loc=decorator_loc(loc, device, "design"),
            limit="@design(...) makes the decorator: bare, it "
            "would take the function for its device and declare no design", found="@design",
            fix='write @design(device="npu1") (the device it runs on: npu1, npu1_1col..3col, '
            'npu2, npu2_1col..7col; --device overrides it)')
    if flows not in ("circuit", "packet"):
        raise DesignError("design", f"flows={flows!r}", loc=loc,
                          limit="'circuit' (a wire per stream) or 'packet' (streams share wires "
                          "by packet id)", found=repr(flows), fix="leave flows out, or write "
                          "flows='packet'")
    # Names visible where @design is written, for string annotations of designs defined in a
    # function (module-level designs resolve through the function's globals).
    scope = dict(sys._getframe(1).f_locals)

    def decorate(fn: Callable[..., Any]) -> DesignHandle:
        ctx = load_context()
        dev = (ctx.device if ctx and ctx.device else None) or device
        target = known_target(dev, loc)
        b = DesignTrace(decorated_name(fn, name, "design", 'design(name="gemm")', loc),
                        target, loc)
        check_traced(fn, "design function", "@design", "design", loc)
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
            if p.kind in (p.KEYWORD_ONLY, p.VAR_POSITIONAL, p.VAR_KEYWORD):
                _not_positional(fn, pname, p, params, def_line(fn) or loc)
            if not isinstance(p.annotation, TensorType):
                raise DesignError(
                    "design", f"argument '{pname}' of design '{fn.__name__}' has no Tensor "
                    "annotation", loc=loc, fix=f"annotate it, e.g. {pname}: Tensor[1024, i32]")
            tensors.append(HostTensorRef(check_tensor_name(pname, loc), i, p.annotation,
                                         loc))
        b.tensors = tensors
        # (whole_ints: a message may quote a huge int the design gives, loop(10**5000), when the
        # design file runs as a script rather than through load_design)
        with active(_DESIGN, b), whole_ints():
            fn(*tensors)
        ir = to_ir(b, dict(ctx.used) if ctx else {})
        for step in b.finish.values():  # a kernel without cycles=: profiled with its calls
            ir = step(ir, b.kernel_objs)
        handle = DesignHandle(ir.model_copy(update={"flows": flows}) if flows != "circuit"
                              else ir, kernels=dict(b.kernel_objs))
        if reference is not None:  # at @design's line (3.10 would give the def's, applying it)
            handle.use_reference(reference, False, loc)
        return handle

    return decorate
