"""A sweep's output directory: owned by one grid, locked by one sweep, written atomically.

Layout of ``DIR``:

- ``grid.json``: ``{"format", "schedlab_version", "grid_hash", "grid"}``, where ``grid``
  is the grid without its extendable axes (utilisations and samples) and ``grid_hash``
  its SHA-256; written once, when the directory is new.
- ``batch-NNNNNN.parquet``: finished rows. Each file's key-value metadata holds
  ``schedlab_version``, ``grid`` (the whole grid, JSON), ``grid_hash``, ``seed`` and
  ``cells`` (the coordinates of the cells it holds: the axes' values, utilisation and
  sample). A batch is reused only when
  its hash and version are this sweep's and its rows are exactly its cells under every
  policy, with the columns and task-set seeds they must have; any other file is reported
  by name (``ignored``) and never read into the result, nor overwritten.
- ``sweep.lock``: ``flock``-ed for the whole sweep; holds the PID and command of the
  sweep that holds it, for the message another sweep gets.

Every file is written to a new temporary name (``.NAME.RANDOM.tmp``, created with
``O_CREAT | O_EXCL | O_NOFOLLOW``), flushed to disk and renamed over its name, so a
planted file or symbolic link is never written through and readers see whole files.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import sys
import time
from collections import Counter
from typing import Any, Callable

import pandas as pd

from . import _native
from ._native import SchedlabError

FORMAT = "schedlab-sweep/1"
LOCK = "sweep.lock"
GRID = "grid.json"
_BATCH = re.compile(r"^batch-(\d{6,})\.parquet$")
_OWN_TEMP = re.compile(r"^\.(?:grid\.json|batch-\d{6,}\.parquet)\.[0-9a-f]{16}\.tmp$")

# What `--plot PREFIX` and `--csv FILE` write, which the docs put inside the output
# directory: listed in ``ignored`` (never read) but not reported on every resume.
_OUTPUT = re.compile(r".*-(schedulability|weighted|switches)\.(png|svg)|.*\.csv")
_OUTPUT_WHY = "a figure or CSV export of a sweep (not read)"


def _suffix() -> str:
    """Random part of a temporary name (a function so that tests can plant names)."""
    return os.urandom(8).hex()


def create_temp(directory: str, name: str) -> tuple[str, int]:
    """A new file ``.NAME.RANDOM.tmp`` in ``directory``, created exclusively without
    following a symbolic link; returns (path, fd)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    for _ in range(16):
        tmp = os.path.join(directory, f".{name}.{_suffix()}.tmp")
        try:
            return tmp, os.open(tmp, flags, 0o666)
        except FileExistsError:
            continue
    raise SchedlabError(f"cannot create a temporary file in {directory}: no name free")


def write_atomic(path: str, write: Callable[[Any], None]) -> None:
    """Write ``path`` through ``write(file)``: a fresh temporary file, flushed, renamed
    over ``path`` (a link at ``path`` is replaced, never followed)."""
    directory = os.path.dirname(path) or "."
    tmp, fd = create_temp(directory, os.path.basename(path))
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    dfd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


