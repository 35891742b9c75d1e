"""Running or reusing what the pages execute: every ``python exec`` block, markdown-exec
session and notebook, under limits, each output reused from the execution cache or run.

- ``runner``: one build's ``Build``, and its place in markdown-exec and MkDocs.
- ``blocks``: one block alone, reused or run, wrapped and captioned.
- ``sessions``: markdown-exec sessions, the data (their blocks, and the slots of their outputs).
- ``session_runs``: how a build runs a session: one cache entry, one run.
- ``fence_options``: what a fence's options say (id, timing, their part of the key).
- ``notebooks``: notebooks run in the background with nbclient, or from the cache.
- ``notebook_runs``: what a build does with its notebooks, and the ``Run`` of each.
- ``notebook_page``: a notebook's page, rendered by mkdocs-jupyter or reused.
- ``guard``: no block ends, hangs or floods a build; a failure says where.
- ``limits``: the time limit on one block.
- ``reads``: the files a block reads while it runs, checked before its output is reused.
"""
