"""One BLAS thread for the matrix-vector products of a search (store.vectors, store.files).

numpy's OpenBLAS splits a product over a few thousand rows between its threads; on a busy machine the
threads wait for a core, and a 0.1 ms product took 24-60 ms. Up to ONE_THREAD_MAX entries one thread
is faster (measured on the 2-core VM under load 35: 20k x 256, p50 18 ms against 63 ms on two threads;
at 100k x 256 two were a little faster, 151 against 172 ms, and a machine of many cores gains more).
Each row's dot product is computed the same way on one thread as on several: the scores, and so the
rankings, are bit for bit the same.

numpy has no call for this; OpenBLAS has one, found in numpy's own copy of the library (what
threadpoolctl does, without the dependency). The setting is the process's, so it is taken for the
product only and put back after it: a program that imports aintern keeps its own. With another BLAS
(MKL, Accelerate) nothing changes.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator

#: (set, get) of OpenBLAS's thread count, under the names its builds give them: numpy's wheels bundle
#: scipy-openblas (64-bit integers, its own prefix); older wheels and system builds the plain names.
_NAMES = [
    (f"{prefix}set_num_threads{suffix}", f"{prefix}get_num_threads{suffix}")
    for prefix in ("scipy_openblas_", "openblas_")
    for suffix in ("64_", "")
]


def _candidates() -> list[str]:
    """Files that may hold the OpenBLAS numpy loaded: its wheel's bundled copy, else (Linux) any
    OpenBLAS mapped into this process."""
    import glob
    import os
    import sys

    import numpy as np

    site = os.path.dirname(os.path.dirname(np.__file__))
    found = [
        path
        for pattern in ("numpy.libs/*openblas*", "numpy/.dylibs/*openblas*")
        for path in sorted(glob.glob(os.path.join(site, pattern)))
    ]
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError), open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            found += sorted({line.split()[-1] for line in maps if "openblas" in line.rsplit("/", 1)[-1]})
    return list(dict.fromkeys(found))


def _functions() -> tuple[Callable[[int], object], Callable[[], int]] | None:
    import ctypes  # (here: a search process that never multiplies a matrix, a CLI search, never loads it)

    for path in _candidates():
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for set_name, get_name in _NAMES:
            setter, getter = getattr(lib, set_name, None), getattr(lib, get_name, None)
            if setter is not None and getter is not None:
                setter.argtypes, setter.restype, getter.restype = [ctypes.c_int], None, ctypes.c_int
                return setter, getter
    return None


_lock = threading.Lock()
_found: list[tuple[Callable[[int], object], Callable[[], int]] | None] = []
_inside = 0
_before = 1


def threads() -> int | None:
    """OpenBLAS's thread count now (None: numpy's BLAS is not an OpenBLAS found here)."""
    with _lock:
        if not _found:
            _found.append(_functions())
        functions = _found[0]
    return functions[1]() if functions is not None else None


#: The most entries of a matrix whose product with a vector runs on one thread (32k vectors of 256).
ONE_THREAD_MAX = 1 << 23
#: Below this many entries OpenBLAS runs a matrix-vector product on one thread of itself (2304 x its
#: GEMM_MULTITHREAD_THRESHOLD, 4): the setting is left alone (changing it costs more than a small product).
ONE_THREAD_MIN = 2304 * 4


@contextlib.contextmanager
def one_thread(entries: int) -> Iterator[None]:
    """BLAS on one thread inside the block, for a product of a matrix of ``entries`` entries from
    ONE_THREAD_MIN up to ONE_THREAD_MAX (a larger one keeps BLAS's threads); the process's setting back once
    no thread is inside one. (A product another thread runs meanwhile gets one thread too.)"""
    global _inside, _before
    if entries > ONE_THREAD_MAX or entries < ONE_THREAD_MIN or threads() is None:
        yield
        return
    functions = _found[0]
    assert functions is not None
    set_threads, get_threads = functions
    with _lock:
        if not _inside:
            _before = get_threads()
            if _before != 1:
                set_threads(1)
        _inside += 1
    try:
        yield
    finally:
        with _lock:
            _inside -= 1
            if not _inside and _before != 1:
                set_threads(_before)
