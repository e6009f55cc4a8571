"""The build directory: what aiedsl owns and how it is replaced.

aiedsl never deletes or moves anything it did not write. Every directory it makes carries a
marker, ``.aiedsl-build.json``, listing every file and folder in it; a build refuses an output
directory holding anything else, and the working directory or one of its ancestors. A build is
replaced whole, never file by file: written beside the old one, in a staging directory that is
also the directory's lock, and swapped in by one rename. An interrupt or a crash leaves either
the old build or the new one, whole.

Its modules, each importing only those above it in this list:

- :mod:`~aiedsl.builddir.marker`: the marker, what it lists and what is foreign to it; writing
  and relisting it; the build directory a folder is in.
- :mod:`~aiedsl.builddir.removal`: removing a build of aiedsl's: only what its marker owns,
  the marker last.
- :mod:`~aiedsl.builddir.lock`: the staging directory as the lock: one build at a time in a
  directory, a killed build's leftovers told from a user's folder and removed.
- :mod:`~aiedsl.builddir.refuse`: what a build or a compile refuses before it touches anything.
- :mod:`~aiedsl.builddir.swap`: the atomic replacement: the old build's tool outputs carried
  into the new by hard links, the ``renameat2(RENAME_EXCHANGE)`` swap, and a compile's outputs
  moved in file by file.
- :mod:`~aiedsl.builddir.build`: what callers use: write a build
  (:func:`~aiedsl.builddir.build.write_build`, :func:`~aiedsl.builddir.build.building`), hold
  its lock (:func:`~aiedsl.builddir.build.held`, :func:`~aiedsl.builddir.build.sharing`), run
  tools on it (:func:`~aiedsl.builddir.build.compiling`,
  :func:`~aiedsl.builddir.build.tool_outputs`; the outputs go in by
  :func:`~aiedsl.builddir.swap.install_outputs`).
- :mod:`~aiedsl.builddir.outfile`: one output file written beside the work (``sim --trace``,
  ``--stats``), in a build directory or anywhere.

Nothing is imported here: a caller imports the module that holds the name, and importing one
(``outfile`` for a trace) does not load the rest.
"""
