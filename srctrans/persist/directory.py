"""Where the persistent cache lives, and reading and writing its entries safely.

Requires: nothing beyond the standard library.
Guarantees: :func:`location` is the cache directory or None (switched off).
The directory is made private (mode 0700) and is used only while it is a real
directory (not a symlink) owned by this user with no access for others;
otherwise the cache is off for the process, with one warning. An entry's first
line is a digest of its name and text, checked on reading. :func:`write`
replaces an entry atomically (a new private file renamed over the old name, so
a reader sees the old entry or the new one, never part of one); :func:`read`
opens without following symlinks and returns None for anything it cannot trust
(not a regular file, another owner, readable by others). The directory holds
at most about ``MAX_ENTRIES`` entries and ``MAX_BYTES`` bytes: :func:`prune` deletes the
least recently used (read or written) beyond either bound.

The directory is, in order: the one :func:`set_location` gave; else
``$SRCTRANS_CACHE_DIR`` (set and empty: off); else the platform's user cache
directory (``$XDG_CACHE_HOME/srctrans`` or ``~/.cache/srctrans`` on Linux,
``~/Library/Caches/srctrans`` on macOS, ``%LOCALAPPDATA%\\srctrans\\Cache`` on
Windows).
"""

import os
import stat
import sys
import warnings

from srctrans.sha256 import sha256

ENVIRONMENT = "SRCTRANS_CACHE_DIR"
_DEFAULT = object()
_chosen = [_DEFAULT]          # set_location's choice: a path, None (off) or _DEFAULT
_checked: dict[str, bool] = {}  # directory -> whether it passed the checks (once per process)


def set_location(path=_DEFAULT):
    """Use ``path`` for the persistent cache (None: switch it off; no argument: the default)."""
    _chosen[0] = path if path is None or path is _DEFAULT else os.fspath(path)


def configured():
    """The directory the settings name (None when off), whether or not it exists yet."""
    chosen = _chosen[0]
    if chosen is not _DEFAULT:
        return chosen
    if ENVIRONMENT in os.environ:
        return os.environ[ENVIRONMENT] or None
    return _platform_directory()


def _platform_directory():
    home = os.path.expanduser("~")
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or os.path.join(home, "AppData", "Local")
        return os.path.join(base, "srctrans", "Cache")
    if sys.platform == "darwin":
        return os.path.join(home, "Library", "Caches", "srctrans")
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(home, ".cache")
    return os.path.join(base, "srctrans")


def location():
    """The cache directory, made private if it did not exist; None when off or untrustworthy."""
    directory = configured()
    if directory is None:
        return None
    directory = os.path.abspath(directory)
    trusted = _checked.get(directory)
    if trusted is None:
        trusted = _checked[directory] = _prepare(directory)
    return directory if trusted else None


def _prepare(directory):
    """Make ``directory`` (mode 0700) if needed; True when it can be trusted."""
    try:
        os.makedirs(os.path.dirname(directory), exist_ok=True)
        try:
            os.mkdir(directory, 0o700)
        except FileExistsError:
            pass
        info = os.lstat(directory)
    except OSError as error:
        return _distrust(directory, f"it cannot be created ({error})")
    if stat.S_ISLNK(info.st_mode):
        return _distrust(directory, "it is a symbolic link")
    if not stat.S_ISDIR(info.st_mode):
        return _distrust(directory, "it is not a directory")
    why = _not_private(info)
    return True if why is None else _distrust(directory, f"{why}; srctrans makes it 700")


def _not_private(info):
    """Why a file or directory with ``os.stat`` result ``info`` is not this user's alone, or
    None (owner and mode are checked where the platform has them)."""
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        return "another user owns it"
    if os.name == "posix" and info.st_mode & 0o077:
        return f"others may read or write it (mode {stat.S_IMODE(info.st_mode):o})"
    return None


def _distrust(directory, why):
    warnings.warn(f"srctrans: the persistent cache is off for this process: {directory}: {why}. "
                  f"Set {ENVIRONMENT} to a private directory, or to an empty value to switch "
                  f"it off", RuntimeWarning, stacklevel=4)
    return False


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_BINARY = getattr(os, "O_BINARY", 0)


