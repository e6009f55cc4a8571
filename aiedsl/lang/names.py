"""Every text a user gives that reaches a file name, a shell line, MLIR or C++ is checked here,
where it is given.

Names (designs, herds, fifos, channels, host tensors, defines, kernel symbols) become MLIR
symbols, C function names and file names at once, so they are plain ASCII identifiers. Kernel
``entry=`` expressions, ``source=`` paths and one-line texts (``cost=``, string defines) have
forms of their own. Templates escape what they print as well; this is the first line.

Example
-------
>>> check_name("gemm_bf16", "design name", Loc(file="d.py", line=3))
'gemm_bf16'
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import PurePath

from aiedsl.errors import DesignError
from aiedsl.ir.loc import Loc
from aiedsl.values import as_int

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
MAX_NAME = 200
"""Longest name: a kernel symbol becomes ``<symbol>.cc`` and ``<symbol>.o`` (255-byte names)."""
NAME_FORM = ("ASCII letters, digits and _, not starting with a digit, at most "
             f"{MAX_NAME} characters (it becomes an MLIR symbol, a C name and a file name)")

CPP_KEYWORDS = frozenset("""
alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t char16_t
char32_t class compl concept const consteval constexpr constinit const_cast continue co_await
co_return co_yield decltype default delete do double dynamic_cast else enum explicit export
extern false float for friend goto if inline int long mutable namespace new noexcept not not_eq
nullptr operator or or_eq private protected public register reinterpret_cast requires return
short signed sizeof static static_assert static_cast struct switch template this thread_local
throw true try typedef typeid typename union unsigned using virtual void volatile wchar_t while
xor xor_eq
""".split())
"""C++20's keywords: never a name (a kernel's, a fifo's, or a C++ declaration's)."""

_CPP_TYPES = frozenset("""
int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t size_t ptrdiff_t intptr_t
uintptr_t bfloat16 float16 std aie
""".split())
"""Names the generated ``extern "C"`` function and the AIE API headers use as types or scopes: an
argument named so would hide the type it is declared with."""

_C_LIBRARY = frozenset("""
abs labs llabs div fabs fabsf sqrt sqrtf cbrt exp expf exp2 expm1 log logf log2 log10 log1p pow
powf sin sinf cos cosf tan tanf asin acos atan atan2 sinh cosh tanh floor floorf ceil ceilf round
roundf trunc fmod fmin fmax fminf fmaxf fma hypot erf erfc tgamma lgamma ldexp frexp modf nan
memcpy memmove memset memcmp memchr strlen strcpy strncpy strcat strncat strcmp strncmp strchr
strrchr strstr strtok malloc calloc realloc free aligned_alloc exit abort atexit atoi atol atof
strtol strtoul strtod rand srand qsort bsearch getenv system printf fprintf sprintf snprintf puts
putchar getchar scanf sscanf fopen fclose fread fwrite assert select pselect random srandom
drand48 atoll strtoll strtoull ldiv lldiv setenv unsetenv realpath mkstemp
""".split())
"""C library functions the kernels' headers declare: an ``extern "C"`` kernel of the same name
conflicts with the declaration (g++: "conflicting declaration of C function")."""

_QUALIFIED = r"[A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*)*"
_ENTRY_NAME = re.compile(_QUALIFIED)
_ENTRY_TOKEN = re.compile(r" *(?:(?P<word>[A-Za-z_][A-Za-z0-9_]*|::|[<>(),*&])"
                          r"|(?P<int>[+-]?(?:0[xX][0-9A-Fa-f]+|0[bB][01]+|[0-9]+)[uUlLzZ]*"
                          r"(?![A-Za-z0-9_])))")
"""One word of an entry's template arguments: a name, ``::``, a bracket, ``,``, ``*``, ``&``,
or an integer literal (a sign, a base, a suffix)."""
ENTRY_FORM = ("a C++ function name, optionally qualified (ns::f), with template arguments that "
              "end it (f<int16_t, 64>), on one line: each a type, an integer or a name, with ::, "
              "*, & and nested <> or () (static_cast<unsigned>(64))")
SOURCE_SUFFIXES = (".cc", ".cpp", ".cxx", ".c", ".h", ".hpp")
SOURCE_FORM = ("a relative path to a C++ file (" + ", ".join(SOURCE_SUFFIXES) + ") beside the "
               "design or in kernels_cpp/, without '..'")


def decorated_name(fn: object, name: object, kind: str, example: str, loc: Loc | None) -> str:
    """The name a decorated function gives the ``kind`` it declares (a herd, a design):
    ``name=`` when given, else the function's own, checked as a name. A lambda has no name of
    its own (Python calls every one ``<lambda>``): ``example`` is the call that names it
    (``herd(name="core")``)."""
    if name is None and getattr(fn, "__name__", None) == "<lambda>":
        raise DesignError(
            "name", f"the {kind}'s function is a lambda, which has no name to give the {kind}",
            loc=loc, limit=f"a {kind} is named after its function, or by name=", found="<lambda>",
            fix=f"name it: {example}(lambda ...), or write the function with def")
    if name is None and not isinstance(getattr(fn, "__name__", None), str):
        what = type(fn).__name__  # a functools.partial, a callable object
        raise DesignError(
            "name", f"the {kind}'s function is a {what}, which has no name to give the {kind}",
            loc=loc, limit=f"a {kind} is named after its function, or by name=", found=what,
            fix=f"name it: {example}(...)")
    return check_name(name if name is not None else getattr(fn, "__name__", None),
                      f"{kind} name", loc)


def check_name(value: object, what: str, loc: Loc | None) -> str:
    """``value`` if it is a plain ASCII identifier, else a DesignError naming the allowed form."""
    if isinstance(value, str) and _IDENTIFIER.match(value) and len(value) <= MAX_NAME:
        return value
    raise DesignError("name", f"{what} {_shown(value)} is not a plain name", loc=loc,
                      limit=NAME_FORM, found=_shown(value),
                      fix=f"rename it, e.g. {_suggest(value)}")


_DEVICE_VALUE = re.compile(r"(?:tile|core)_\d+_\d+\Z|(?:rtp|lock|local)_")


def check_tensor_name(value: object, loc: Loc | None) -> str:
    """A host tensor's name: a plain name that is none of the values the generated MLIR defines
    in the device (``%tile_0_2``, ``%core_0_2``, ``%rtp_<name>``, ``%lock_<name>``,
    ``%local_<name>``), since it becomes an argument of the runtime sequence inside it, and
    mlir-aie's parser refuses an argument named like a value already defined."""
    name = check_name(value, "host tensor", loc)
    if _DEVICE_VALUE.match(name):
        raise DesignError("name", f"host tensor '{name}' is named like a value aiedsl's MLIR "
                          "defines for the device", loc=loc,
                          limit=NAME_FORM + ", not tile_C_R, core_C_R, or starting rtp_, "
                          "lock_ or local_", found=name,
                          fix=f"rename it, e.g. {name.replace('_', '', 1)}")
    return name


