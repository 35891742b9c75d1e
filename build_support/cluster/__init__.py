"""The run ahead on a Dask cluster (``extra.build.executor``): each job submitted with a bundle
of the build's code, run in a fresh worker process there under the build's limits.

- ``client``: the build's side: the cluster, the bundle, each job submitted and its replies.
- ``on_worker``: what runs on a Dask worker (sent by value, standard library at its top).
"""
