"""``--inputs FILE`` of ``aiedsl sim`` and ``aiedsl run``: a run on the user's own data (real
activations, the large values an exp must survive) instead of the seeded random inputs.

The file is a numpy archive, ``np.savez(FILE, A=a, B=b)``: one array per tensor the runtime
fills, named after its parameter of the ``@design`` function. Each is held to what
``build(...).run(a, b)`` takes (:func:`aiedsl.sim.compare.check_inputs`): the tensor's element
type and count, nothing converted. One exception: ``np.savez`` stores a bfloat16 array as raw
2-byte records (``|V2``), which are read back as the bf16 they were.

Example
-------
>>> np.savez("x.npz", A=a, B=b)            # doctest: +SKIP
$ aiedsl sim designs/gemm_bf16.py --inputs x.npz
"""

from __future__ import annotations

import math
import zipfile
from typing import Any

import numpy as np

from aiedsl.dtypes import dtype as lookup_dtype
from aiedsl.errors import DesignError
from aiedsl.ir.design import Design
from aiedsl.text import printable

__all__ = ["drawn_from", "given_arrays", "read_inputs"]

_SAVE = "save the arrays by tensor name with np.savez(FILE, {names})"


def given_arrays(handle: Any, inputs: str | None, seed: int) -> list[np.ndarray]:
    """The arrays of ``--inputs`` for ``handle``'s design, read before anything is built (a
    refused file builds nothing); none without it. ``--seed`` beside it is refused: each says
    where the inputs come from."""
    if inputs is None:
        return []
    if seed:
        raise DesignError("inputs", f"--seed {seed} and --inputs {printable(inputs)} both say "
                          "where the inputs come from", fix="give one: --seed draws random "
                          "inputs, --inputs reads them")
    return read_inputs(inputs, handle.ir, handle.inputs)


def drawn_from(seed: int, inputs: str | None) -> str:
    """Where a run's inputs came from, as its first line says it (``seed 0``, ``inputs
    x.npz``)."""
    return f"inputs {printable(inputs)}" if inputs is not None else f"seed {seed}"


def read_inputs(path: str, d: Design, order: list[str]) -> list[np.ndarray]:
    """The arrays of ``path`` (a ``.npz``) for design ``d``, in ``order`` (its inputs' argument
    order); a DesignError of rule ``inputs`` naming the file when it cannot be read or does not
    hold what the design takes."""
    save = _SAVE.format(names=", ".join(f"{n}=..." for n in order))
    shown = printable(path)  # a file name is said as text, never as terminal codes
    if not path:
        raise DesignError("inputs", "--inputs '' names no file", found="''",
                          fix=f"name the .npz file ({save})")
    try:
        archive = np.load(path, allow_pickle=False)
    except (FileNotFoundError, PermissionError, IsADirectoryError) as e:
        raise DesignError("inputs", f"--inputs {shown} cannot be read",
                          limit="a .npz file (np.savez)", found=e.strerror or type(e).__name__,
                          fix=save) from None
    except OSError:  # numpy's word for a file it cannot parse ("... as a pickle")
        raise DesignError("inputs", f"--inputs {shown} is not a numpy archive",
                          limit="a .npz file (np.savez)", found="not an .npy or .npz file",
                          fix=save) from None
    except (ValueError, zipfile.BadZipFile, EOFError) as e:
        # numpy takes a file of neither format for a pickle, which it will not load: its
        # words ("contains pickled (object) data") would send the user looking for objects
        found = str(e) if isinstance(e, zipfile.BadZipFile) and str(e) else \
            "not an .npy or .npz file"
        raise DesignError("inputs", f"--inputs {shown} is not a numpy archive",
                          limit="a .npz file (np.savez)", found=found, fix=save) from None
    if not isinstance(archive, np.lib.npyio.NpzFile):
        raise DesignError(
            "inputs", f"--inputs {shown} holds one array, not arrays by tensor name",
            limit=f"a .npz of {', '.join(order)}", found=f"an .npy array of shape "
            f"{list(np.shape(archive))}", fix=save)
    tensors = {t.name: t for t in d.tensors}
    with archive:
        # every array's header (its element type and shape) is read and checked before any
        # array's data: a small file may claim a huge one (a reviewer's 389 KB file took
        # 454 MB), and a misnamed array is said before a large one is read
        stand_ins: dict[str, np.ndarray] = {}
        for name in archive.files:
            shape, dt = _header(archive, name, shown, save)
            if dt.hasobject:  # reading it would run pickled code
                raise DesignError(
                    "inputs", f"--inputs {shown}: array '{printable(name)}' holds Python objects",
                    limit="numbers of the tensor's element type", found=f"dtype {dt}",
                    fix=f"save '{printable(name)}' as a numeric array ({save})")
            stand_ins[name] = np.lib.stride_tricks.as_strided(  # of no memory: shape and type
                np.zeros(1, _as_given(dt, tensors.get(name))), shape=shape,
                strides=(0,) * len(shape))
        _checked(d, stand_ins, shown)
        given: dict[str, np.ndarray] = {}
        for name in archive.files:
            try:
                arr = archive[name]
            except Exception as e:  # the data after a good header (truncated, a bad CRC)
                raise DesignError(
                    "inputs", f"--inputs {shown}: array '{printable(name)}' cannot be read",
                    limit="a .npz file (np.savez)", found=str(e) or type(e).__name__,
                    fix=save) from None
            given[name] = arr.view(_as_given(arr.dtype, tensors.get(name)))
    _checked(d, given, shown)
    return [given[n] for n in order]


