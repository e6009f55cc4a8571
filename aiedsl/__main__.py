"""``python -m aiedsl ...`` is the ``aiedsl`` command."""

from aiedsl.cli.process import run

run()
