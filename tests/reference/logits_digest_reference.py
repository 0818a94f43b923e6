#!/usr/bin/python3
"""The independent reference for evidence's logits_digest: XXH64 as computed by
libxxhash itself (Debian's libxxhash0, Yann Collet's reference implementation, through ctypes) of
float32 rows built with numpy, written to tests/data/logits-digest.json. The C++ side
(tests/unit/evidence/logits_digest_test.cpp) builds the same rows from the same integer formula
and must print the same digests. Made with:

    /usr/bin/python3 tests/reference/logits_digest_reference.py --out tests/data/logits-digest.json

Rows: bits[i] = 0xC2000000 | ((i * 2654435761) mod 2^23): float32 values in [-64, -32), the range
of GPT-2's logits, every mantissa pattern different; each prefix length below tests another tail
of XXH64 (none, 4, 8, 12, ... bytes past the last 32-byte stripe). "one_ulp" is the 50,257-value
row with value 40,000 (far below the top candidates: id 0 holds the largest value, -32) moved by
one ulp (bits + 1), and "one_ulp_top" the same at the row's largest value."""
import argparse
import ctypes
import json

import numpy as np

LENGTHS = [0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 1000, 50257]
VOCAB = 50257


def row_bits(n):
    i = np.arange(n, dtype=np.uint64)
    return (np.uint64(0xC2000000) | ((i * np.uint64(2654435761)) & np.uint64((1 << 23) - 1))).astype(np.uint32)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    lib = ctypes.CDLL("libxxhash.so.0")
    lib.XXH64.restype = ctypes.c_uint64
    lib.XXH64.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint64]
    lib.XXH_versionNumber.restype = ctypes.c_uint

    def digest(bits):
        data = bits.astype("<u4").view("<f4").tobytes()  # little-endian IEEE-754 binary32
        return "xxh64:%016x" % lib.XXH64(data, len(data), 0)

    full = row_bits(VOCAB)
    rows = {str(n): digest(full[:n]) for n in LENGTHS}
    ulp = full.copy()
    ulp[40000] += 1
    top = int(np.argmax(full.view("<f4")))
    ulp_top = full.copy()
    ulp_top[top] += 1
    out = {
        "schema": "genrepro.logits-digest-reference/1",
        "made_by": "tests/reference/logits_digest_reference.py (libxxhash %d via ctypes, numpy %s)"
                   % (lib.XXH_versionNumber(), np.__version__),
        "row": "bits[i] = 0xC2000000 | ((i * 2654435761) mod 2^23), as float32; prefix of length n",
        "prefix_digests": rows,
        "one_ulp": {"index": 40000, "digest": digest(ulp)},
        "one_ulp_top": {"index": top, "digest": digest(ulp_top)},
        "test_vectors": {"": "%016x" % lib.XXH64(b"", 0, 0), "abc": "%016x" % lib.XXH64(b"abc", 3, 0)},
    }
    with open(a.out, "w") as f:
        json.dump(out, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
