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
INVERSE = np.uint64(pow(0x100000001B3, -1, 2**64))  # P * INVERSE == 1 mod 2**64
_powers = np.empty(0, dtype=np.uint64)
_inverse_powers = np.empty(0, dtype=np.uint64)


def _powers_for(n):
    global _powers
    if _powers.size < n:
        # cumprod of uint64 wraps mod 2**64, which is the arithmetic wanted here.
        _powers = np.cumprod(np.full(max(n, 4096, 2 * _powers.size), PRIME, dtype=np.uint64), dtype=np.uint64)
    return _powers[:n]


def _inverse_powers_for(n):
    """P**-k for k in [0, n)."""
    global _inverse_powers
    if _inverse_powers.size < n:
        factors = np.full(max(n, 4096, 2 * _inverse_powers.size), INVERSE, dtype=np.uint64)
        factors[0] = 1
        _inverse_powers = np.cumprod(factors, dtype=np.uint64)
    return _inverse_powers[:n]


def word_hash(words):
    """h of a 1-D array of non-negative integers (cast to uint64), as a decimal string (JSON-safe)."""
    w = np.asarray(words).astype(np.uint64, copy=False).reshape(-1)
    # uint64 array arithmetic wraps mod 2**64 without a warning (only scalars warn).
    return str(int(np.add.reduce(w * _powers_for(w.size), dtype=np.uint64)))


def segment_hashes(words, sizes):
    """[word_hash(run) for each run], the runs being `words` cut into consecutive pieces of sizes[k]
    words (0 allowed): one numpy pass over all of them instead of a handful of calls per run, which
    for the framework references' tens of thousands of short arrays cost more than the words did.

    Weighting the whole array at once gives run k's word i the power P**(start_k + i + 1): its
    hash times P**start_k. P is odd, so multiplying by P**-start_k mod 2**64 gives word_hash exactly."""
    w = np.asarray(words).astype(np.uint64, copy=False).reshape(-1)
    sizes = np.asarray(sizes, dtype=np.int64)
    ends = np.cumsum(sizes)
    starts = ends - sizes
    prefix = np.zeros(w.size + 1, dtype=np.uint64)
    np.cumsum(w * _powers_for(w.size), dtype=np.uint64, out=prefix[1:])
    h = (prefix[ends] - prefix[starts]) * _inverse_powers_for(w.size + 1)[starts]
    return [str(x) for x in h.tolist()]


def segment_counts(mask, sizes):
    """The number of true entries of `mask` in each run (as segment_hashes cuts it), as Python ints."""
    sizes = np.asarray(sizes, dtype=np.int64)
    ends = np.cumsum(sizes)
    prefix = np.zeros(mask.size + 1, dtype=np.int64)
    np.cumsum(mask, dtype=np.int64, out=prefix[1:])
    return (prefix[ends] - prefix[ends - sizes]).tolist()


def float_bits(a):
    """The float32 bit patterns of `a` (a numpy float32 array), as uint64 words."""
    return np.ascontiguousarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
