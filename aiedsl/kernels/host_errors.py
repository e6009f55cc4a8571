"""What a failed host build of a kernel means: what in g++'s output aiedsl's host AIE API
header lacks, AIE API names (``aie::reverse``), raw AIE2 intrinsics (``mac_elem_16_2``,
``undef_v16int32``, ``srs``), AIE API headers (``<aie_api/utils.hpp>``) and the aie:: function
an ``aie::operators`` operator needs for its operands, each said in words a kernel writer can
act on.

Example
-------
>>> message, fix = explain("k.cc:5:18: error: 'mac_elem_16_2' was not declared in this scope",
...                        "k", "aie.hpp")
>>> message.split(", ")[1]
"a raw AIE2 intrinsic that aiedsl's host AIE API header does not model"
"""

from __future__ import annotations

import re
from typing import Sequence

from aiedsl.errors import listed
from aiedsl.kernels.aie_api_names import AIE_API_NAMES
from aiedsl.kernels.mmul_modes import mmul_arch, mmul_modes_fix

_QUOTED = r"[‘'](\w+)[’']"
"""A name as g++ quotes it: typographic quotes in a UTF-8 locale, ASCII ones under LC_ALL=C."""
_NOT_IN_AIE = re.compile(_QUOTED + r" is not a member of [‘']aie[’']")
_DID_YOU_MEAN = re.compile(_QUOTED + r" is not a member of [‘']aie[’']; did you mean "
                           r"[‘'](?:aie::)?(\w+)[’']")
"""g++'s suggestion for a name not in ``aie``: ``'addd' is not a member of 'aie'; did you mean
'add'?``: the name and the one it suggests."""
_NO_MEMBER = re.compile(r"[‘'](?:struct |class )?aie::(vector|accum|mask)<[^’']*>[’'] has no "
                        r"member named [‘'](\w+)[’']")
"""g++ on a member the host header's class lacks: ``'struct aie::vector<unsigned char, 32>' has
no member named 'unpack'`` (``v.unpack()``)."""
_UNDECLARED = re.compile(_QUOTED + r" (?:was not declared in this scope|does not name a type)")

_NATIVE_TYPE = r"v\d+(?:u?int\d+|cint\d+|acc\d+|cacc\d+|accfloat|bfloat16|float|bfp\w+)"
"""AIE2's native vector and accumulator types (``v16int32``, ``v32acc32``, ``v16cint16``), as
llvm-aie's intrinsic headers name them and every intrinsic on them carries them."""
INTRINSIC = re.compile(
    r"(?:\w+_)?" + _NATIVE_TYPE + r"(?:_\w+)?"  # a type, or undef_/set_/ups_to_... of one
    r"|(?:neg|add|sub)?(?:mul|mac|msc)_(?:elem|conv|\d+x\d+)\w*"  # mac_elem_16_2, mul_4x8_8x4
    r"|(?:l|s|ul|us)?srs(?:_\w+)?|ups(?:_\w+)?"  # shift-round-saturate, upshift: bare or _to_
    r"|shuffle|shiftx?|shift_bytes|sel|ext_elem|upd_elem|extract_elem"
    r"|broadcast_(?:zero_)?(?:to_|elem|[suc]\d+|bfloat16|float)\w*"
    r"|(?:get|put)_(?:scd|mcd|ss|ms)\w*|fifo_(?:ld|st)\w*"  # cascade, streams, the load fifo
    r"|T\d+_\d+x\d+\w*")  # shuffle modes: T32_16x16, T16_32x2_lo
"""The names of AIE2 intrinsics, as llvm-aie's ``aiev2_*.h`` headers spell them: what a kernel
may call beside the AIE API, and the host header models only some of (``host_native.hpp``).
A name matching none of these is the kernel's own (a typo, a missing include)."""

