#!/usr/bin/env python3
"""Writes unassigned_in_unicode_14.json: the code points of corpus.jsonl and unseen.jsonl that
Unicode 14.0 leaves unassigned (general category Cn), for check_reference_ids.mjs.

GPT-2's pattern treats an unassigned code point as neither a letter nor a number, and so do the
committed ids (make_reference.mjs never draws the letters and numbers assigned in Unicode 15.0 to
17.0). A later Unicode version may make one of these code points a letter or number, and a node
built with it would then split the string differently: check_reference_ids.mjs leaves such
strings out of its comparison, counted and named. Unicode 14.0 is the version of the C++
tokenizer's PCRE2 10.42 and of Python 3.11's unicodedata, which this script needs:

  python3.11 tests/reference/tokenizer/list_unassigned.py      (Debian 12's /usr/bin/python3)
"""
import json
import os
import sys
import unicodedata

HERE = os.path.dirname(os.path.abspath(__file__))
UNICODE = "14.0.0"

if unicodedata.unidata_version != UNICODE:
    sys.exit(f"list_unassigned.py: needs Python's unicodedata {UNICODE} (Python 3.11), "
             f"this Python has {unicodedata.unidata_version}")

found = set()
for name in ("corpus.jsonl", "unseen.jsonl"):
    with open(os.path.join(HERE, name), encoding="utf-8") as f:
        for line in f:
            found.update(ord(ch) for ch in json.loads(line)["text"] if unicodedata.category(ch) == "Cn")

with open(os.path.join(HERE, "unassigned_in_unicode_14.json"), "w", encoding="utf-8") as f:
    json.dump({
        "unicode": UNICODE,
        "about": "code points of corpus.jsonl and unseen.jsonl unassigned in Unicode 14.0; written by list_unassigned.py",
        "code_points": [f"{cp:04X}" for cp in sorted(found)],
    }, f, indent=0)
    f.write("\n")
print(f"unassigned_in_unicode_14.json: {len(found)} code points")
