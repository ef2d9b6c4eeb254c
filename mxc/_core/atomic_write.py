"""Files written whole or not at all, with nothing left behind by a writer that died.

A writer writes ``.<name>.tmp-<host>-<pid>-<n>`` beside the target and renames it over the
target when it is complete (``os.replace``: a reader sees the old file or the new one, never a
part). A process killed midway leaves only its temporary; the next write of the same target
removes the temporaries whose process is gone (same host, pid no longer running, or this
process's own pid but not one of its open writes: a pid reused after a restart). Temporaries
of other hosts (a shared file system) are never touched.
"""
import itertools
import os
import re
import socket

_HOST = re.sub(r"[^A-Za-z0-9_.]", "_", socket.gethostname()) or "host"
_COUNTER = itertools.count()
_OPEN = set()           # temporaries this process is writing now


def temp_path(target):
    """A fresh temporary name beside `target`, registered as open until `commit`/`discard`;
    the dead writers' temporaries of the same target are removed first."""
    target = os.path.abspath(os.fspath(target))
    remove_stale(target)
    directory, base = os.path.split(target)
    tmp = os.path.join(directory, f".{base}.tmp-{_HOST}-{os.getpid()}-{next(_COUNTER)}")
    _OPEN.add(tmp)
    return tmp


def _alive(pid):
    if pid == os.getpid():
        return False            # ours, but not open (checked by the caller): a reused pid
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:     # another user's live process
        return True
    except OSError:
        return True
    return True


def remove_stale(target):
    """Remove temporaries of `target` left by writers of this host that are no longer running."""
    directory, base = os.path.split(os.path.abspath(os.fspath(target)))
    pattern = re.compile(r"\." + re.escape(base) + r"\.tmp-" + re.escape(_HOST) + r"-(\d+)-\d+")
    try:
        names = os.listdir(directory or ".")
    except OSError:
        return
    for name in names:
        m = pattern.fullmatch(name)
        if m is None:
            continue
        path = os.path.join(directory, name)
        if path in _OPEN or _alive(int(m.group(1))):
            continue
        try:
            os.unlink(path)
        except OSError:
            pass


def commit(tmp, target):
    """Move the complete temporary `tmp` over `target`, keeping an existing target's permission
    bits (a new file gets the umask's, as a plain open would)."""
    target = os.fspath(target)
    try:
        os.chmod(tmp, os.stat(target).st_mode & 0o7777)
    except FileNotFoundError:
        pass
    try:
        os.replace(tmp, target)
    finally:
        _OPEN.discard(tmp)


def discard(tmp):
    """Remove a temporary that will not be committed (the write failed)."""
    _OPEN.discard(tmp)
    try:
        os.unlink(tmp)
    except OSError:
        pass


def write_bytes(target, parts):
    """Write the byte strings `parts` to `target` whole or not at all (fsync'd before the
    rename, so a crash of the machine does not leave an empty file under the target's name)."""
    tmp = temp_path(target)
    try:
        # 0o666: the umask decides the mode, as with a plain open
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0),
                         0o666)
        except OSError as e:        # named after the target (a missing directory, no rights)
            raise type(e)(e.errno, e.strerror, os.fspath(target)) from None
        with os.fdopen(fd, "wb") as f:
            for part in parts:
                f.write(part)
            f.flush()
            os.fsync(f.fileno())
        commit(tmp, target)
    except BaseException:
        discard(tmp)
        raise


def write_from(target, f, chunk=1 << 20):
    """Write what is left of the binary file object `f` to `target`, whole or not at all."""
    write_bytes(target, iter(lambda: f.read(chunk), b""))