_MISSING_HEADER = re.compile(r"fatal error: (aie_api/[\w./-]+): No such file or directory")
"""g++ on an AIE API header the host stand-in does not have: ``fatal error:
aie_api/utils.hpp: No such file or directory`` (it stops at the first)."""
_MISSING_ANY = re.compile(r"fatal error: ([\w./-]+): No such file or directory")
"""g++ on any header it cannot find (it stops at the first)."""
RUNTIME_HEADERS = ("vec_math.h", "lut_based_ops.h", "lut_based_ops.cpp")
"""Files of mlir-aie's runtime library that kernels include with ``<...>``: mlir-aie installs
them as ``aie_runtime_lib/AIE2/<name>`` and ``aie_runtime_lib/AIE2P/<name>``
(``aie_runtime_lib/CMakeLists.txt``, ``add_aie_runtime_libs``: ``INSTALLS``), and its kernel
builds add that folder to Peano's include path, as aiedsl's Peano compile does
(:func:`aiedsl.toolchain.commands.runtime_lib_include`; mlir-aie's ``aie_kernels/aie2/rms_norm.cc``
includes ``<vec_math.h>``, ``softmax.cc`` ``<lut_based_ops.h>``, whose tables
``lut_based_ops.cpp`` defines). Not the AIE API's, nor Peano's own, and not the host build's:
aiedsl's host stand-in for the AIE API is no mlir-aie install, and ``lut_based_ops.h`` is
written with ``aie::lut``, ``aie::parallel_lookup`` and native types it does not model."""
_NO_MATCH = re.compile(r"no matching function for call to [‘'](?:aie::)?((\w+)(?:<[^’']*>)?"
                       r"\([^’']*\))[’']")
"""g++ on a call no overload takes: ``no matching function for call to
'to_fixed<int16_t>(const float&, int)'``: the call as g++ shows it, and the function's name."""
_CONTEXT = re.compile(r": In (?:static )?(?:member )?(?:function|instantiation of) "
                      r"[‘']([^’']*)[’']:$")
"""The head g++ writes before the errors inside a function: ``k.cc: In function 'void sm(const
int16_t*, int16_t*)':``, ``In instantiation of 'void f(...) [with unsigned int N = 64]':``."""
_OPERATOR = re.compile(r"static assertion failed: aiedsl host header: aie::operators' "
                       r"(operator\S+) calls (aie::\w+), which the header lacks")
"""An operator of the host ``aie_api/operators.hpp`` whose aie:: function the host header lacks
for its operands (an accumulator plus an accumulator): the operator and the function."""
_OPERANDS = re.compile(r"In instantiation of [‘']constexpr auto aie::operators::operator\S+?"
                       r"\([^’']*\) \[with ([^’']*)\][’']")
"""The operand types g++ names where such an operator failed: ``T1 = aie::accum<acc64, 16>;
T2 = aie::accum<acc64, 16>``."""

_UNCLOSED = re.compile(r"expected [‘']\}[’'] at end of input[^\n]*\n(?:.*\n)*?"
                       r"(\S+):(\d+):\d+: note:\s+to match this [‘']\{[’']")
"""g++ on a file that ends inside a brace: ``expected '}' at end of input``, then the ``note:
to match this '{'`` naming where the brace was opened (its file and line, as mapped back)."""
_REDEFINED = re.compile(r"redefinition of [‘'](?:[\w:<>,* ]+ )?(\w+)\(")
"""g++ on a function defined twice: ``redefinition of 'void f(int*)'``."""
_RULE = re.compile(r"static assertion failed: aie::(vector|accum|mmul|exp2|tanh): (.*)")
"""A rule of the AIE API the host header asserts: a size of a type (``host_core.hpp``), or what
``aie::exp2`` and ``aie::tanh`` take and where (``host_lanes.hpp``); the type or function and the
rule's words."""
_NLF_WITH = re.compile(r"In instantiation of [‘']auto aie::(?:exp2|tanh)\(const V&\) "
                       r"\[with TR = ([^;’']+); V = ([^;’'\]]+)")