def check_symbol(value: object, loc: Loc | None,
                 headers: Callable[[str], bool] | None = None) -> str:
    """A kernel's C symbol: a plain name the generated ``extern "C"`` function can take, so none
    a C++ keyword, a C library function, a type or namespace the kernels' headers declare (and
    a type or macro ``headers`` says the AIE API's or Peano's headers declare at the global
    scope: :func:`~aiedsl.kernels.aie_names.aie_name`, given by the kernels package, which
    imports this module), or a macro the compiles define (each makes C++ that does not
    compile)."""
    name = check_name(value, "kernel symbol", loc)
    clash = ("a C++ keyword" if name in CPP_KEYWORDS else
             "the name of a C program's entry point" if name == "main" else
             "a C library function" if name in _C_LIBRARY else
             "a type or namespace the kernels' C++ uses" if name in _CPP_TYPES else
             "a type or macro the AIE API or Peano's headers declare at the global scope"
             if headers is not None and headers(name) else
             "a macro the kernel compiles define" if name in RESERVED_DEFINES else
             "reserved for the compiler and its library (it starts with __, or _ and a "
             "capital)" if reserved_macro(name) else None)
    if clash:
        raise DesignError("name", f"kernel symbol '{name}' is {clash}", loc=loc,
                          limit=NAME_FORM + ", not a C++ keyword, main, a C library function, "
                          "a type or namespace the C++ uses (std, aie, int32_t, v16int32), "
                          "NDEBUG, or a name starting __ or _ and a capital",
                          found=name, fix=f"put the kernel's shape in it, e.g. "
                          f"{name.lstrip('_') or 'kernel'}_i32_1024")
    return name


