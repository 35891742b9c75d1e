"""What a build publishes beside the pages, from what it executed.

- ``runs``: a ``Run`` per executed output, as the Build report and the drift record take it.
- ``record``: the drift record (``execution-record.json``) and its comparison with the
  previously published version.
- ``report``: the Build report page.
- ``wheel_build``: the readers' wheel of the ``examples`` package, built or read from the store.
"""