"""Where such a function's rule failed: its TR and argument type."""
_INSTANCE = re.compile(r"In instantiation of [‘'](?:struct |class )?(aie::(\w+)<[^’']*>)[’']")
"""The type g++ was making when the assertion failed: ``aie::vector<int, 12>``."""
_RULE_FIX = {
    "vector": "use a power-of-two number of lanes of at least 128 bits (4 int32, 8 int16 or "
              "bfloat16, 16 int8 ...)",
    "accum": "use a power-of-two number of lanes, at least 8 of acc32 and 4 of acc64 or "
             "accfloat",
    "mmul": "use one of the AIE API's mmul modes for the types on the design's device "
            "(listed in kernels_cpp/host/aie_api/host_core.hpp)",
}


def provided_headers() -> list[str]:
    """The AIE API headers the host stand-in has (``aie_api/aie.hpp``,
    ``aie_api/operators.hpp``): its ``aie_api`` folder's headers but its own parts
    (``host_*.hpp``, which ``aie.hpp`` includes)."""
    from aiedsl.kernels.paths import KERNELS_CPP

    return [f"aie_api/{p.name}" for p in sorted((KERNELS_CPP / "host" / "aie_api").glob("*.hpp"))
            if not p.name.startswith("host_")]


def redefined(stderr: str, symbols: Sequence[str]) -> list[str]:
    """Which of ``symbols`` (generated ``extern "C"`` entries) g++ says are defined twice."""
    return sorted({n for n in _REDEFINED.findall(stderr) if n in symbols})