def check_argument(name: str, symbol: str, entry: str | None, loc: Loc | None) -> None:
    """A kernel argument's name, which the generated ``extern "C"`` function declares and passes
    on: not a C++ keyword, a type it uses, nor the name of the function itself or of the one it
    calls (each would hide or break the other). ``entry`` None: the source's own function."""
    called = symbol if entry is None else entry.split("<", 1)[0].rsplit("::", 1)[-1]
    clash = ("a C++ keyword" if name in CPP_KEYWORDS else
             "a C++ type name" if name in _CPP_TYPES else
             "the kernel's own symbol" if name == symbol else
             f"the function it calls ({entry})" if name == called else None)
    if clash:
        raise DesignError("name", f"argument '{name}' of kernel '{symbol}' is {clash}", loc=loc,
                          limit="a name the generated C++ can declare: not a C++ keyword, a "
                          "type, or the kernel's or its entry's name", found=name,
                          fix=f"rename it, e.g. {name}_buf")


def _entry_problem(value: str) -> str | None:
    """Why ``value`` is no ``entry=`` (:data:`ENTRY_FORM`), None when it is one: a name, then
    at most one template argument list, which must end the text. The generated C++ calls
    ``<entry>(<arguments>)``: an argument list closed before the end (``f<8>(0, 0), f<8>``)
    would make the text after it C++ of its own, a second call. Within the list, brackets
    nest (a ``>`` closes the innermost ``<``, a ``)`` its ``(``), and only names, integers,
    ``::``, ``,``, ``*`` and ``&`` come between them: no operator, string or ``;``. The ``()``
    are those of an argument the compiler evaluates, ``static_cast<unsigned>(64)`` or
    ``decltype(1)``: inside the list, they cannot end the call."""
    name = _ENTRY_NAME.match(value)
    if name is None:
        return "it does not start with a name"
    at = name.end()
    if at == len(value):
        return None
    if value[at] != "<":
        return f"{_shown(value[at:])} follows the name"
    open_: list[str] = []
    last = ""
    while at < len(value):
        token = _ENTRY_TOKEN.match(value, at)
        if token is not None and token.group("int") and token.group("int")[0] in "+-" \
                and last not in ("<", "(", ","):
            token = None  # a sign starts an argument: N-1 is arithmetic, no integer
        if token is None:
            at += len(value[at:]) - len(value[at:].lstrip(" "))
            bad = re.match(r"[A-Za-z0-9_.]+|.", value[at:], re.S)
            return f"{_shown(bad[0] if bad else '')} at character {at + 1} is not a name, an " \
                   "integer or one of :: , * & < > ( ) in a template argument"
        word, at = token.group("word"), token.end()
        last = word or "0"
        if word in ("<", "("):
            open_.append(word)
        elif word in (">", ")"):
            if not open_ or open_.pop() != {">": "<", ")": "("}[word]:
                return f"the {word!r} at character {at} closes no {'<' if word == '>' else '('}"
            if not open_ and at < len(value):
                return f"its template arguments end at character {at}, and " \
                       f"{_shown(value[at:])} follows them"
    return "its template arguments are not closed" if open_ else None


