"""A stranger's tar archive, bounded before it is parsed: what a GPU node sends back, an earlier allocation's
results, a bundle's payload, an npm package.

``tarfile`` reads a GNU long-name or a pax header's payload whole, at the size its header claims, before the
member loop sees the entry: a 1 MB gzip can hold a 1 GiB "name", and a check on members comes too late. Here the
decompressed stream is counted as it is read, headers included, and refused past ``max_bytes``; a long-name or
pax header over :data:`MAX_HEADER_BYTES` is refused from its size alone, before its payload is read; and every
message quotes at most :data:`QUOTE_CHARS` characters of what it names.
"""

from __future__ import annotations

import gzip
import io
import lzma
import tarfile
from pathlib import Path
from typing import Literal

MAX_HEADER_BYTES = 8 * 1024  # a path is a few hundred bytes; a pax header holds a few of them
QUOTE_CHARS = 200


class ArchiveLimitError(ValueError):
    """The archive is over a bound; the message names the archive and the bound."""


def quoted(text: object, limit: int = QUOTE_CHARS) -> str:
    """``repr(text)``, cut to ``limit`` characters with the full length said: for error messages about a name a
    stranger chose."""
    shown = repr(text)
    return shown if len(shown) <= limit else f"{shown[:limit]}... ({len(str(text))} characters)"


class _Counted(io.RawIOBase):
    """The decompressed bytes of an archive, counted as read (a seek back and a reread count twice)."""

    def __init__(self, raw, limit: int, name: str) -> None:
        super().__init__()
        self._raw, self._limit, self._name, self.total = raw, limit, name, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return self._raw.seekable()

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        return self._raw.seek(offset, whence)

    def tell(self) -> int:
        return self._raw.tell()

    def read(self, size: int = -1) -> bytes:
        data = self._raw.read(size)
        self.total += len(data)
        if self.total > self._limit:
            raise ArchiveLimitError(f"{self._name}: over {self._limit:,} bytes decompressed (headers included): "
                                    "not what it claims to be")
        return data

    def readinto(self, buffer) -> int:
        data = self.read(len(buffer))
        buffer[:len(data)] = data
        return len(data)

    def close(self) -> None:
        self._raw.close()
        super().close()


class _BoundedTarInfo(tarfile.TarInfo):
    """Refuses a long-name, long-link or pax header larger than :data:`MAX_HEADER_BYTES` before reading it."""

    def _refuse_large(self, tarfile_: tarfile.TarFile, what: str) -> None:
        if self.size > MAX_HEADER_BYTES:
            raise ArchiveLimitError(f"{tarfile_.name}: a {what} header of {self.size:,} bytes at offset "
                                    f"{self.offset}, over {MAX_HEADER_BYTES:,}: not a plain archive")

    def _proc_gnulong(self, tarfile_):  # noqa: D401 (tarfile's own hook)
        self._refuse_large(tarfile_, "GNU long-name")
        return super()._proc_gnulong(tarfile_)

    def _proc_pax(self, tarfile_):
        self._refuse_large(tarfile_, "pax")
        return super()._proc_pax(tarfile_)


def open_bounded(path: Path, compression: Literal["gz", "xz", ""], max_bytes: int) -> tarfile.TarFile:
    """``path`` opened for reading, every byte of its decompressed stream counted against ``max_bytes`` and every
    extended header against :data:`MAX_HEADER_BYTES` (:class:`ArchiveLimitError`)."""
    path = Path(path)
    raw = {"gz": gzip.open, "xz": lzma.open, "": open}[compression](path, "rb")
    try:
        return tarfile.open(name=str(path), fileobj=_Counted(raw, max_bytes, str(path)), mode="r:",
                            tarinfo=_BoundedTarInfo)
    except BaseException:
        raw.close()
        raise
