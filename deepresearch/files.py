"""Reading the user's files with a byte bound: the one place every file the CLI reads goes
through (templates and samples, `edit --file`, MCP configs, docs folders, `.env`).

A file is read only when it is a regular file (after symlinks): a FIFO, a device such as
/dev/zero, a socket or a directory is refused before it is read, so nothing waits on a pipe
that never ends or reads a device to its end. The file is opened non-blocking (a FIFO put
in its place between the check and the open cannot block the open either) and checked again
on the open descriptor. At most `limit` bytes are read: a longer file is refused, or, with
`truncate=True`, cut there (a file whose size the system reports as 0, in /proc, is bounded
all the same).

Folders are walked without recursion (`walk_files`), so a folder nested thousands of levels
deep is read like a flat one.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path


class FileReadError(OSError):
    """The file cannot be read within its bounds; `reason` says why in a few words."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason

    def __str__(self) -> str:
        return self.reason


def _size_words(n: int) -> str:
    return f"{n // 1_000_000} MB" if n % 1_000_000 == 0 else f"{n:,} bytes"


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def read_bytes(path: str | os.PathLike, limit: int, *, truncate: bool = False) -> bytes:
    """At most `limit` bytes of a regular file. FileReadError when the file is not a regular
    file, is larger than `limit` (unless `truncate`), or cannot be read (reason: strerror)."""
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            raise FileReadError(f"{_kind(st.st_mode)}, not a regular file")
        if st.st_size > limit and not truncate:
            raise FileReadError(f"larger than {_size_words(limit)}")
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileReadError:
        raise
    except OSError as e:
        raise FileReadError(e.strerror or str(e)) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):  # swapped for something else after the check
            raise FileReadError(f"{_kind(st.st_mode)}, not a regular file")
        chunks, total = [], 0
        while total <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
    except FileReadError:
        raise
    except OSError as e:
        raise FileReadError(e.strerror or str(e)) from None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > limit:
        if not truncate:
            raise FileReadError(f"larger than {_size_words(limit)}")
        data = data[:limit]
    return data


def read_text(path: str | os.PathLike, limit: int, *, encoding: str = "utf-8") -> str:
    """A regular file of at most `limit` bytes as text. FileReadError as `read_bytes`;
    UnicodeDecodeError when it is not text in `encoding`."""
    return read_bytes(path, limit).decode(encoding)


def walk_files(root: str | os.PathLike, on_error: Callable[[str, OSError], None] | None = None) -> Iterator[Path]:
    """Every file under `root` (not following symlinked folders), found with an explicit stack
    rather than recursion: no folder depth makes it fail. In no set order (sort the result).
    A folder that cannot be listed is passed to `on_error` (path, error) and skipped."""
    stack = [os.fspath(root)]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as entries:
                found = list(entries)
        except OSError as e:
            if on_error:
                on_error(folder, e)
            continue
        for entry in found:
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                    continue
            except OSError:
                pass
            yield Path(entry.path)


MAX_LINE_CHARS = 65_536  # one line typed at a prompt (an answer, a comment, an outline row)


def read_line(stream, limit: int = MAX_LINE_CHARS) -> str:
    """One line of a prompt's input, read with a bound: "" (as at the end of input) when the
    input ends or the line is longer than `limit` (a stream with no newline, /dev/zero)."""
    line = stream.readline(limit + 1)
    return "" if len(line) > limit else line