def explain(stderr: str, label: str, header: object, symbols: Sequence[str] = (),
            source: str = "", callees: Sequence[tuple[str, str]] = ()) -> tuple[str, str]:
    """The message and the fix for kernel ``label`` whose host build wrote ``stderr`` (g++'s
    output); ``header`` is the host AIE API header, whose head lists what it covers;
    ``symbols`` are the kernels whose ``extern "C"`` entries the file generates, ``source``
    names the C++ file they come from and ``callees`` pairs each with the function of the file
    it runs (:attr:`~aiedsl.kernels.text.KernelText.callees`).

    An AIE API header the stand-in does not have (``<aie_api/utils.hpp>``: g++ stops there) is
    named, and so is a header of mlir-aie's runtime library (:data:`RUNTIME_HEADERS`) and an
    ``aie::operators`` operator whose aie:: function the header lacks for its operands (its
    static assertion in ``operators.hpp``); AIE API names it lacks (``'reverse' is not a member
    of 'aie'``), calls of an AIE API function none of its forms in the header takes (``no
    matching function for call to 'to_fixed<int16_t>(const float&, int)'``: the AIE API may
    have that form) and undeclared names that are AIE2 intrinsics (:data:`INTRINSIC`) are named,
    each in the function of the file g++ found it in when that is not a kernel's own (the whole
    file is compiled for each kernel: a function of it no kernel calls fails them all); a
    generated entry the source defines itself (which ``aiedsl check`` finds unless the text
    cannot say: :mod:`aiedsl.kernels.cscan`) is said so; any other failure is the kernel's own,
    and the message only says that it does not compile (the compiler's lines show why)."""
    unclosed = _UNCLOSED.search(stderr)
    if unclosed and not unclosed[1].startswith("kernels/"):  # a brace of the user's file
        where, line = unclosed[1], unclosed[2]
        return (f"{where} ends inside the '{{' its line {line} opens, which no '}}' closes: the "
                "extern \"C\" entries aiedsl generates after the source are read inside it "
                "(g++'s errors at lines of kernels/, the generated file, follow from that)",
                f"add the missing '}}' to {where} (the '{{' of its line {line} is not closed)")
    twice = redefined(stderr, symbols)
    if twice:
        return (f"the source defines {listed(twice)} itself, and the generated extern \"C\" "
                f"entry of the kernel of that name defines {'it' if len(twice) == 1 else 'them'}"
                " again", "leave entry= out to call the source's own function as it is, or "
                "name the kernel for what its entry= computes (put the shape in the symbol)")
    # one file built for several kernels: its code is theirs together, not each one's
    subject = f"the C++ of {label}" if " and " in label else label
    npu = "or test the kernel on an NPU (aiedsl run DESIGN --target npu)"
    missing = _MISSING_HEADER.search(stderr)
    if missing:  # g++ stops there: nothing after it says anything of the kernel
        provided = listed(provided_headers())
        return (f"{subject} includes <{missing[1]}>, an AIE API header that aiedsl's host "
                "stand-in for the AIE API does not provide, so it cannot be tested on the host",
                f"the host stand-in provides {provided} (the AIE API names listed at the top of "
                f"{header}): include those for what the kernel uses, {npu}")
    runtime = _MISSING_ANY.search(stderr)
    if runtime and runtime[1] in RUNTIME_HEADERS:
        name = runtime[1]
        return (f"{subject} includes <{name}>, a file of mlir-aie's runtime library, not of "
                f"the AIE API: an mlir-aie install has it as aie_runtime_lib/AIE2/{name} and "
                f"aie_runtime_lib/AIE2P/{name}. aiedsl's Peano compile (build.sh, --compile) "
                "adds the folder of the kernel's architecture to its include path, as IRON's "
                "does, so the kernel compiles for the NPU as it is; aiedsl's host build has no "
                "mlir-aie install, so `aiedsl kernel test`, `kernel profile` and `sim --kernels "
                "native` cannot run this kernel's C++",
                "test the design with the kernel's numpy reference in the simulator (aiedsl sim "
                "DESIGN: --kernels reference is the default) and on an NPU (aiedsl run DESIGN "
                f"--target npu); to test the C++ on the host too, define what the kernel uses "
                f"from <{name}> in {source or 'its C++ file'} itself (copied from that file of "
                "your mlir-aie install, or written with the AIE API names the host header "
                f"covers, listed at the top of {header}) and remove the #include")
    operator = _OPERATOR.search(stderr)
    if operator:
        operands = _OPERANDS.search(stderr)
        on = f" (here {operands[1]})" if operands else ""
        return (f"{subject} uses aie::operators' {operator[1]} on operands for which aiedsl's "
                f"host AIE API header has no {operator[2]}{on}, so it cannot be tested on the "
                "host", f"write it with the AIE API names the host header covers (listed at "
                f"the top of {header}), {npu}")
    named = sorted(set(_NOT_IN_AIE.findall(stderr)))
    # a name of the AIE API the header lacks, or no AIE API name at all (a typo: g++'s own
    # suggestion is passed on; it would not compile with Peano either)
    api = [n for n in named if n in AIE_API_NAMES]
    typos = [n for n in named if n not in AIE_API_NAMES]
    # a member of the AIE API's classes spelled as one of its functions (v.unpack() for
    # aie::unpack(v)): the header lacks it as it lacks the function (a member it does not name
    # may be a typo: g++'s own words stand then)
    members = sorted({(cls, n) for cls, n in _NO_MEMBER.findall(stderr) if n in AIE_API_NAMES})
    raw = sorted({n for n in _UNDECLARED.findall(stderr) if INTRINSIC.fullmatch(n)})
    forms = _missing_forms(stderr)
    covered = f"the host header covers the AIE API names listed at the top of {header}"
    rule = _RULE.search(stderr)
    errors = _error_functions(stderr)
    own = {f for _, f in callees} | set(symbols)  # their functions, and their entries

    def elsewhere(pattern: str) -> str | None:
        """The function of the file the first error matching ``pattern`` is in, if g++ says
        and it is none of the kernels' own (None: theirs, or not known)."""
        found = [f for line, f in errors if re.search(pattern, line)]
        return found[0] if found and found[0] is not None and own and found[0] not in own \
            else None

    if typos:
        spots = {elsewhere(rf"[‘']{n}[’'] is not a member") for n in typos}
        if len(spots) == 1 and None not in spots and not api and not raw:
            subject = f"{source}'s function {spots.pop()}"
        return _misspelled(subject, typos, dict(_DID_YOU_MEAN.findall(stderr)), api, raw,
                           covered)
    if rule and not api and not raw and not forms:
        kind, words = rule.groups()
        reason, _, fix = words.partition("; use ")
        if kind in ("exp2", "tanh"):  # what the function takes, or where it exists
            w = _NLF_WITH.search(stderr)
            here = f" (here TR = {w[1]}, its argument {w[2]})" if w else ""
            return (f"{subject} calls aie::{kind}{here} in a form the AIE API does not provide: "
                    f"{reason}", f"use {fix}")
        # a size the AIE API does not have either: the type g++ was making when it failed
        made = [t for t, k in _INSTANCE.findall(stderr) if k == kind]
        what = made[0] if made else f"an aie::{kind}"
        if kind == "mmul" and fix:  # a mode the AIE API has with a sparse B only
            return (f"{subject} uses {what} with a dense B, which the AIE API does not have: "
                    f"{reason}", f"use {fix}")
        fix = _RULE_FIX[kind]
        if kind == "mmul":
            fix = mmul_modes_fix(stderr, what) or fix
            words = words.replace("on this architecture (__AIE_ARCH__)",
                                  f"on {mmul_arch(stderr) or 'this architecture (__AIE_ARCH__)'}")
        return f"{subject} uses {what}, which the AIE API does not have: {words}", fix
    if not api and not raw and not forms and not members:
        return f"{label} does not compile on the host", f"fix the C++; {covered}"
    # each name where it is: the kernels' own code (None), or another function of the file
    found: list[tuple[str | None, str, str]] = []
    found += [(elsewhere(rf"[‘']{n}[’'] is not a member of"), "api", f"aie::{n}") for n in api]
    found += [(elsewhere(rf"has no member named [‘']{n}[’']"), "api",
               f"aie::{cls}'s member {n}()") for cls, n in members]
    found += [(elsewhere(rf"[‘']{n}[’'] (?:was not declared|does not name)"), "raw", n)
              for n in raw]
    found += [(elsewhere(re.escape(call)), "form", call) for call, _ in forms]
    places = list(dict.fromkeys(f for f, _, _ in found))
    said = []
    for place in places:
        parts = _parts([(k, w) for f, k, w in found if f == place], forms)
        said.append(f"{subject if place is None else f'its function {place}'} uses "
                    f"{'; and '.join(parts)}")
    if places == [None]:
        message = f"{said[0]}, so it cannot be tested on the host"
    else:
        message = (f"{source} does not compile on the host, so {label} cannot be tested there: "
                   + "; ".join(said))
    fixes = []
    if raw:
        # an intrinsic has no AIE API spelling the header could add on its own: the kernel can
        # be rewritten in API terms, or run where the intrinsic exists
        fixes.append(f"write {'it' if len(raw) == 1 else 'them'} with the AIE API ({covered}), "
                     f"{npu}")
    elif api or members:
        fixes.append(f"write {'it' if len(api) + len(members) == 1 else 'them'} with the AIE "
                     "API names the "
                     f"host header covers (listed at the top of {header}), {npu}")
    if forms:
        calls = "the call" if len(forms) == 1 else "those calls"
        fixes.append(f"if Peano compiles {calls}, the gap is the host header's, not the C++'s: "
                     "check the kernel on an NPU (aiedsl run DESIGN --target npu), or the "
                     "design with its numpy references in the simulator (aiedsl sim DESIGN: "
                     "--kernels reference is the default); if not, pass "
                     f"{listed(sorted({f'aie::{n}' for _, n in forms}))} arguments of a form "
                     "the AIE API has")
    others = [p for p in places if p is not None]
    if others:
        mine = sorted({f for _, f in callees})
        fixes.append(f"or put {listed(mine)}, which {label} "
                     f"{'call' if ' and ' in label else 'calls'}, in a file without "
                     f"{listed(others)} (the whole file is compiled for each kernel declared "
                     "from it)")
    return message, "; ".join(fixes)


