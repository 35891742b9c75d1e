"""The store behind every cache of the build, the execution cache and what its key holds, and
``make check-cache``, which shows that a cached build equals a fresh one.

- ``store``: the one store: checksummed, atomic, bounded entries.
- ``cache``: the one protocol, in one file: the key (``key_of``), the result of a read
  (``Lookup``), a named cache where a fault is a miss, and ``OutputCache``, which every
  executed output goes through.
- ``reasons``: why an output ran, in words.
- ``reach``, ``reach_steps``: what an output's code can reach in the ``examples`` package (its
  key holds that).
- ``environment``: the ingredients every key of one build shares, and the list of them all.
- ``ingredients``: rendering and environment ingredients, and the build's own code.
- ``check_cache``: ``make check-cache``: a cached and a fresh build, side by side.
- ``compare``: two built sites, file by file and block by block.
"""
