"""The course's notebooks as pages: which files are notebooks and in what format, each run in
the background by nbclient under the build's limits or taken from the execution cache, and its
page rendered, by mkdocs-jupyter or as Jupyter Book renders it.

- ``formats``: which files are notebooks (jupytext ``.py``, ``.ipynb``, MyST ``.md``).
- ``kernels``: the runs, each in a kernel of its own, and a kernel's limits.
- ``page``: a notebook's page: its run started or reused, rendered, recorded.
- ``jupyter_book``: an ``.ipynb`` or MyST notebook's page, cell tags acted on.
- ``myst``: MyST Markdown in those pages' cells; ``tex``: their formulas as MathML.
"""
