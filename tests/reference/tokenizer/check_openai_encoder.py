#!/usr/bin/env python3
"""Second reference for the tokenizer fixtures: OpenAI's GPT-2 encoder itself.

Re-implements gpt-2/src/encoder.py (bytes_to_unicode, the `regex` pattern, the BPE loop, line for
line) and checks that it gives every string of corpus.jsonl and unseen.jsonl the ids stored there
(made with gpt-tokenizer by make_reference.mjs). A literal <|endoftext|> is split out first and
becomes its vocab id, as Hugging Face's GPT2Tokenizer does.

The `regex` module brings its own Unicode tables (Debian 12's python3-regex 2022.10.31: Unicode
15.0), and a string's ids depend on them only through code points one Unicode version leaves
unassigned and another makes a letter or number. As in check_reference_ids.mjs, a string holding a
code point that unassigned_in_unicode_14.json lists and `regex` calls a letter or number, or one it
does not list and `regex` calls unassigned, is left out of the comparison, counted and named.
(`regex` does not say its Unicode version, so unlike there, leaving strings out is not an error.)

Needs Python's `regex` module (Debian: python3-regex); exits 77 (skipped) without it.
  python3 tests/reference/tokenizer/check_openai_encoder.py TOKENIZER_DIR
"""
import json
import os
import sys

SKIP = 77

try:
    import regex as re
except ImportError:
    print("skipped: Python's `regex` module is not installed (apt-get install python3-regex)")
    sys.exit(SKIP)

HERE = os.path.dirname(os.path.abspath(__file__))
END_OF_TEXT = "<|endoftext|>"
# Of the 5,000 committed strings at least this many must be compared: a check that left out most of
# them (a `regex` with very different Unicode tables, a truncated fixture) would pass having
# compared little. Debian 12's python3-regex compares all 5,000.
MIN_COMPARED = 4500


def bytes_to_unicode():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(2**8):
        if b not in bs:
            bs.append(b)
            cs.append(2**8 + n)
            n += 1
    return dict(zip(bs, [chr(n) for n in cs]))


def get_pairs(word):
    return {(word[i], word[i + 1]) for i in range(len(word) - 1)}


class Encoder:
    def __init__(self, encoder, bpe_merges):
        self.encoder = encoder
        self.byte_encoder = bytes_to_unicode()
        self.bpe_ranks = dict(zip(bpe_merges, range(len(bpe_merges))))
        self.cache = {}
        self.pat = re.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""")

    def bpe(self, token):
        if token in self.cache:
            return self.cache[token]
        word = tuple(token)
        pairs = get_pairs(word)
        if not pairs:
            return token
        while True:
            bigram = min(pairs, key=lambda pair: self.bpe_ranks.get(pair, float("inf")))
            if bigram not in self.bpe_ranks:
                break
            first, second = bigram
            new_word = []
            i = 0
            while i < len(word):
                try:
                    j = word.index(first, i)
                    new_word.extend(word[i:j])
                    i = j
                except ValueError:
                    new_word.extend(word[i:])
                    break
                if word[i] == first and i < len(word) - 1 and word[i + 1] == second:
                    new_word.append(first + second)
                    i += 2
                else:
                    new_word.append(word[i])
                    i += 1
            word = tuple(new_word)
            if len(word) == 1:
                break
            pairs = get_pairs(word)
        word = " ".join(word)
        self.cache[token] = word
        return word

    def encode(self, text):
        bpe_tokens = []
        for token in re.findall(self.pat, text):
            token = "".join(self.byte_encoder[b] for b in token.encode("utf-8"))
            bpe_tokens.extend(self.encoder[bpe_token] for bpe_token in self.bpe(token).split(" "))
        return bpe_tokens


def main():
    tokenizer_dir = sys.argv[1]
    with open(os.path.join(tokenizer_dir, "encoder.json"), encoding="utf-8") as f:
        encoder = json.load(f)
    with open(os.path.join(tokenizer_dir, "vocab.bpe"), encoding="utf-8") as f:
        bpe_data = f.read()
    merges = [tuple(line.split()) for line in bpe_data.split("\n")[1:-1]]
    enc = Encoder(encoder, merges)
    with open(os.path.join(HERE, "unassigned_in_unicode_14.json"), encoding="utf-8") as f:
        unassigned_in_14 = {int(h, 16) for h in json.load(f)["code_points"]}
    letter_or_number = re.compile(r"[\p{L}\p{N}]")
    unassigned = re.compile(r"\p{Cn}")
    failures = 0
    checked = 0
    left_out = []
    for name in ("corpus.jsonl", "unseen.jsonl"):
        with open(os.path.join(HERE, name), encoding="utf-8") as f:
            for line_number, line in enumerate(f, 1):
                case = json.loads(line)
                version_dependent = sorted({
                    f"U+{ord(ch):04X}" for ch in case["text"]
                    if (letter_or_number.match(ch) if ord(ch) in unassigned_in_14 else unassigned.match(ch))})
                if version_dependent:
                    left_out.append(f"{name}:{line_number}: {', '.join(version_dependent)}")
                    continue
                ids = []
                for i, part in enumerate(case["text"].split(END_OF_TEXT)):
                    if i:
                        ids.append(encoder[END_OF_TEXT])
                    ids.extend(enc.encode(part))
                checked += 1
                if ids != case["ids"]:
                    failures += 1
                    if failures <= 5:
                        print(f"{name}:{line_number}: {json.dumps(case['text'])}\n  encoder.py {ids}\n  fixture    {case['ids']}")
    if left_out:
        print(f"{len(left_out)} strings left out: this `regex` classes some of their code points otherwise than "
              "Unicode 14.0 to 17.0 and the committed ids do (letter or number, or unassigned)")
        for entry in left_out[:20]:
            print(f"  {entry}")
    print(f"{checked - failures} passed, {failures} failed, {checked} compared (at least {MIN_COMPARED} required)")
    if checked < MIN_COMPARED:
        print(f"FAILED: only {checked} strings compared, fewer than the {MIN_COMPARED} required")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
