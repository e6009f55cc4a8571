"""Shell text from words: :func:`shell_line` is the one function that quotes a command for a
shell, whether ``build.sh`` runs it or a message tells the user to paste it.

A word is a plain string (quoted whole, so no text a user gave becomes shell code) or a word
the script itself expands (:class:`EnvWord`, :class:`ArrayWords`, or any object with a
``shell()`` method, as :class:`aiedsl.toolchain.commands.AieccScript` is).

>>> print(shell_line(["echo", "a b", "$(touch x)", EnvWord("", "HOME", "/x y")]))
echo 'a b' '$(touch x)' "$HOME"'/x y'
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, Union


class Expanded(Protocol):
    """A word the shell expands: its ``shell()`` is the text written as it is."""

    def shell(self) -> str:
        """The word as shell text."""
        ...


@dataclass(frozen=True)
class EnvWord:
    """A command word that starts from an environment variable ``build.sh`` expands:
    ``EnvWord("-I", "MLIR_AIE_INSTALL_DIR", "/include")`` is ``-I"$MLIR_AIE_INSTALL_DIR"/include``.

    Only these words (and :class:`ArrayWords`) expand anything; every other word is quoted whole,
    so no text a user gave can become shell code.
    """

    prefix: str
    var: str
    suffix: str

    def shell(self) -> str:
        """The word as shell text: the variable double-quoted, the rest single-quoted."""
        parts = [shlex.quote(self.prefix) if self.prefix else "", f'"${self.var}"',
                 shlex.quote(self.suffix) if self.suffix else ""]
        return "".join(parts)


@dataclass(frozen=True)
class ArrayWords:
    """The words of a bash array ``build.sh`` filled itself (zero or more words, each kept whole;
    written so that ``set -u`` accepts an empty array on bash before 4.4)."""

    var: str

    def shell(self) -> str:
        """The array's words as bash expands them."""
        return f'${{{self.var}[@]+"${{{self.var}[@]}}"}}'


Word = Union[str, Expanded]


def shell_line(argv: Sequence[Word]) -> str:
    """One shell command line: every string quoted whole, expanded words as they are written."""
    return " ".join(shlex.quote(w) if isinstance(w, str) else w.shell() for w in argv)


def argv_strings(argv: Sequence[Word]) -> list[str]:
    """``argv`` for running directly (no shell): every word must already be a plain string."""
    out = []
    for w in argv:
        if not isinstance(w, str):
            raise ValueError(f"{w} needs the shell to expand it: pass the words found")
        out.append(w)
    return out
