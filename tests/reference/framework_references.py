#!/usr/bin/python3
"""Every framework reference of tests/reference/frameworks.cmake in as few processes as the data
allows: Hugging Face's processors (hf_processors.py) and llama.cpp's own samplers (llama_cpp_sampling.py,
libllama through ctypes) share one Python start-up, one torch import and, for whole generations,
one loaded model whose forward passes both frameworks' loops reuse.

Usage (both at once is one process, as ctest runs it):
  framework_references.py --vectors DIR [--llama-lib LIB]
      DIR/vectors.f32 and DIR/cases.json (hf_processors.py --vectors), then, from the same vectors
      in memory, DIR/llama-cases.json (llama_cpp_sampling.py --vectors)
  framework_references.py --model DIR --hf-out FILE [--llama-lib LIB --llama-out FILE]
      the whole generations of both (hf_processors.py --model, llama_cpp_sampling.py --model)

Without LIB on disk the llama.cpp half is left out, saying so, and what a former run wrote for it is
removed, so its C++ tests skip instead of comparing against stale data.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hf_processors  # noqa: E402
import torch_threads  # noqa: E402
import llama_cpp_sampling  # noqa: E402


def llama_or_none(lib, stale):
    if lib and os.path.exists(lib):
        return llama_cpp_sampling.Llama(lib)
    for path in stale:
        if path and os.path.exists(path):
            os.remove(path)
    print(f"llama.cpp references left out: {lib or '--llama-lib'} is missing; install it with "
          "scripts/setup.sh --tests (@node-llama-cpp/linux-x64@3.22.1)")
    return None


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vectors", metavar="DIR")
    ap.add_argument("--count", type=int, default=3000)
    ap.add_argument("--model", metavar="DIR")
    ap.add_argument("--hf-out", metavar="FILE")
    ap.add_argument("--llama-out", metavar="FILE")
    ap.add_argument("--llama-lib", metavar="LIB", help="libllama.so of @node-llama-cpp/linux-x64@3.22.1")
    ap.add_argument("--prompt-ids", default="1169,7850,3331,373")
    ap.add_argument("--max-new-tokens", type=int, default=60)
    a = ap.parse_args(argv)
    if not a.vectors and not a.model:
        ap.error("give --vectors DIR or --model DIR")
    if a.model and not a.hf_out:
        ap.error("--model needs --hf-out FILE")
    torch_threads.use_threads(hf_processors.torch)
    stale = [os.path.join(a.vectors, "llama-cases.json") if a.vectors else None, a.llama_out]
    llama = llama_or_none(a.llama_lib, stale) if a.vectors or a.llama_out else None
    if a.vectors:
        vectors, cases = hf_processors.write_vectors(a.vectors, a.count)
        if llama:
            llama_cpp_sampling.write_cases(llama, a.vectors, [v.numpy() for v in vectors], cases)
    if a.model:
        prompt = [int(t) for t in a.prompt_ids.split(",")]
        model = hf_processors.Logits(a.model)
        hf_processors.write_loops(model, prompt, a.max_new_tokens, a.hf_out)
        if llama and a.llama_out:
            llama_cpp_sampling.write_loops(llama, model, prompt, a.max_new_tokens, a.llama_out)
        print(f"{model.computed} forward passes for the loops' {len(model.memo)} distinct sequences")

if __name__ == "__main__":
    main(sys.argv[1:])
