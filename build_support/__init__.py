"""The build's own code: what MkDocs' hooks (``hooks/``) call to run, cache and publish what
the pages execute. Not part of the readers' wheel. Imports nothing, so that ``section`` and
``build_command`` stay importable by the system Python before the virtual environment exists.

- ``section``, ``settings``, ``build_command``, ``browser``, ``theme``: project-wide facts and
  tools (the section page and its version, the build's settings, the build command, the
  browser, the installed theme's own assets).
- ``execution/``: running or reusing every ``python exec`` block, session and notebook.
- ``caching/``: the store of every cache, the execution cache and its key, ``make check-cache``.
- ``publishing/``: what a build publishes beside the pages (the drift record, the Build report,
  the readers' wheel).
"""
