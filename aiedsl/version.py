"""aiedsl's version: one place, imported by everything that stamps generated files."""

__version__ = "0.1.0"
