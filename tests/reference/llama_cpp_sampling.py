#!/usr/bin/python3
"""llama.cpp's own sampler chain on fixed logits and on a whole generation, for genrepro's
framework "llama.cpp" to be held to (tests/unit/engine/llama_cpp_reference_test.cpp,
tests/reference/frameworks.cmake).

Nothing here reimplements llama.cpp: the samplers are llama.cpp's, called through its C API
(include/llama.h: llama_sampler_init_*, llama_sampler_apply, llama_sampler_accept) in the prebuilt
libllama that the npm package @node-llama-cpp/linux-x64@3.22.1 ships (llama.cpp release v0.5.0,
built for x86-64 with GCC 11, SSE2, no FMA), loaded with ctypes. None of them needs a model: they
work on a llama_token_data_array built from the logits exactly as llama_sampler_sample builds it
(every token in id order, p 0, unsorted). scripts/setup.sh --tests installs the package.

Usage:
  llama_cpp_sampling.py --lib LIBLLAMA --vectors DIR
      reads DIR/vectors.f32 (hf_processors.py --vectors writes it) and writes DIR/llama-cases.json:
      each vector through one configuration, sampler by sampler, recording after each the array
      (size, sorted, and a hash of every (id, logit bits) in order), then dist's pick and its p.
      One dist sampler per configuration draws through its vectors in order; the penalties sampler
      is reset and fed the vector's history (llama_sampler_accept) before each vector.
  llama_cpp_sampling.py --lib LIBLLAMA --model DIR --out FILE
      whole generations on a model (gpt2_reference.py's forward pass, use_cache=False, the head on
      the last position: hf_processors.Logits), each with
      one llama_sampler_chain as common_sampler_init builds it, the prompt accepted first as
      llama-completion does (tools/completion), then every sampled token.
"""
import argparse
import ctypes
import json
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from framework_hash import float_bits, segment_counts, segment_hashes  # noqa: E402
import torch_threads  # noqa: E402

TOKEN_DTYPE = np.dtype([("id", "<i4"), ("logit", "<f4"), ("p", "<f4")])


class TokenData(ctypes.Structure):
    _fields_ = [("id", ctypes.c_int32), ("logit", ctypes.c_float), ("p", ctypes.c_float)]


class TokenDataArray(ctypes.Structure):
    _fields_ = [("data", ctypes.POINTER(TokenData)), ("size", ctypes.c_size_t),
                ("selected", ctypes.c_int64), ("sorted", ctypes.c_bool)]


class ChainParams(ctypes.Structure):
    _fields_ = [("no_perf", ctypes.c_bool)]


class LogitBias(ctypes.Structure):
    _fields_ = [("token", ctypes.c_int32), ("bias", ctypes.c_float)]


