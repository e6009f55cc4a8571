"""Run a compiled build on the NPU through XRT's Python bindings (pyxrt comes with XRT, never PyPI).

The calls follow the ABI in ``manifest.json`` (see :mod:`aiedsl.toolchain.manifest`): register
``aie.xclbin``, open a hardware context and kernel ``MLIR_AIE`` once; put ``insts.bin`` in a
cacheable buffer on group 1; one host-only buffer per runtime tensor on groups 3..7; then per
run: write inputs, sync to the device, ``kernel(3, instr, words, *buffers)``, wait, sync back and
read the outputs. Buffers are accessed through ``bo.map()`` (bf16 as raw 16-bit words).

Example
-------
>>> session = NpuSession(Path("build/gemm_bf16"), manifest)      # doctest: +SKIP
>>> outputs = session.run({"A": a, "B": b})                        # doctest: +SKIP
"""

from __future__ import annotations

import importlib
import sys
import time
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from aiedsl.dtypes import dtype as lookup_dtype
from aiedsl.errors import ToolchainError
from aiedsl.toolchain.generation import NpuName, read_npu_name, wrong_generation


@contextmanager
def xrt_step(what: str) -> Iterator[None]:
    """Turn an exception pyxrt raises while doing ``what`` (it raises RuntimeError subclasses
    with the driver's text) into a ToolchainError naming the step and XRT's message, exit 5
    (a tool failed)."""
    try:
        yield
    except Exception as e:
        detail = str(e) or type(e).__name__
        raise ToolchainError(
            "npu", f"XRT failed to {what}: {detail}", exit_code=5,
            fix="check the NPU driver and XRT (`aiedsl doctor`, `xrt-smi examine`); the "
                "design still runs on the simulator with --target sim") from e


def incomplete_run(state: Any, seconds: float) -> ToolchainError:
    """The error for a run XRT ended in ``state`` (an ``ert_cmd_state``) other than completed,
    ``seconds`` after its launch."""
    name = getattr(state, "name", None) or str(state)
    if name.endswith(("TIMEOUT", "ABORT", "NORESPONSE")):
        fix = ("the design hung on the NPU and the driver stopped it: `aiedsl sim` runs the "
               "same design and names the core and the lock or stream it waits on; if the "
               "simulation completes, the hang is not one aiedsl models (report the design)")
    else:
        fix = ("the NPU reported the run failed: check the driver's log (`sudo dmesg | grep "
               "amdxdna`) and `xrt-smi examine`; `aiedsl sim` runs the same design")
    return ToolchainError(
        "npu", f"the NPU run did not complete: XRT ended it as {name} after {seconds:.2f} s",
        exit_code=5, limit="a run XRT reports as ERT_CMD_STATE_COMPLETED",
        found=name, fix=fix)


def import_pyxrt() -> Any:
    """The pyxrt module, imported only when a run needs it."""
    return importlib.import_module("pyxrt")


def find_npu() -> tuple[Any | None, str]:
    """(device, description) of the first NPU, or (None, why there is none)."""
    try:
        pyxrt = import_pyxrt()
    except ImportError as e:
        if not (isinstance(e, ModuleNotFoundError) and e.name == "pyxrt"):
            # found, and it failed: its words are the reason ("DLL load failed" on Windows, a
            # library of XRT's missing), which were dropped (a tester)
            return None, f"pyxrt is there but does not load: {e}" + (
                " (XRT's DLL folder must be among the DLL directories: os.add_dll_directory)"
                if sys.platform == "win32" else
                " (source /opt/xilinx/xrt/setup.sh sets the paths its libraries are found by)")
        if sys.platform == "win32":
            return None, "pyxrt is not importable (XRT is not installed, or its python folder " \
                         "is not on PYTHONPATH)"
        return None, "pyxrt is not importable (XRT is not installed, or its python/ is not on " \
                     "PYTHONPATH: source /opt/xilinx/xrt/setup.sh)"
    try:
        device = pyxrt.device(0)
    except Exception as e:  # pyxrt raises RuntimeError subclasses with the driver's text
        return None, f"XRT found no device: {e}"
    return device, "NPU device 0"


