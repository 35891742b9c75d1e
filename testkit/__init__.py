"""Tooling for the tests and the benchmarks: building, serving and reading the site, running
git and make as an author, starting processes under supervision, loading a hook. Neither the
build nor the readers' wheel imports it (the wheel packs only ``examples/``). It needs only the
standard library, ``build_support`` and ``examples``, except where a module says otherwise: the
numeric tests also run where only jax, numpy and pytest are installed.

- ``project``: where things are (the root, the section page, the golden files).
- ``build``: the strict build, of the checkout or of a throw-away copy.
- ``small_site``: a small site's ``mkdocs.yml`` loading the checkout's hooks, and its one page.
- ``serving``: a static server on 127.0.0.1, ``mkdocs serve`` of a project, a page polled
  until it shows a text, free ports.
- ``site``: reading a built site (its pages, its prefix, its wheel).
- ``author``: git and make as an author runs them; ``make publish`` in a copy.
- ``hooks``: a hook of ``hooks/`` loaded by name.
- ``supervised``: several processes of one JAX system, supervised (tests only).
- ``shown_blocks``: the Python blocks a built page shows, as a reader copies them (bs4).
- ``browser_pages``: pages opened in playwright that record their errors (playwright).
- ``dask_cluster``: a Dask scheduler and workers on 127.0.0.1, one a GPU stand-in (distributed).
- ``s3_store``: moto's S3 server on 127.0.0.1, a bucket, a build's variables for it (moto).
"""
