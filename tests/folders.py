"""Index folders as someone else may hand them over: their files rewritten in place, resealed, read under bounds."""

from __future__ import annotations

import contextlib
import io
import json
import os
import resource
import struct
import zipfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from llama_index_pearl.storage.integrity import file_digests

GIB = 1 << 30
_CODE_AND_HEADER = 37  # a four-letter code, then d (int32), ntotal (int64), two int64 fields, is_trained, metric
_GRAPH_VECTORS = (8, 4, 4, 8, 4)  # level probabilities, neighbours per level, levels, offsets, neighbours


def reseal(folder: Path) -> None:
    """Record the folder's current file sizes and digests in its manifest, as if persist had written them."""
    manifest = json.loads((folder / "pearl.json").read_text(encoding="utf-8"))
    manifest["files"] = file_digests(folder, manifest["files"])
    (folder / "pearl.json").write_text(json.dumps(manifest), encoding="utf-8")


def patch(path: Path, offset: int, layout: str, value: int | float) -> None:
    """Write one number into a file at ``offset`` (``layout``: a ``struct`` format, little-endian)."""
    data = bytearray(path.read_bytes())
    struct.pack_into(f"<{layout}", data, offset, value)
    path.write_bytes(bytes(data))


def faiss_fields(data: bytes) -> dict[str, tuple[int, str]]:
    """Where a ``faiss.index`` PEARL wrote holds each of its dimensions, counts and sizes: name -> (offset, layout).

    FAISS's layout (``faiss/impl/index_read.cpp``): an IndexIDMap2 around an IndexFlatIP, or around an
    IndexHNSWFlat (its graph's vectors, then an IndexFlatIP); each vector is a uint64 count, then its values.
    """
    fields = {"d": (4, "i"), "ntotal": (8, "q"), "inner d": (41, "i"), "inner ntotal": (45, "q")}
    at = 2 * _CODE_AND_HEADER
    if data[_CODE_AND_HEADER : _CODE_AND_HEADER + 4] == b"IHNf":
        for number, size in enumerate(_GRAPH_VECTORS):
            fields[f"graph vector {number}"] = (at, "Q")
            at += 8 + size * struct.unpack_from("<Q", data, at)[0]
        for number, name in enumerate(("entry point", "max level", "efConstruction", "efSearch")):
            fields[name] = (at + 4 * number, "i")
        at += 20
        fields.update({"storage d": (at + 4, "i"), "storage ntotal": (at + 8, "q")})
        at += _CODE_AND_HEADER
    fields["vectors"] = (at, "Q")
    fields["ids"] = (at + 8 + 4 * struct.unpack_from("<Q", data, at)[0], "Q")
    return fields


def npz_claiming(original: bytes, member: str, shape: tuple[int, ...]) -> bytes:
    """``original`` (an ``np.savez`` archive) with one member's header claiming ``shape``, its bytes unchanged."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(original)) as archive, zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as copy:
        for info in archive.infolist():
            content = archive.read(info)
            if info.filename == f"{member}.npy":
                stream = io.BytesIO(content)
                np.lib.format.read_magic(stream)
                _, _, dtype = np.lib.format.read_array_header_1_0(stream)
                header = io.BytesIO()  # the magic string and a header of the claimed shape
                described = {"descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": False, "shape": shape}
                np.lib.format.write_array_header_1_0(header, described)
                content = header.getvalue() + content[stream.tell() :]
            copy.writestr(info.filename, content)
    return out.getvalue()


def virtual_memory() -> int:
    """This process's virtual memory size in bytes (Linux)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmSize:"):
            return int(line.split()[1]) * 1024
    raise OSError("no VmSize in /proc/self/status")


@contextlib.contextmanager
def memory_bound(extra: int = 2 * GIB) -> Iterator[None]:
    """Allocations past ``extra`` bytes more than the process holds now fail (``RLIMIT_AS``) within the block."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = virtual_memory() + extra
    resource.setrlimit(resource.RLIMIT_AS, (limit if hard == resource.RLIM_INFINITY else min(limit, hard), hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def unblock_pipe(path: Path) -> None:
    """Open a named pipe's writing end and close it, so that a reader blocked on it goes on (at end of file)."""
    with contextlib.suppress(OSError):
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
