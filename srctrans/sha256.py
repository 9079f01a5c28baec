"""SHA-256 without loading OpenSSL (the persistent cache's digests, generated files' names).

Guarantees: :data:`sha256` is a constructor with :func:`hashlib.sha256`'s interface
and digests. ``import hashlib`` loads OpenSSL's library (about 4 ms, most of what the
digests of a new process's first gradient cost); CPython's own implementation
(``_sha2`` since 3.12, ``_sha256`` before) is as fast for the short texts the cache
hashes. Where Python was built without it, hashlib's is used.
"""

try:
    from _sha2 import sha256  # type: ignore[import-not-found]     # Python 3.12 and later
except ImportError:
    try:
        from _sha256 import sha256  # type: ignore[import-not-found]  # Python 3.10 and 3.11
    except ImportError:                        # pragma: no cover - a Python without its own
        from hashlib import sha256

__all__ = ["sha256"]
