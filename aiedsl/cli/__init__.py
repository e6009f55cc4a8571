"""The ``aiedsl`` command line, one module per concern:

- :mod:`aiedsl.cli.entry`: the ``aiedsl`` command's first module, which loads the rest (a
  Ctrl-C while it loads ends as one during a command);
- :mod:`aiedsl.cli.process`: the program's entry points (``aiedsl``, ``python -m aiedsl``),
  signals, exit codes, and how an error or a usage mistake is printed;
- :mod:`aiedsl.cli.commands`: the commands (build, doctor, check, map, inspect, sim, run);
- :mod:`aiedsl.cli.kernel`: the ``kernel`` group (test, profile, cost);
- :mod:`aiedsl.cli.reports`: the tables and reports the commands print;
- :mod:`aiedsl.cli.run_stats`: a run's ``--stats`` JSON;
- :mod:`aiedsl.cli.progress`: the progress bars drawn while a build or a simulation runs;
- :mod:`aiedsl.cli.common`: the options several commands take, printing a line, loading a
  design.

Imports run down that list. This file imports nothing, so a module that needs only
:mod:`aiedsl.cli.common` (:mod:`aiedsl.cli.progress`) loads none of the commands.
"""