def _parts(found: list[tuple[str, str]], forms: list[tuple[str, str]]) -> list[str]:
    """What :func:`explain` says of the names ``found`` in one place, as (kind, what) pairs:
    ``api`` an AIE API name the host header lacks, ``raw`` an intrinsic, ``form`` a call (as
    g++ shows it) of an AIE API function none of whose forms in the header takes it; ``forms``
    pairs each such call with the function's name."""
    api = [w for k, w in found if k == "api"]
    raw = [w for k, w in found if k == "raw"]
    parts = []
    if api:
        parts.append(f"{listed(api)}, which aiedsl's host AIE API header does not cover")
    if raw:
        what = "a raw AIE2 intrinsic" if len(raw) == 1 else "raw AIE2 intrinsics"
        parts.append(f"{listed(raw)}, {what} that aiedsl's host AIE API header does not "
                     "model")
    name = dict(forms)
    for call in (w for k, w in found if k == "form"):
        parts.append(f"aie::{call}, a call that no form of aie::{name[call]} in aiedsl's host "
                     "AIE API header takes (the AIE API may have one it lacks)")
    return parts


def _missing_forms(stderr: str) -> list[tuple[str, str]]:
    """The calls g++ found no matching function for where every candidate it lists is a function
    of the AIE API in namespace ``aie`` (the host header's forms of it): (the call as g++ shows
    it, ``to_fixed<int16_t>(const float&, int)``, and the function's name), once each."""
    out: dict[str, str] = {}
    for block in re.split(r"\n(?=[^\n]*\berror:)", stderr):
        m = _NO_MATCH.search(block)
        if m is None or m[2] not in AIE_API_NAMES:
            continue
        candidates = re.findall(r"candidate(?: \d+)?: [‘']([^’']*)[’']", block)
        if candidates and all(re.search(rf"\baie::{m[2]}\(", c) for c in candidates):
            out.setdefault(m[1], m[2])
    return list(out.items())