def entry_head(entry: str) -> str:
    """The function an ``entry=`` calls, as it spells it: ``ns::mm<bf16, 64>`` -> ``ns::mm``."""
    return entry.split("<", 1)[0].split("(", 1)[0].strip()


def check_entry(value: object, symbol: str, loc: Loc | None) -> str:
    """A kernel's ``entry=``: the C++ call the generated ``extern "C"`` function makes."""
    why = _entry_problem(value) if isinstance(value, str) else "it is not a string"
    if why is not None or not isinstance(value, str):
        raise DesignError("kernel entry", f"entry={_shown(value)} of kernel '{symbol}' is not a "
                          "C++ function name", loc=loc, limit=ENTRY_FORM,
                          found=f"{_shown(value)}: {why}",
                          fix="name the function (template) the kernel's C++ defines, e.g. "
                              "entry=\"scale<int16_t, 1024>\"")
    if value == symbol:  # explicit template arguments would pick the template instead
        raise DesignError("kernel entry", f"kernel '{symbol}' has entry={value!r}: the generated "
                          f"extern \"C\" function '{symbol}' would call itself", loc=loc,
                          limit="entry= names the C++ function that aiedsl's extern \"C\" "
                                f"'{symbol}' calls", found=value,
                          fix=f"name a C++ function of another name, e.g. entry=\"{symbol}_impl\" "
                              "or a template, entry=\"scale<int16_t, 1024>\"; aiedsl writes "
                              f"extern \"C\" '{symbol}' itself, so leave that out of the C++")
    return value


_DEFINE_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)"
                           r"(?:[eE][+-]?[0-9]+)?[A-Za-z0-9_]*")
"""A define's text value: one C identifier (``int16_t``) or one number literal (``8``, ``-1.5f``,
``0x40``, ``1e-5``): no spaces, quotes, parentheses or shell characters."""
MAX_DEFINE = 100
RESERVED_DEFINES = frozenset({"NDEBUG"})
"""Macros the kernel compiles set themselves that C does not reserve (Peano's and the host's
command lines): a kernel's own value would change what aiedsl compiles for every kernel. The
reserved names (:func:`reserved_macro`: ``__AIE_ARCH__``, ``__AIE_API_AIE_ADF_HPP__``,
``__cplusplus``) are the compiler's and its library's."""
DEFINE_INT = (-(2 ** 63 - 1), 2 ** 63 - 1)
"""The ints a define may have: what the C preprocessor's intmax_t holds (64 bits; -2**63 is
no literal: its digits alone are past the largest)."""
DEFINE_FORM = ("NAME: a C identifier, not a C++ keyword, not the compiler's (starting with "
               "__: __cplusplus, __AIE_ARCH__), nor NDEBUG, which the compiles set (a feature-"
               "test macro such as _GNU_SOURCE is the program's to set); VALUE: an int (within "
               "64 bits, as a number or a literal in a str), a finite float, or a str of one C "
               f"identifier or number literal (at most {MAX_DEFINE} characters)")


def reserved_macro(name: str) -> bool:
    """Does C reserve macro ``name`` for the compiler and its library (``__x``, ``_X``)?"""
    return name.startswith("__") or (name.startswith("_") and name[1:2].isupper())


