"""The store behind every cache of the build, the execution cache and what its key holds, and
``make check-cache``, which shows that a cached build equals a fresh one.

- ``store``: the one store: checksummed, atomic, bounded entries.
- ``named_cache``: one named cache in the store, where a fault is a miss.
- ``cache``: the execution cache and the one protocol every executed output goes through.
- ``environment``: the ingredients every key of one build shares, and the list of them all.
- ``ingredients``: rendering and environment ingredients, and the build's own code.
- ``check_cache``: ``make check-cache``: a cached and a fresh build, side by side.
- ``compare``: two built sites, file by file and block by block.
"""
