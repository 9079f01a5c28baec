"""The persistent cache: derivatives built by an earlier process, read back as source text.

    directory    where entries live; a private directory, checked before it is
                 trusted; entries written atomically, never through a symlink
    fingerprint  what a build depends on, as plain data a later process can
                 recompute and compare (sources, versions, rules, values)
    entries      a build as an entry (its generated text and what it assumed),
                 and an entry back as a build, or None when anything differs

The in-memory cache (``srctrans.cache``) asks :mod:`entries` before it builds
and gives it every build it makes. Nothing here is a pickle: an entry is JSON
holding the generated Python text, which is compiled again when it is read.
"""
