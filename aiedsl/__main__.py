"""``python -m aiedsl ...`` is the ``aiedsl`` command."""

from aiedsl.cli.entry import run

run()
