"""The digest the framework reference tests compare arrays by (tests/unit/engine/framework_reference.hpp
computes the same in C++: WordHash).

    h = sum over i of  w[i] * P**(i + 1)   mod 2**64,   P = 0x100000001B3 (FNV-1a's prime)

over 64-bit words w (a kept id, a float32's bits, or (id << 32) | logit bits). P is odd, so every
power is invertible mod 2**64: changing any one word, or moving a word to another position, changes
h. It replaced FNV-1a, whose chained xor-multiply Python can only walk one element at a time (that
loop was most of these tests' time); this is a dot product, one numpy pass.
"""
import numpy as np

PRIME = np.uint64(0x100000001B3)
_powers = np.empty(0, dtype=np.uint64)


def _powers_for(n):
    global _powers
    if _powers.size < n:
        # cumprod of uint64 wraps mod 2**64, which is the arithmetic wanted here.
        _powers = np.cumprod(np.full(max(n, 4096), PRIME, dtype=np.uint64), dtype=np.uint64)
    return _powers[:n]


def word_hash(words):
    """h of a 1-D array of non-negative integers (cast to uint64), as a decimal string (JSON-safe)."""
    w = np.asarray(words).astype(np.uint64, copy=False).reshape(-1)
    # uint64 array arithmetic wraps mod 2**64 without a warning (only scalars warn).
    return str(int(np.add.reduce(w * _powers_for(w.size), dtype=np.uint64)))


def float_bits(a):
    """The float32 bit patterns of `a` (a numpy float32 array), as uint64 words."""
    return np.ascontiguousarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