def check_defines(value: object, symbol: str, loc: Loc | None) -> dict[str, int | float | str]:
    """A kernel's ``defines=``: the macros every compile of its C++ gets as ``-DNAME=VALUE``,
    sorted by name. Each becomes one word of a command line (quoted whole, never expanded), so
    a value is one C token, not text to paste."""
    if not isinstance(value, Mapping):  # declare() takes any mapping (a MappingProxyType)
        raise DesignError("kernel defines", f"kernel '{symbol}' has defines={_shown(value)}",
                          loc=loc, limit="a dict of NAME: VALUE", found=_shown(value),
                          fix="write e.g. defines={\"BIT_WIDTH\": 8}")
    out: dict[str, int | float | str] = {}
    for name in sorted(value, key=str):
        setting = value[name]
        bad_name = (not isinstance(name, str) or not _IDENTIFIER.match(name)
                    or len(name) > MAX_NAME or name in CPP_KEYWORDS or name in RESERVED_DEFINES
                    # the compiler's own (__cplusplus); _X names are the library's, but a
                    # program sets its feature-test macros (_GNU_SOURCE) itself
                    or name.startswith("__"))
        if bad_name:
            raise DesignError("kernel defines", f"kernel '{symbol}' defines {_shown(name)}, "
                              "which is not a macro name it may set", loc=loc, limit=DEFINE_FORM,
                              found=_shown(name), fix="name the macro the C++ reads (#ifndef "
                              "NAME / #if NAME == ...), e.g. defines={\"DIM_M\": 32}")
        number = _define_number(setting)
        # an integer written as text ("0xfff...") is held to the same range
        literal = _int_literal(number) if isinstance(number, str) else number
        if isinstance(literal, int) and not isinstance(literal, bool) and \
                not DEFINE_INT[0] <= literal <= DEFINE_INT[1]:
            raise DesignError(
                "kernel defines", f"kernel '{symbol}' defines {name} as {_shown(number)}",
                loc=loc, limit=f"an int from {DEFINE_INT[0]:,} to {DEFINE_INT[1]:,}: the C "
                "preprocessor computes #if in intmax_t (64 bits): a value outside is not "
                "read as written there, and the C++ may take another branch",
                found=_shown(number), fix=f"give {name} a value in that range")
        checked = _define_value(number)
        if checked is None:
            raise DesignError("kernel defines", f"kernel '{symbol}' defines {name} as "
                              f"{_shown(setting)}", loc=loc, limit=DEFINE_FORM,
                              found=_shown(setting),
                              fix=f"give one number or name, e.g. defines={{\"{name}\": 8}} "
                                  "(True and False: write 1 and 0)")
        out[name] = checked
    return out


def _define_number(value: object) -> object:
    """A numpy integer or float given as a define's value, as Python's int or float (what it
    writes as C); anything else as it is."""
    import numbers

    if isinstance(value, (bool, str)):
        return value
    # int and float subclasses too (np.float64 is a float): written as the plain number
    integer = as_int(value)
    if integer is not None:
        return integer
    if isinstance(value, numbers.Real):
        return float(value)
    return value


def _int_literal(text: str) -> int | None:
    """The integer a C integer literal ``text`` means (a sign, digit separators and suffixes
    aside), or None when it is not one."""
    import re

    m = re.fullmatch(r"([+-]?)(0[xX][0-9a-fA-F']+|0[bB][01']+|0[0-7']*|[1-9][0-9']*)[uUlL]*", text)
    if m is None:
        return None
    digits = m[2].replace("'", "")
    if digits[:2] in ("0x", "0X", "0b", "0B"):
        value = int(digits[2:], 16 if digits[1] in "xX" else 2)
    else:
        value = int(digits, 8 if digits.startswith("0") and len(digits) > 1 else 10)
    return -value if m[1] == "-" else value


def _define_value(value: object) -> int | float | str | None:
    """``value`` if it is a define's value (an int, a finite float, or one C token), else
    None."""
    import math

    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    ok = (isinstance(value, str) and len(value) <= MAX_DEFINE
          and _DEFINE_TOKEN.fullmatch(value) is not None)
    return value if ok and isinstance(value, str) else None