def _error_functions(stderr: str) -> list[tuple[str, str | None]]:
    """Each ``error:`` line of g++'s output ``stderr`` with the function its ``In function
    ...`` (or ``In instantiation of ...``) head names: the function's own name (``sm`` of
    ``void sm(const int16_t*, int16_t*)``), or None before any such head and under one of a
    function of the AIE API (``auto aie::exp2(const V&)``: not where the file's code is)."""
    out: list[tuple[str, str | None]] = []
    current: str | None = None
    for line in stderr.splitlines():
        head = _CONTEXT.search(line)
        if head is not None:
            sig = head[1]
            m = re.search(r"(\w+)(?:<[^()]*>)?\(", sig)
            current = None if m is None or re.search(r"\baie::(?:\w+::)*$", sig[:m.start(1)]) \
                else m[1]
        elif "error:" in line:
            out.append((line, current))
    return out


def _misspelled(subject: str, typos: list[str], suggested: dict[str, str], api: list[str],
                raw: list[str], covered: str) -> tuple[str, str]:
    """The message and fix for C++ ``subject`` naming ``typos``, ``aie::`` names the AIE API
    does not have (:data:`~aiedsl.kernels.aie_api_names.AIE_API_NAMES`), each with the name g++
    ``suggested`` if any; and, said after them, the AIE API names (``api``) and intrinsics
    (``raw``) the host header lacks."""
    def shown(n: str) -> str:
        return f"aie::{n} (g++: did you mean aie::{suggested[n]}?)" if n in suggested \
            else f"aie::{n}"

    one = len(typos) == 1
    parts = [f"{listed([shown(n) for n in typos])}, which {'is' if one else 'are'} not "
             f"{'a name' if one else 'names'} of the AIE API (it would not compile with Peano "
             "either)"]
    if api:
        parts.append(f"{listed([f'aie::{n}' for n in api])}, which aiedsl's host AIE API "
                     "header does not cover")
    if raw:
        what = "a raw AIE2 intrinsic" if len(raw) == 1 else "raw AIE2 intrinsics"
        parts.append(f"{listed(raw)}, {what} that aiedsl's host AIE API header does not "
                     "model")
    fixes = [f"aie::{n}: aie::{suggested[n]}?" for n in typos if n in suggested]
    guess = f" ({'; '.join(fixes)})" if fixes else ""
    return (f"{subject} uses {'; and '.join(parts)}",
            f"correct the name{'' if one else 's'}{guess}, as the AIE API's documentation or "
            f"mlir-aie's include/aie_api/aie.hpp spells {'it' if one else 'them'}; {covered}")
