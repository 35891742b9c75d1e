"""Running or reusing what the pages execute: every ``python exec`` block, markdown-exec
session and notebook, under limits, each output reused from the execution cache or run.

A block's life, and the module that owns each step:

- ``fences``: the one reader of a fence (its options, id, timing, time limit, session, its
  part of the key); the plan and the page both read a fence through it.
- ``plan``: before any page renders, every block looked up, and the misses run ahead of their
  pages on a thread pool.
- ``runner``: the build's formatter in markdown-exec's registry; each block handed to it.
- ``sessions``: a block on its page, alone or in a session: looked up, reused or run through
  markdown-exec's ``base_format`` in its session's worker, wrapped, captioned, kept.
- ``guard``: a failing block says where; under ``mkdocs serve`` it shows in its page.
- ``executor``: where a session's blocks run: a worker process each, under limits; ``worker``
  is the worker's side, ``template`` the warm process workers are forked from.
- ``reads``: the files a block reads while it runs, checked before its output is reused.
- ``notebooks``, ``notebook_page``, ``kernel_limits``: notebooks run in the background with
  nbclient under the same limits, or reused; a notebook's page.
- ``process_tree``, ``compile_cache``: what a block starts ends with the build; JAX's
  compilation cache shared by the workers.
- ``state``: one build's state (``BuildState``, its sessions), and the process's state, each
  piece with when it is reset; ``progress``: the step a build is in, for its driver.
"""