class Llama:
    def __init__(self, path):
        self.lib = lib = ctypes.CDLL(path)
        vp = ctypes.c_void_p
        f, i32, sz, u32 = ctypes.c_float, ctypes.c_int32, ctypes.c_size_t, ctypes.c_uint32
        sigs = {
            "llama_sampler_init_logit_bias": [i32, i32, ctypes.POINTER(LogitBias)],
            "llama_sampler_init_penalties": [i32, i32, f, f, f],
            "llama_sampler_init_top_n_sigma": [f],
            "llama_sampler_init_top_k": [i32],
            "llama_sampler_init_typical": [f, sz],
            "llama_sampler_init_top_p": [f, sz],
            "llama_sampler_init_min_p": [f, sz],
            "llama_sampler_init_temp_ext": [f, f, f],
            "llama_sampler_init_dist": [u32],
            "llama_sampler_chain_init": [ChainParams],
        }
        for name, args in sigs.items():
            fn = getattr(lib, name)
            fn.argtypes = args
            fn.restype = vp
        lib.llama_sampler_chain_default_params.restype = ChainParams
        lib.llama_sampler_chain_add.argtypes = [vp, vp]
        lib.llama_sampler_apply.argtypes = [vp, ctypes.POINTER(TokenDataArray)]
        lib.llama_sampler_accept.argtypes = [vp, i32]
        lib.llama_sampler_reset.argtypes = [vp]
        lib.llama_sampler_free.argtypes = [vp]
        lib.llama_sampler_name.argtypes = [vp]
        lib.llama_sampler_name.restype = ctypes.c_char_p

    def stage(self, name, c, n_vocab):
        """The sampler common_sampler_init adds for stage `name` with configuration `c`."""
        L = self.lib
        min_keep = c.get("min_keep", 0)
        if name == "logit_bias":
            biases = c.get("logit_bias", [])
            arr = (LogitBias * max(len(biases), 1))(*[LogitBias(t, b) for t, b in biases])
            return L.llama_sampler_init_logit_bias(n_vocab, len(biases), arr)
        if name == "penalties":
            return L.llama_sampler_init_penalties(n_vocab, c.get("repeat_last_n", 64), c.get("repeat_penalty", 1.0),
                                                  c.get("frequency_penalty", 0.0), c.get("presence_penalty", 0.0))
        if name == "top_n_sigma":
            return L.llama_sampler_init_top_n_sigma(c.get("top_n_sigma", -1.0))
        if name == "top_k":
            return L.llama_sampler_init_top_k(c.get("top_k", 40))
        if name == "typical_p":
            return L.llama_sampler_init_typical(c.get("typical_p", 1.0), min_keep)
        if name == "top_p":
            return L.llama_sampler_init_top_p(c.get("top_p", 0.95), min_keep)
        if name == "min_p":
            return L.llama_sampler_init_min_p(c.get("min_p", 0.05), min_keep)
        if name == "temperature":
            return L.llama_sampler_init_temp_ext(c.get("temperature", 0.8), c.get("dynatemp_range", 0.0),
                                                 c.get("dynatemp_exponent", 1.0))
        raise ValueError(name)


ORDER = ["penalties", "top_n_sigma", "top_k", "typical_p", "top_p", "min_p", "temperature"]


def stages_of(c):
    """The chain's stages in order: logit_bias (when there are biases), the seven, then dist.
    genrepro records only the stages that are not no-ops; llama.cpp's no-ops are applied here too
    (they leave the array untouched), and the test compares the stages genrepro lists."""
    order = ["logit_bias"] if c.get("logit_bias") else []
    return order + c.get("order", ORDER)


def snapshot(a):
    """The candidate array `a` points at, copied out as bytes laid out as llama_token_data: wherever a
    sampler left data, size entries from there."""
    if a.size == 0:
        return b""
    return ctypes.string_at(a.data, a.size * ctypes.sizeof(TokenData))


def finite(a):
    return int(np.count_nonzero(np.frombuffer(snapshot(a), dtype=TOKEN_DTYPE)["logit"] != -np.inf))


