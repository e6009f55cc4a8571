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

import zipfile

import numpy as np

from aiedsl.dtypes import dtype as lookup_dtype
from aiedsl.errors import DesignError
from aiedsl.ir.design import Design

__all__ = ["read_inputs"]

_SAVE = "save the arrays by tensor name with np.savez(FILE, {names})"


def read_inputs(path: str, d: Design, order: list[str]) -> list[np.ndarray]:
    """The arrays of ``path`` (a ``.npz``) for design ``d``, in ``order`` (its inputs' argument
    order); a DesignError of rule ``inputs`` naming the file when it cannot be read or does not
    hold what the design takes."""
    from aiedsl.sim.compare import check_inputs

    save = _SAVE.format(names=", ".join(f"{n}=..." for n in order))
    try:
        archive = np.load(path, allow_pickle=False)
    except (FileNotFoundError, PermissionError, IsADirectoryError) as e:
        raise DesignError("inputs", f"--inputs {path} cannot be read",
                          limit="a .npz file (np.savez)", found=e.strerror or type(e).__name__,
                          fix=save) from None
    except OSError:  # numpy's word for a file it cannot parse ("... as a pickle")
        raise DesignError("inputs", f"--inputs {path} is not a numpy archive",
                          limit="a .npz file (np.savez)", found="not an .npy or .npz file",
                          fix=save) from None
    except (ValueError, zipfile.BadZipFile, EOFError) as e:
        # numpy takes a file of neither format for a pickle, which it will not load: its
        # words ("contains pickled (object) data") would send the user looking for objects
        found = str(e) if isinstance(e, zipfile.BadZipFile) and str(e) else \
            "not an .npy or .npz file"
        raise DesignError("inputs", f"--inputs {path} is not a numpy archive",
                          limit="a .npz file (np.savez)", found=found, fix=save) from None
    if not isinstance(archive, np.lib.npyio.NpzFile):
        raise DesignError(
            "inputs", f"--inputs {path} holds one array, not arrays by tensor name",
            limit=f"a .npz of {', '.join(order)}", found=f"an .npy array of shape "
            f"{list(np.shape(archive))}", fix=save)
    tensors = {t.name: t for t in d.tensors}
    given: dict[str, np.ndarray] = {}
    with archive:
        for name in archive.files:
            try:
                arr = archive[name]
            except ValueError as e:  # an object array: reading it would run pickled code
                raise DesignError(
                    "inputs", f"--inputs {path}: array '{name}' holds Python objects",
                    limit="numbers of the tensor's element type", found=str(e),
                    fix=f"save '{name}' as a numeric array ({save})") from None
            t = tensors.get(name)
            if t is not None and arr.dtype.kind == "V" and arr.dtype.itemsize == 2 and \
                    t.type.dtype == "bf16":
                arr = arr.view(lookup_dtype("bf16").numpy)  # np.savez's bfloat16, read back
            given[name] = arr
    try:
        check_inputs(d, given, None)  # a file, no design line
    except DesignError as e:
        raise DesignError(e.rule, f"--inputs {path}: {e.message}", limit=e.limit,
                          found=e.found, fix=f"{e.fix}, and save the file again"
                          if e.fix else None) from None
    return [given[n] for n in order]