def define_flags(defines: Mapping[str, int | float | str]) -> list[str]:
    """The compiler words of checked ``defines`` (:func:`check_defines`), in name order:
    ``{"BIT_WIDTH": 8}`` -> ``["-DBIT_WIDTH=8"]``; a float as Python writes it (``0.5``,
    ``1e-05``), which C reads as the same double.

    >>> define_flags({"DIM_M": 32, "T": "int16_t", "EPS": 1e-05})
    ['-DDIM_M=32', '-DEPS=1e-05', '-DT=int16_t']
    """
    return [f"-D{name}={float(value)!r}" if isinstance(value, float) else f"-D{name}={value}"
            for name, value in sorted(defines.items())]


TEMPLATE_FORM = ("a relative path to a jinja2 template beside the design or in "
                 "aiedsl/kernels/templates/, without '..'")


def _source_name(value: str, template: bool) -> bool:
    """A relative file name inside its folder (no ``..``, ``~`` or absolute path): of C++
    unless ``template`` (a template's name may end as the user likes)."""
    path = PurePath(value) if value else None
    return not (path is None or path.is_absolute() or ".." in path.parts
                or value.startswith("~") or (not template and path.suffix not in SOURCE_SUFFIXES)
                or not value.isprintable())


def check_source(value: object, symbol: str, loc: Loc | None, *, template: bool = False) -> str:
    """A kernel's ``source=``: a relative C++ file name (``template``: a template's name) that
    cannot leave its folder."""
    if not isinstance(value, str) or not _source_name(value, template):
        what = "template name" if template else "C++ file name"
        raise DesignError("kernel source", f"source={_shown(value)} of kernel '{symbol}' is not "
                          f"a {what} aiedsl may read", loc=loc,
                          limit=TEMPLATE_FORM if template else SOURCE_FORM,
                          found=_shown(value), fix="put the " + (
                              "template next to the design and give its name, e.g. "
                              "source=\"my_kernel.cc.j2\"" if template else
                              "C++ file next to the design and give its name, e.g. "
                              "source=\"my_kernel.cc\""))
    if value.endswith(("/", "/.")):  # a path taken apart drops them, and finds a file
        tail = "/." if value.endswith("/.") else "/"
        name = value[:-len(tail)].rstrip("/")
        raise DesignError("kernel source", f"source={_shown(value)} of kernel '{symbol}' names a "
                          f"directory (it ends in '{tail}'), not a C++ file", loc=loc,
                          limit=TEMPLATE_FORM if template else SOURCE_FORM,
                          found=f"{_shown(value)}: a directory",
                          fix=f"name the C++ file in source=, without the '{tail}': "
                              f"source={_shown(name)} if that is the file, or "
                              f"source={_shown(name + '/<file>')} for one inside the directory")
    return value


def check_line(value: object, what: str, loc: Loc | None, *, limit: int = 500) -> str:
    """A one-line text (``cost=``, a string define): printable, no line breaks."""
    if isinstance(value, str) and value.isprintable() and len(value) <= limit:
        return value
    raise DesignError("text", f"{what} {_shown(value)} is not one line of printable text",
                      loc=loc, limit=f"printable characters on one line, at most {limit}",
                      found=_shown(value), fix="remove line breaks and control characters")


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _suggest(value: object) -> str:
    """A plain name like ``value``, for a fix: one that reads as a name where it is written too
    (no Python or C++ keyword: ``lambda`` would be no name for a ``def``)."""
    import keyword

    text = value if isinstance(value, str) else "name"
    ascii_ = re.sub(r"[^A-Za-z0-9_]", "_", text.encode("ascii", "ignore").decode())[:MAX_NAME]
    ascii_ = re.sub("_+", "_", ascii_).strip("_") or "name"
    ascii_ = ascii_ if not ascii_[0].isdigit() else f"n_{ascii_}"
    if keyword.iskeyword(ascii_) or ascii_ in CPP_KEYWORDS:
        ascii_ = f"{ascii_[:MAX_NAME - 2]}_1"
    return ascii_