class NpuSession:
    """A loaded xclbin with its context, kernel and buffers, reused across runs."""

    def __init__(self, build_dir: Path, manifest: dict[str, Any], pyxrt: Any | None = None,
                 device: Any | None = None, npu: NpuName | None = None) -> None:
        """Load the build in ``build_dir`` described by ``manifest`` on ``device`` (default: NPU
        device 0), whose name, when read already, is ``npu``. A device of another generation
        than the manifest's is refused before anything is loaded."""
        self.xrt = pyxrt if pyxrt is not None else import_pyxrt()
        self.manifest = manifest
        with xrt_step("open NPU device 0"):
            self.device = device if device is not None else self.xrt.device(0)
        self.npu = npu if npu is not None else read_npu_name(self.xrt, self.device)
        if "device" in manifest:  # before anything is loaded: an xclbin of another generation
            wrong = wrong_generation(self.npu, manifest.get("design", "the design"),
                                     manifest["device"])
            if wrong is not None:
                raise wrong
        with xrt_step(f"read {manifest['xclbin']}"):
            xclbin = self.xrt.xclbin(str(build_dir / manifest["xclbin"]))
        with xrt_step(f"register {manifest['xclbin']} with the device"):
            self.device.register_xclbin(xclbin)
        with xrt_step("open a hardware context"):
            self.context = self.xrt.hw_context(self.device, xclbin.get_uuid())
        with xrt_step(f"find kernel {manifest['kernel']} in {manifest['xclbin']}"):
            self.kernel = self.xrt.kernel(self.context, manifest["kernel"])
        insts = np.fromfile(build_dir / manifest["instructions"]["file"], dtype=np.uint32)
        self.words = int(insts.size)
        with xrt_step("allocate and load the instruction buffer"):
            self.instr = self.xrt.bo(self.device, insts.nbytes, self.xrt.bo.cacheable,
                                     self.kernel.group_id(manifest["instructions"]["group_id"]))
            self.instr.write(insts, 0)
            self.instr.sync(self.xrt.xclBOSyncDirection.XCL_BO_SYNC_BO_TO_DEVICE)
        self.buffers = []
        for b in manifest["buffers"]:
            with xrt_step(f"allocate the buffer of '{b['name']}' ({b['bytes']} bytes)"):
                self.buffers.append(self.xrt.bo(self.device, b["bytes"], self.xrt.bo.host_only,
                                                self.kernel.group_id(b["group_id"])))

    def _view(self, i: int) -> np.ndarray:
        b = self.manifest["buffers"][i]
        with xrt_step(f"map the buffer of '{b['name']}'"):
            mapped = self.buffers[i].map()
        # (what follows is aiedsl's own: a failure there is not XRT's to be blamed for)
        raw = np.frombuffer(mapped, dtype=np.uint8, count=b["bytes"])
        return raw.view(np.dtype(lookup_dtype(b["dtype"]).numpy)).reshape(b["shape"])

    def write_inputs(self, inputs: dict[str, np.ndarray],
                     only: Collection[str] | None = None) -> None:
        """Copy the input tensors (those named in ``only``, when given) into their buffers and
        sync them to the device."""
        for i, b in enumerate(self.manifest["buffers"]):
            if b["direction"] != "out" and (only is None or b["name"] in only):
                self._view(i)[...] = np.asarray(inputs[b["name"]]).reshape(b["shape"])
                with xrt_step(f"copy input '{b['name']}' to the device"):
                    self.buffers[i].sync(
                        self.xrt.xclBOSyncDirection.XCL_BO_SYNC_BO_TO_DEVICE)

    def launch(self) -> float:
        """Run the kernel once on what the buffers hold; seconds from launch to completion.

        A run that ends in any state but completed (the driver stops a hung run, which then
        ends timed out or aborted) is a ToolchainError naming the state: its buffers hold
        nothing to compare."""
        start = time.perf_counter()
        with xrt_step("launch the kernel"):
            run = self.kernel(self.manifest["opcode"], self.instr, self.words, *self.buffers)
        with xrt_step("wait for the kernel to finish"):
            state = run.wait()
        seconds = time.perf_counter() - start
        if state != self.xrt.ert_cmd_state.ERT_CMD_STATE_COMPLETED:
            raise incomplete_run(state, seconds)
        return seconds

    def read_outputs(self) -> dict[str, np.ndarray]:
        """Sync the output buffers back and copy them out."""
        out = {}
        for i, b in enumerate(self.manifest["buffers"]):
            if b["direction"] != "in":
                with xrt_step(f"copy output '{b['name']}' from the device"):
                    self.buffers[i].sync(
                        self.xrt.xclBOSyncDirection.XCL_BO_SYNC_BO_FROM_DEVICE)
                out[b["name"]] = self._view(i).copy()
        return out

    def run(self, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """One complete run: inputs in, kernel, outputs out."""
        self.write_inputs(inputs)
        self.launch()
        return self.read_outputs()