def _header(archive: Any, name: str, path: str, save: str) -> tuple[tuple[int, ...], np.dtype]:
    """The shape and element type array ``name`` of ``archive`` (an open ``.npz``, ``path`` as
    said) says it holds, read from its header alone; a DesignError naming it when it is no
    ``.npy`` data."""
    member = name if name.endswith(".npy") else f"{name}.npy"
    try:
        with archive.zip.open(member) as f:
            version = np.lib.format.read_magic(f)
            if version == (1, 0):
                shape, _, dt = np.lib.format.read_array_header_1_0(f)
            else:  # 2.0, or 3.0: laid out as 2.0, its header utf-8, which is 2.0's latin-1
                # wherever it is ASCII (a numeric dtype's always is)
                shape, _, dt = np.lib.format.read_array_header_2_0(f)
        shape = tuple(int(n) for n in shape)
        if any(n < 0 for n in shape) or math.prod(shape) * np.dtype(dt).itemsize >= 2 ** 62:
            raise ValueError(f"its header says shape {list(shape)} of {np.dtype(dt)}")
    except KeyError:  # a member np.savez did not write: not an array at all
        raise DesignError(
            "inputs", f"--inputs {path}: '{printable(name)}' is not an array",
            limit="a .npz file (np.savez): an .npy array per member",
            found=f"member '{printable(name)}' of other data",
            fix=save) from None
    except Exception as e:  # numpy's header parser raises what its tokenizer does (a
        # TokenError of a garbled header): any failure here is the file's
        raise DesignError(
            "inputs", f"--inputs {path}: array '{printable(name)}' cannot be read",
            limit="a .npz file (np.savez)", found=str(e) or type(e).__name__,
            fix=save) from None
    return tuple(shape), np.dtype(dt)


def _as_given(dt: np.dtype, tensor: Any) -> np.dtype:
    """``dt``, or bf16 where ``np.savez`` stored a bf16 tensor's array as 2-byte records."""
    if tensor is not None and dt.kind == "V" and dt.itemsize == 2 and tensor.type.dtype == "bf16":
        return np.dtype(lookup_dtype("bf16").numpy)
    return dt


def _checked(d: Design, arrays: dict[str, np.ndarray], path: str) -> None:
    """:func:`~aiedsl.sim.compare.check_inputs` of ``arrays``, its errors naming the file."""
    from aiedsl.sim.compare import check_inputs

    try:
        check_inputs(d, arrays, None)  # a file, no design line
    except DesignError as e:
        # (the names quoted are the file's, said as text)
        raise DesignError(e.rule, f"--inputs {path}: {printable(e.message)}",
                          limit=None if e.limit is None else printable(e.limit),
                          found=None if e.found is None else printable(e.found),
                          fix=f"{printable(e.fix)} (then save the file again)"
                          if e.fix else None) from None
