"""``python -m aiedsl ...`` is the ``aiedsl`` command."""

from aiedsl.cli import run

run()