class Hashes:
    """The finite counts and hashes of the arrays one_case snapshots, filled into its records a
    megabyte of arrays at a time: numpy's per-call overhead on each of some 50,000 short arrays, one
    at a time, cost more than hashing their words did (framework_hash.segment_hashes); much larger
    batches fall out of the caches. The C++ test computes the same:
      a stage's array: the number of logits other than -inf, and framework_hash.word_hash of
        (id << 32) | logit bits for every candidate, in the array's order;
      dist's (p_hash): framework_hash.word_hash of every candidate's p bits, in the array's order."""

    LIMIT = 1 << 20  # bytes

    def __init__(self):
        self.stages, self.picks, self.held = [], [], 0

    def stage(self, record, snap):
        """record[2] (finite) and record[4] (hash) of the snapshot `snap`."""
        self.stages.append((record, snap))
        self.hold(len(snap))

    def pick(self, case, snap):
        """case["p_hash"] of the snapshot `snap`."""
        self.picks.append((case, snap))
        self.hold(len(snap))

    def hold(self, nbytes):
        self.held += nbytes
        if self.held >= self.LIMIT:
            self.flush()

    def flush(self):
        if self.stages:
            records, v, sizes = self.unpack(self.stages)
            words = (v["id"].astype(np.uint32).astype(np.uint64) << np.uint64(32)) | float_bits(v["logit"])
            for r, f, h in zip(records, segment_counts(v["logit"] != -np.inf, sizes), segment_hashes(words, sizes)):
                r[2], r[4] = f, h
        if self.picks:
            cases, v, sizes = self.unpack(self.picks)
            for c, h in zip(cases, segment_hashes(float_bits(v["p"]), sizes)):
                c["p_hash"] = h
        self.stages, self.picks, self.held = [], [], 0

    @staticmethod
    def unpack(pending):
        targets, snaps = zip(*pending)
        return targets, np.frombuffer(b"".join(snaps), dtype=TOKEN_DTYPE), [len(b) // TOKEN_DTYPE.itemsize for b in snaps]


def candidates(logits):
    """llama_sampler_sample's array: every token in id order, its logit, p 0, unsorted. Built in a
    numpy buffer laid out as llama_token_data (int32 id, float logit, float p)."""
    n = len(logits)
    buf = np.zeros(n, dtype=TOKEN_DTYPE)
    buf["id"] = np.arange(n, dtype=np.int32)
    buf["logit"] = np.asarray(logits, dtype=np.float32)
    data = (TokenData * n).from_buffer(buf)
    return buf, data, TokenDataArray(data, n, -1, False)


CONFIGS = [
    {"name": "defaults", "seed": 1},
    {"name": "no-filters", "temperature": 1.0, "top_k": 0, "top_p": 1.0, "min_p": 0.0, "seed": 2},
    {"name": "greedy", "temperature": 0.0, "seed": 3},
    {"name": "greedy-no-filters", "temperature": 0.0, "top_k": 0, "top_p": 1.0, "min_p": 0.0, "seed": 4},
    {"name": "penalties", "repeat_penalty": 1.3, "repeat_last_n": 64, "frequency_penalty": 0.5,
     "presence_penalty": 0.3, "seed": 5},
    {"name": "penalties-window8", "repeat_penalty": 0.8, "repeat_last_n": 8, "top_k": 0, "seed": 6},
    {"name": "top_k200", "top_k": 200, "top_p": 1.0, "min_p": 0.0, "temperature": 1.0, "seed": 7},
    {"name": "top_k10", "top_k": 10, "min_p": 0.0, "seed": 8},
    {"name": "typical0.5", "typical_p": 0.5, "top_k": 0, "top_p": 1.0, "min_keep": 3, "seed": 9},
    {"name": "top_p0.9-unsorted", "top_k": 0, "top_p": 0.9, "min_p": 0.0, "seed": 10},
    {"name": "top_p0.999-unsorted", "top_k": 0, "top_p": 0.999, "min_p": 0.0, "temperature": 1.5, "seed": 11},
    {"name": "min_p0.1-unsorted", "top_k": 0, "top_p": 1.0, "min_p": 0.1, "seed": 12},
    {"name": "min_p0.2-keep5", "top_k": 0, "top_p": 1.0, "min_p": 0.2, "min_keep": 5, "seed": 13},
    {"name": "top_n_sigma1", "top_n_sigma": 1.0, "top_k": 0, "top_p": 1.0, "min_p": 0.0, "seed": 14},
    {"name": "dynatemp", "dynatemp_range": 0.5, "dynatemp_exponent": 1.5, "seed": 15},
    {"name": "logit_bias", "logit_bias": [[0, -math.inf], [3, 2.5], [5, -1.0], [3, 0.5]], "seed": 16},
    {"name": "temperature-first", "order": ["temperature", "penalties", "top_n_sigma", "top_k", "typical_p", "top_p", "min_p"],
     "temperature": 0.5, "repeat_penalty": 1.1, "seed": 17},
    {"name": "everything", "repeat_penalty": 1.2, "frequency_penalty": 0.1, "presence_penalty": 0.1,
     "top_n_sigma": 2.0, "top_k": 150, "typical_p": 0.95, "top_p": 0.9, "min_p": 0.02, "temperature": 0.7,
     "logit_bias": [[2, -math.inf]], "min_keep": 2, "seed": 18},
]


# Every vector once more through one of these: top-n-sigma and dynamic temperature (temp_ext) each on
# 1,500 vectors, with n from below one sigma to past the tail, and temp_ext's edges: a range wider than
# the temperature (min_temp clamps to 0), exponent 0 (always the top of the range) and below 1, a
# temperature of 0 inside the range, each alone and behind llama.cpp's default filters.
SWEEP = [
    {"name": "sweep-sigma0.5", "top_n_sigma": 0.5, "top_k": 0, "top_p": 1.0, "min_p": 0.0, "seed": 31},
    {"name": "dynatemp-wide", "dynatemp_range": 1.5, "dynatemp_exponent": 1.0, "temperature": 1.0, "top_k": 0,
     "top_p": 1.0, "min_p": 0.0, "seed": 32},
    {"name": "sweep-sigma1.5-defaults", "top_n_sigma": 1.5, "seed": 33},
    {"name": "dynatemp-exp0", "dynatemp_range": 0.5, "dynatemp_exponent": 0.0, "seed": 34},
    {"name": "sweep-sigma3", "top_n_sigma": 3.0, "top_k": 0, "min_p": 0.0, "temperature": 1.2, "seed": 35},
    {"name": "dynatemp-exp0.4", "dynatemp_range": 0.6, "dynatemp_exponent": 0.4, "top_k": 0, "top_p": 1.0, "seed": 36},
    {"name": "sweep-sigma1-penalties", "top_n_sigma": 1.0, "repeat_penalty": 1.3, "top_k": 0, "top_p": 0.9, "seed": 37},
    {"name": "dynatemp-t0-in-range", "dynatemp_range": 0.5, "dynatemp_exponent": 2.0, "temperature": 0.25, "top_k": 100,
     "seed": 38},
    {"name": "sweep-sigma8", "top_n_sigma": 8.0, "top_k": 0, "top_p": 1.0, "min_p": 0.0, "seed": 39},
    {"name": "dynatemp-sigma", "dynatemp_range": 0.3, "dynatemp_exponent": 1.0, "top_n_sigma": 2.0, "top_k": 0, "seed": 40},
]


def json_safe(v):
    """-inf as genrepro writes it ("-Infinity"), so the file is JSON."""
    if isinstance(v, float) and math.isinf(v):
        return "-Infinity" if v < 0 else "Infinity"
    if isinstance(v, list):
        return [json_safe(x) for x in v]
    if isinstance(v, dict):
        return {k: json_safe(x) for k, x in v.items()}
    return v


def read_vectors(path, sizes):
    blob = np.fromfile(path, dtype="<f4")
    offsets = np.cumsum([0] + sizes)
    return [blob[offsets[i]:offsets[i + 1]] for i in range(len(sizes))]


def one_case(llama, dists, c, i, x, ids, hashes):
    """Vector i through configuration c, sampler by sampler, then c's dist sampler. The hashes are
    `hashes`' to fill in (Hashes)."""
    n = len(x)
    buf, data, a = candidates(x)
    records = []
    for name in stages_of(c):
        s = llama.stage(name, c, n)
        if name == "penalties":
            for t in ids:  # the history, prompt included
                llama.lib.llama_sampler_accept(s, t)
        llama.lib.llama_sampler_apply(s, ctypes.byref(a))
        llama.lib.llama_sampler_free(s)
        records.append([name, a.size, None, bool(a.sorted), None])
        hashes.stage(records[-1], snapshot(a))
    if finite(a) == 0:
        return {"vector": i, "config": c["name"], "ids": ids, "stages": records, "token": None}
    llama.lib.llama_sampler_apply(dists[c["name"]], ctypes.byref(a))
    case = {"vector": i, "config": c["name"], "ids": ids, "stages": records,
            "selected": a.selected, "token": int(a.data[a.selected].id), "p_hash": None}
    hashes.pick(case, snapshot(a))
    return case


def write_cases(llama, vectors_dir, vectors=None, hf_cases=None):
    """DIR/llama-cases.json for the vectors hf_processors.py wrote: from memory when the caller has
    them (framework_references.py, one process), else read back from DIR."""
    if hf_cases is None:
        with open(os.path.join(vectors_dir, "cases.json")) as f:
            hf_cases = json.load(f)["cases"]
    if vectors is None:
        vectors = read_vectors(os.path.join(vectors_dir, "vectors.f32"), [c["size"] for c in hf_cases])
    dists = {c["name"]: llama.lib.llama_sampler_init_dist(c["seed"]) for c in CONFIGS + SWEEP}
    hashes = Hashes()
    cases = [one_case(llama, dists, CONFIGS[i % len(CONFIGS)], i, x, hc["ids"], hashes) for i, (x, hc) in enumerate(zip(vectors, hf_cases))]
    sweep = [one_case(llama, dists, SWEEP[i % len(SWEEP)], i, x, hc["ids"], hashes) for i, (x, hc) in enumerate(zip(vectors, hf_cases))]
    hashes.flush()
    for d in dists.values():
        llama.lib.llama_sampler_free(d)
    with open(os.path.join(vectors_dir, "llama-cases.json"), "w") as f:
        f.write(json.dumps({"configs": json_safe(CONFIGS + SWEEP), "cases": cases, "sweep": sweep}))  # dumps uses the C encoder (dump the Python one)


LOOP_CONFIGS = [
    {"name": "llamacpp-defaults", "seed": 42},
    {"name": "llamacpp-penalties", "repeat_penalty": 1.3, "frequency_penalty": 0.2, "presence_penalty": 0.1, "seed": 42},
    {"name": "llamacpp-greedy-penalties", "temperature": 0.0, "repeat_penalty": 1.5, "seed": 0},
    {"name": "llamacpp-typical-dynatemp", "typical_p": 0.8, "dynatemp_range": 0.3, "top_k": 0, "seed": 7},
    {"name": "llamacpp-top-n-sigma-dynatemp", "top_n_sigma": 1.0, "dynatemp_range": 0.5, "dynatemp_exponent": 0.5,
     "top_k": 0, "temperature": 1.0, "seed": 11},
]


def generation(llama, model, prompt_ids, c, max_new_tokens):
    """One generation on `model` (hf_processors.Logits: gpt2_reference.py's forward pass, use_cache=False,
    the last position's logits, as llama.cpp's completion computes only those)."""
    L = llama.lib
    chain = L.llama_sampler_chain_init(L.llama_sampler_chain_default_params())
    for name in stages_of(c):
        L.llama_sampler_chain_add(chain, llama.stage(name, c, model.n_vocab))
    L.llama_sampler_chain_add(chain, L.llama_sampler_init_dist(c["seed"]))
    for t in prompt_ids:
        L.llama_sampler_accept(chain, t)
    ids, new = list(prompt_ids), []
    for _ in range(max_new_tokens):
        if len(ids) >= model.n_positions:
            break
        buf, data, a = candidates(model.last(ids).numpy())
        L.llama_sampler_apply(chain, ctypes.byref(a))
        token = int(a.data[a.selected].id)
        L.llama_sampler_accept(chain, token)
        ids.append(token)
        new.append(token)
        if token == model.eos:
            break
    L.llama_sampler_free(chain)
    return new


def write_loops(llama, model, prompt, max_new_tokens, out):
    runs = [{"config": c, "ids": generation(llama, model, prompt, c, max_new_tokens)} for c in LOOP_CONFIGS]
    with open(out, "w") as f:
        f.write(json.dumps(json_safe({"prompt_ids": prompt, "max_new_tokens": max_new_tokens, "runs": runs})))


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lib", required=True, help="libllama.so of @node-llama-cpp/linux-x64@3.22.1")
    ap.add_argument("--vectors", metavar="DIR")
    ap.add_argument("--model")
    ap.add_argument("--prompt-ids", default="1169,7850,3331,373")
    ap.add_argument("--max-new-tokens", type=int, default=60)
    ap.add_argument("--out", metavar="FILE")
    a = ap.parse_args(argv)
    llama = Llama(a.lib)
    if a.vectors:
        write_cases(llama, a.vectors)
    if a.model:
        import torch
        import hf_processors
        torch_threads.use_threads(torch)
        write_loops(llama, hf_processors.Logits(a.model), [int(t) for t in a.prompt_ids.split(",")], a.max_new_tokens, a.out)


if __name__ == "__main__":
    main(sys.argv[1:])
