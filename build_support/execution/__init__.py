"""Running or reusing what the pages execute: every ``python exec`` block, markdown-exec
session and notebook, under limits, each output reused from the execution cache or run.

- ``state``: one build's state (``BuildState``), and the process's (``PROCESS``: the serve
  flag, the build running now); it imports none of the modules below that act on it.
- ``runner``: the build's formatter in markdown-exec's registry; each block handed to it.
- ``python_exec``: a block's code run through markdown-exec's public ``base_format``, with a
  ``run`` of ours, in globals the build owns.
- ``blocks``: one block alone, reused or run, wrapped and captioned.
- ``sessions``: markdown-exec sessions, the data (their blocks, and the slots of their outputs).
- ``session_runs``: how a build runs a session: one cache entry, one run.
- ``fence_options``: what a fence's options say (id, timing, their part of the key).
- ``notebooks``: notebooks run in the background with nbclient, or from the cache; a build's
  ``Notebooks`` (their runs, threads and scratch folder).
- ``notebook_runs``: what a build does with its notebooks, and the ``Run`` of each.
- ``notebook_page``: a notebook's page, rendered by mkdocs-jupyter or reused.
- ``guard``: no block ends, hangs or floods a build; a failure says where.
- ``limits``: the time limit on one block.
- ``reads``: the files a block reads while it runs, checked before its output is reused.
"""