def read(directory, name):
    """The text of entry ``name``, or None when it is missing or cannot be trusted."""
    path = os.path.join(directory, name)
    try:
        handle = os.open(path, os.O_RDONLY | _NOFOLLOW | _BINARY)
    except OSError:
        return None
    try:
        info = os.fstat(handle)
        if not stat.S_ISREG(info.st_mode) or _not_private(info) is not None:
            return None
        with os.fdopen(handle, "rb", closefd=False) as stream:
            data = stream.read()
        if os.utime in os.supports_fd:
            os.utime(handle)                 # used now: pruning keeps it longest
    except OSError:
        return None
    finally:
        os.close(handle)
    try:
        return payload(data.decode("utf-8"), name)
    except UnicodeDecodeError:
        return None


def framed(text, name):
    """``text`` as entry ``name`` is stored: a first line with a digest of the name and text."""
    return _checksum(text, name) + "\n" + text


def payload(stored, name):
    """The text of a stored entry ``name``, or None when its digest does not match (a damaged
    entry, or one copied under another entry's name)."""
    first, _, text = stored.partition("\n")
    return text if first == _checksum(text, name) else None


def _checksum(text, name):
    return sha256(f"{name}\0{text}".encode()).hexdigest()


def write(directory, name, text):
    """Replace entry ``name`` with ``text`` atomically; False when it could not be written."""
    final = os.path.join(directory, name)
    temporary = os.path.join(directory, f".{name}.{os.getpid()}.{os.urandom(6).hex()}.tmp")
    try:
        handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _BINARY,
                         0o600)
    except OSError:
        return False
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(framed(text, name).encode("utf-8"))
        os.replace(temporary, final)     # replaces a link at ``final``, never writes through it
    except OSError:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        return False
    _writes[0] += 1
    if _writes[0] % PRUNE_EVERY == 1:     # the first write of a process, then every PRUNE_EVERY
        prune(directory)
    return True


MAX_ENTRIES = 20_000         # beyond either bound, the least recently used go
MAX_BYTES = 100 * 2**20      # 100 MiB of entries
PRUNE_EVERY = 500
_writes = [0]


def prune(directory, limit=None, max_bytes=None):
    """Delete the least recently used entries while ``directory`` holds more than ``limit``
    entries (``MAX_ENTRIES``) or more than ``max_bytes`` bytes of them (``MAX_BYTES``): down to
    three quarters of each bound. Reading an entry marks it used. Returns how many it deleted."""
    limit = MAX_ENTRIES if limit is None else limit
    max_bytes = MAX_BYTES if max_bytes is None else max_bytes
    used = _entries(directory)
    total = sum(size for _, size, _ in used)
    if len(used) <= limit and total <= max_bytes:
        return 0
    used.sort()
    keep_entries, keep_bytes = limit * 3 // 4, max_bytes * 3 // 4
    doomed = []
    for _, size, name in used:
        if len(used) - len(doomed) <= keep_entries and total <= keep_bytes:
            break
        doomed.append(name)
        total -= size
    return _removed(directory, doomed)


SUFFIX = ".json"


def _names(directory, suffixes=(SUFFIX,)):
    """The names of the files in ``directory`` that end with one of ``suffixes``."""
    try:
        return [name for name in os.listdir(directory) if name.endswith(suffixes)]
    except OSError:
        return []


def _removed(directory, names):
    """Delete ``names`` from ``directory``; how many were deleted."""
    removed = 0
    for name in names:
        try:
            os.unlink(os.path.join(directory, name))
            removed += 1
        except OSError:
            pass
    return removed


def _entries(directory):
    """``(last used, size, name)`` of each entry of ``directory``."""
    found = []
    for name in _names(directory):
        try:
            info = os.lstat(os.path.join(directory, name))
        except OSError:
            continue
        found.append((info.st_mtime_ns, info.st_size, name))
    return found


def usage(directory):
    """``(entries, bytes)`` that ``directory`` holds."""
    found = _entries(directory)
    return len(found), sum(size for _, size, _ in found)


def clear(directory):
    """Remove every entry (and left-over temporary file) from ``directory``; the count removed."""
    return _removed(directory, _names(directory, (SUFFIX, ".tmp")))
