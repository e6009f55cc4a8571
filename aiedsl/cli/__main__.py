"""``python -m aiedsl.cli ...`` is the ``aiedsl`` command too (as ``python -m aiedsl`` is)."""

from aiedsl.cli.process import run

run()