def check_output(path: str, inputs: list[str], what: str) -> None:
    """Refuse an output that is a symbolic link, a directory, a device (anything but a
    regular file) or the same file as one of ``inputs``, as the CLI's outputs do."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as e:
        raise SchedlabError(f"{what} {path}: {e.strerror}") from None
    import stat

    if stat.S_ISLNK(st.st_mode):
        raise SchedlabError(
            f"{what} {path}: refusing to write it: it is a symbolic link (name the file "
            "itself)"
        )
    if stat.S_ISDIR(st.st_mode):
        raise SchedlabError(f"{what} {path}: refusing to replace it: it is a directory")
    if not stat.S_ISREG(st.st_mode):
        raise SchedlabError(
            f"{what} {path}: refusing to replace it: it is not a regular file "
            "(a device, a FIFO or a socket)"
        )
    for i in inputs:
        with contextlib.suppress(OSError):
            si = os.stat(i)
            if (si.st_dev, si.st_ino) == (st.st_dev, st.st_ino):
                raise SchedlabError(
                    f"{what} {path}: refusing to overwrite it: it is also the input {i}"
                )


class SweepDir:
    """An open, locked sweep directory (see the module documentation)."""

    def __init__(self, out: str, grid: dict, meta: dict[str, str], names: list[str]):
        self.out = out
        self.grid = grid
        self.meta = meta
        self.names = names
        self.ignored: dict[str, str] = {}
        self.reused = 0
        self._frames: list[pd.DataFrame] = []
        self._done: set[tuple] = set()
        self._next = 0
        self._lock_fd: int | None = None

    @classmethod
    @contextlib.contextmanager
    def open(cls, out: str | None, grid: dict, meta: dict[str, str], names: list[str]):
        """The locked directory (None without ``out``); unlocked on exit."""
        if out is None:
            yield None
            return
        d = cls(os.fspath(out), grid, meta, names)
        d._lock()
        try:
            d._claim()
            d._scan()
            d._report()
            yield d
        finally:
            d._unlock()

    # -- lock -------------------------------------------------------------------------

    def _lock(self) -> None:
        try:
            os.makedirs(self.out, exist_ok=True)
        except OSError as e:
            raise SchedlabError(f"cannot create {self.out}: {e.strerror}") from None
        if not os.path.isdir(self.out):
            raise SchedlabError(f"{self.out}: not a directory")
        path = os.path.join(self.out, LOCK)
        try:
            fd = os.open(
                path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644
            )
        except OSError as e:
            raise SchedlabError(
                f"{path}: cannot open the sweep's lock file: {e.strerror}"
            ) from None
        import stat

        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise SchedlabError(f"{path}: the sweep's lock file is not a regular file")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            # The holder writes who it is just after it takes the lock: give it a
            # moment rather than report a holder that "has not said who".
            holder = ""
            for _ in range(50):
                holder = os.pread(fd, 4096, 0).decode(errors="replace").strip()
                if holder:
                    break
                time.sleep(0.02)
            os.close(fd)
            pid, _, cmd = holder.partition(" ")
            who = f"PID {pid}: {cmd}" if pid else "a process that has not said who"
            raise SchedlabError(
                f"{self.out} is in use by another sweep ({who}); wait for it to end or "
                "use another directory"
            ) from None
        # Written over the old text, then cut to length: never empty while held.
        me = f"{os.getpid()} {' '.join(sys.argv)}\n".encode()
        os.pwrite(fd, me, 0)
        os.ftruncate(fd, len(me))
        self._lock_fd = fd

    def _unlock(self) -> None:
        if self._lock_fd is not None:
            # Emptied while still held, so the next refusal never names an ended sweep
            # (only a killed one leaves its line, overwritten by the next holder).
            with contextlib.suppress(OSError):
                os.ftruncate(self._lock_fd, 0)
            os.close(self._lock_fd)  # releases the flock
            self._lock_fd = None

    # -- ownership --------------------------------------------------------------------

    def _grid_record(self) -> dict[str, Any]:
        from .sweep import identity

        return {
            "format": FORMAT,
            "schedlab_version": self.meta["schedlab_version"],
            "grid_hash": self.meta["grid_hash"],
            "grid": identity(self.grid),
        }

    def _claim(self) -> None:
        """Check grid.json is this grid's, or write it into a new directory."""
        path = os.path.join(self.out, GRID)
        mine = self._grid_record()
        try:
            with open(path, "rb") as f:
                text = f.read()
        except FileNotFoundError:
            others = sorted(
                n for n in os.listdir(self.out) if n != LOCK and not _OWN_TEMP.match(n)
            )
            if others:
                shown = ", ".join(others[:5]) + (", ..." if len(others) > 5 else "")
                raise SchedlabError(
                    f"{self.out} has no {GRID} but is not empty ({shown}): it is not a "
                    "sweep directory, or its grid is lost; nothing in it is reused. Use "
                    "a new directory"
                ) from None
            write_atomic(path, lambda f: f.write(json.dumps(mine, indent=1).encode()))
            return
        except OSError as e:
            raise SchedlabError(f"cannot read {path}: {e.strerror}") from None
        try:
            old = json.loads(text)
        except ValueError:
            old = None
        if not isinstance(old, dict) or old.get("format") != FORMAT:
            what = "empty" if not text.strip() else "not a sweep's grid.json"
            raise SchedlabError(
                f"{path} is {what}: the grid of the files in {self.out} is unknown, so "
                "none is reused; use a new directory"
            )
        if old.get("schedlab_version") != mine["schedlab_version"]:
            raise SchedlabError(
                f"{self.out} holds results of schedlab {old.get('schedlab_version')}, "
                f"this is {mine['schedlab_version']}: they are not mixed; use another "
                "directory"
            )
        if old.get("grid") != mine["grid"] or old.get("grid_hash") != mine["grid_hash"]:
            og = old.get("grid") if isinstance(old.get("grid"), dict) else {}
            keys = sorted(
                k
                for k in set(og) | set(mine["grid"])
                if og.get(k) != mine["grid"].get(k)
            )
            raise SchedlabError(
                f"{self.out} holds the results of another sweep (its grid.json differs "
                f"in {', '.join(keys) or 'its hash'}); use another directory or remove "
                "it. Only utilizations and samples may change (to extend a sweep)"
            )

    # -- batches ----------------------------------------------------------------------

    def _scan(self) -> None:
        """Read every valid batch; report anything else; remove our own leftovers."""
        for name in sorted(os.listdir(self.out)):
            path = os.path.join(self.out, name)
            if name in (GRID, LOCK):
                continue
            if _OWN_TEMP.match(name):
                # A temporary file of a sweep that was killed (we hold the lock, so no
                # sweep is writing it): removed; unlink never follows a link.
                with contextlib.suppress(OSError):
                    os.unlink(path)
                continue
            m = _BATCH.match(name)
            if not m:
                quiet = _OUTPUT.fullmatch(name) and os.path.isfile(path)
                self.ignored[name] = (
                    _OUTPUT_WHY if quiet else "not a file of this sweep"
                )
                continue
            self._next = max(self._next, int(m.group(1)) + 1)
            why = self._load_batch(path)
            if why:
                self.ignored[name] = why

    def _load_batch(self, path: str) -> str | None:
        """Load a batch, or say why it is not this sweep's."""
        import stat

        import pyarrow.parquet as pq

        st = os.lstat(path)
        if not stat.S_ISREG(st.st_mode):
            return "not a regular file"
        try:
            table = pq.read_table(path)
        except Exception as e:  # noqa: BLE001 - any unreadable file is reported
            return f"unreadable Parquet ({type(e).__name__}; cut short?)"
        md = {
            k.decode(errors="replace"): v.decode(errors="replace")
            for k, v in (table.schema.metadata or {}).items()
        }
        if "grid_hash" not in md or "cells" not in md:
            return "not written by a schedlab sweep (no grid_hash in its metadata)"
        if md["grid_hash"] != self.meta["grid_hash"]:
            return f"written for another grid (hash {md['grid_hash'][:12]})"
        if md.get("schedlab_version") != self.meta["schedlab_version"]:
            return f"written by schedlab {md.get('schedlab_version')}"
        from .sweep import expected_columns

        if table.column_names != expected_columns():
            return "its columns are not a sweep's"
        from .sweep import row_keys

        try:
            cells = [tuple(k) for k in json.loads(md["cells"])]
            if not cells or any(len(k) != len(cells[0]) for k in cells):
                raise ValueError
        except (ValueError, TypeError):
            return "its cell list is unreadable"
        if table.num_rows != len(cells) * len(self.names):
            return f"{table.num_rows} rows for {len(cells)} cells x {len(self.names)} policies"
        df = table.to_pandas()
        keys = row_keys(df)
        got = Counter(zip(keys, df["policy"].tolist()))
        want = Counter((k, p) for k in cells for p in self.names)
        if got != want:
            return "its rows are not the cells its metadata lists"
        seed = self.grid["seed"]
        for (*_, u, s), ss in zip(keys, df["set_seed"].tolist()):
            if _native.set_seed(seed, u, s) != ss:
                return "its task-set seeds are not this grid's"
        if self._done & set(cells):
            return "repeats cells of another batch"
        self._done |= set(cells)
        self._frames.append(df)
        self.reused += 1
        return None

    def _report(self) -> None:
        loud = {n: w for n, w in self.ignored.items() if w != _OUTPUT_WHY}
        for name, why in list(loud.items())[:10]:
            print(
                f"sweep: ignoring {os.path.join(self.out, name)}: {why}",
                file=sys.stderr,
            )
        if len(loud) > 10:
            print(
                f"sweep: ignoring {len(loud) - 10} more files in {self.out}",
                file=sys.stderr,
            )

    def done_cells(self) -> set[tuple]:
        """Coordinates (:func:`schedlab.sweep.cell_key`) of every cell already in a valid
        batch."""
        return set(self._done)

    def frames(self):
        """The valid batches' rows."""
        return iter(self._frames)

    def write_batch(self, df: pd.DataFrame, cells: list[tuple]) -> str:
        """Write a finished batch under a new name; returns its path."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        path = os.path.join(self.out, f"batch-{self._next:06d}.parquet")
        self._next += 1
        table = pa.Table.from_pandas(df, preserve_index=False)
        md = dict(table.schema.metadata or {})
        md.update({k.encode(): v.encode() for k, v in self.meta.items()})
        md[b"cells"] = json.dumps([list(k) for k in cells]).encode()
        table = table.replace_schema_metadata(md)
        write_atomic(path, lambda f: pq.write_table(table, f))
        return path
