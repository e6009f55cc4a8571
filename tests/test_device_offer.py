"""A larger device a fix offers is checked there first: an MLIR-AIR user's tester followed
``--device npu1_2col`` out of a memtile limit straight into a shim limit. (The tester's own
design is in test_memtile_channels.py; here the checks are stood in for, device by device.)"""

from __future__ import annotations

from pathlib import Path

from aiedsl.checks.device_offer import weigh_device_offer
from aiedsl.errors import DesignError
from aiedsl.ir.design import Design
from aiedsl.loader import load_design


ROOT = Path(__file__).resolve().parent.parent


def _design() -> Design:
    return load_design(ROOT / "designs" / "passthrough.py").ir.model_copy(
        update={"device": "npu1_1col"})


def _offering(fix: str) -> DesignError:
    return DesignError("memtile channels", "too many", fix=fix)


def _check(failures: dict[str, DesignError]):  # type: ignore[no-untyped-def]
    seen: list[str] = []

    def check(d: Design) -> None:
        seen.append(d.device)
        if d.device in failures:
            raise failures[d.device]
    return check, seen


SHIM = DesignError("shim channels", "8 needed, 4 there", fix="fewer (--device npu1)")


def test_an_offer_that_passes_is_left_as_it_is() -> None:
    e = _offering("use fewer (--device npu1_2col)")
    check, seen = _check({})
    weigh_device_offer(_design(), e, check)
    assert e.fix == "use fewer (--device npu1_2col)" and seen == ["npu1_2col"]


def test_an_offer_that_meets_another_size_limit_names_it_and_the_device_with_room() -> None:
    e = _offering("use fewer (--device npu1_2col)")
    check, seen = _check({"npu1_2col": SHIM, "npu1_3col": SHIM})
    weigh_device_offer(_design(), e, check)
    assert e.fix == ("use fewer (--device npu1_2col); on npu1_2col the design would then meet "
                     "[shim channels]: 8 needed, 4 there, while --device npu1 passes every check")
    assert str(e).splitlines()[-1] == f"  fix: {e.fix}"
    assert seen == ["npu1_2col", "npu1_3col", "npu1"]


def test_no_larger_device_with_room_is_said_with_the_devices_tried() -> None:
    e = _offering("use fewer (--device npu1_2col)")
    check, _ = _check({name: SHIM for name in ("npu1_2col", "npu1_3col", "npu1", "npu2_3col",
                                               "npu2_4col")})
    weigh_device_offer(_design(), e, check)
    assert e.fix.endswith("[shim channels]: 8 needed, 4 there, and none of npu1_3col, npu1, "
                          "npu2_3col, npu2_4col has room for both either")


def test_a_larger_device_failing_another_check_is_not_offered() -> None:
    """A reviewer: npu2_3col failed a kernel's architecture check and was announced as having
    room for both. Only a device where every check passes is named; an npu2 for an npu1
    design is said to be another generation."""
    arch = DesignError("kernel arch", "made for aie2", fix="use the aie2p kernel")
    e = _offering("use fewer (--device npu1_2col)")
    check, _ = _check({"npu1_2col": SHIM, "npu1_3col": SHIM, "npu1": SHIM, "npu2_3col": arch,
                       "npu2_4col": arch})
    weigh_device_offer(_design(), e, check)
    assert e.fix.endswith("[shim channels]: 8 needed, 4 there")
    e = _offering("use fewer (--device npu1_2col)")
    check, _ = _check({"npu1_2col": SHIM, "npu1_3col": SHIM, "npu1": SHIM})
    weigh_device_offer(_design(), e, check)
    assert e.fix.endswith("while --device npu2_3col (an npu2: another NPU generation) passes "
                          "every check")


def test_a_check_that_breaks_on_the_offer_leaves_the_error_as_it_was() -> None:
    e = _offering("use fewer (--device npu1_2col)")

    def check(d: Design) -> None:
        raise KeyError("a bug")

    weigh_device_offer(_design(), e, check)
    assert e.fix == "use fewer (--device npu1_2col)"


def test_a_mistake_no_device_lifts_is_not_said_on_the_offer() -> None:
    """An unwritten element, or a core's own channels, fail on every device: the design's next
    error wherever it goes, not the offered device's."""
    e = _offering("use fewer (--device npu1_2col)")
    check, seen = _check({"npu1_2col": DesignError("unwritten element", "stale", fix="write")})
    weigh_device_offer(_design(), e, check)
    assert e.fix == "use fewer (--device npu1_2col)" and seen == ["npu1_2col"]


def test_a_fix_offering_no_single_device_is_not_weighed() -> None:
    for fix in ("write it", "--device npu1_2col or --device npu1", "--device npu1_1col",
                "--device npu9"):
        e = _offering(fix)
        check, seen = _check({})
        weigh_device_offer(_design(), e, check)
        assert e.fix == fix and seen == []
