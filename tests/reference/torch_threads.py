"""torch on a given number of cores, its BLAS included, for the reference scripts.

torch.set_num_threads sets ATen's OpenMP threads only. Debian's torch calls OpenBLAS, which starts
one thread per core when it loads and keeps them spinning between calls: with two tests on two
cores, a third of a reference script's CPU time went to them. OpenBLAS is told here, through its
own openblas_set_num_threads, rather than by OPENBLAS_NUM_THREADS in the environment, because the
scripts' genrepro children would inherit that variable and record it in their evidence.

Freed memory is also kept for reuse (glibc's mmap and trim thresholds, as genrepro's engine sets
them): each forward pass frees and allocates the same multi-megabyte logits, and page faults on
fresh memory are most of a script's system time. Neither setting changes a number.
"""
import ctypes

M_TRIM_THRESHOLD = -1  # glibc's malloc.h
M_MMAP_THRESHOLD = -3


def use_threads(torch, threads=1):
    torch.set_num_threads(threads)
    with open("/proc/self/maps") as f:
        libraries = {line.split()[-1] for line in f if line.rstrip().endswith(".so") or ".so." in line}
    for path in sorted(libraries):
        if "blas" not in path.rsplit("/", 1)[-1]:
            continue
        try:
            set_threads = ctypes.CDLL(path).openblas_set_num_threads
        except (OSError, AttributeError):
            continue  # not OpenBLAS (the reference BLAS has no threads)
        set_threads(threads)
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(M_MMAP_THRESHOLD, 32 << 20)
        libc.mallopt(M_TRIM_THRESHOLD, 256 << 20)
    except (OSError, AttributeError):
        pass  # not glibc: its defaults, slower only
