"""The front end: the Python constructs a design file is written with.

Each construct lives in the module named for it (``aiedsl.lang.fifo``, ``aiedsl.lang.channel``,
...). This package re-exports none of them, so a module's name never gives way to the function
it defines; a design file imports them from :mod:`aiedsl`.
"""
