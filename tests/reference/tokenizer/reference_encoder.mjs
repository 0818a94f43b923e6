// The reference GPT-2 encoder behind the tokenizer fixtures, shared by make_reference.mjs (which
// wrote corpus.jsonl and unseen.jsonl) and check_reference_ids.mjs (which re-encodes their
// strings and compares the ids).
//
// The reference is the npm package gpt-tokenizer, encoding r50k_base (GPT-2's vocabulary and
// merges, its own BPE implementation and V8's regex engine). A literal "<|endoftext|>" becomes
// 50256, as in Hugging Face's GPT2Tokenizer: the text is split on it and the parts are encoded,
// because gpt-tokenizer 3.4.0's own special-token search (a sticky regex) only finds special
// tokens at the start of the text and computes wrong offsets after the first one
// ("a<|endoftext|>b" comes out as plain text). One more change: GPT-2's pattern says \s, which in
// Python's `regex` module (OpenAI's encoder.py, Hugging Face, tiktoken) is Unicode's White_Space
// property, but in JavaScript also matches U+FEFF and not U+0085. The reference here spells \s as
// White_Space, like GPT-2. `encodeStock` is the unchanged r50k_base, for make_reference.mjs's
// check that the two differ only on strings holding U+0085 or U+FEFF.
//
// \p{L} and \p{N} are V8's, i.e. the Unicode version of the ICU that node was built with
// (process.versions.unicode): Debian 12's node 18.20.4 has Unicode 15.0, the node 20.20.2 that wrote
// the fixtures Unicode 17.0, and genrepro's C++ tokenizer (PCRE2 10.42) Unicode 14.0. The letters
// and numbers that Unicode 15.0 to 17.0 added are in NEWER_THAN_UNICODE_14.
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

export const END_OF_TEXT = '<|endoftext|>'
export const END_OF_TEXT_ID = 50256

// Letters and numbers assigned after Unicode 14.0 (Unicode 15.0 to 17.0). Node 20 classifies
// them with Unicode 17.0, the C++ tokenizer's PCRE2 10.42 with Unicode 14.0 (to it they are
// unassigned, so punctuation), so GPT-2's ids for them depend on the Unicode version of whichever
// regex engine runs the pattern. Found by comparing /\p{L}/u, /\p{N}/u on node 20 with PCRE2's
// \p{L}, \p{N} on every scalar value (docs/tokenizer.md).
export const NEWER_THAN_UNICODE_14 = [
  [0x88f, 0x88f], [0xc5c, 0xc5c], [0xcdc, 0xcdc], [0x1c89, 0x1c8a], [0xa7cb, 0xa7cf], [0xa7d2, 0xa7d2],
  [0xa7d4, 0xa7d4], [0xa7da, 0xa7dc], [0xa7f1, 0xa7f1], [0x105c0, 0x105f3], [0x10940, 0x10959],
  [0x10d40, 0x10d65], [0x10d6f, 0x10d85], [0x10ec2, 0x10ec7], [0x1123f, 0x11240], [0x11380, 0x113d3],
  [0x116d0, 0x116e3], [0x11bc0, 0x11bf9], [0x11db0, 0x11de9], [0x11f02, 0x11f59], [0x1342f, 0x1342f],
  [0x13441, 0x13446], [0x13460, 0x143fa], [0x16100, 0x16139], [0x16d40, 0x16d79], [0x16ea0, 0x16ed3],
  [0x16ff2, 0x16ff6], [0x187f8, 0x187ff], [0x18cff, 0x18cff], [0x18d09, 0x18d1e], [0x18d80, 0x18df2],
  [0x1b132, 0x1b132], [0x1b155, 0x1b155], [0x1ccf0, 0x1ccf9], [0x1d2c0, 0x1d2d3], [0x1df25, 0x1df2a],
  [0x1e030, 0x1e06d], [0x1e4d0, 0x1e4f9], [0x1e5d0, 0x1e5fa], [0x1e6c0, 0x1e6ff], [0x2b739, 0x2b73f],
  [0x2cea2, 0x2cead], [0x2ebf0, 0x2ee5d], [0x31350, 0x33479],
]
export const inNewerThanUnicode14 = (cp) => NEWER_THAN_UNICODE_14.some(([lo, hi]) => cp >= lo && cp <= hi)

const WHITE_SPACE = String.raw`\t\n\x0B\f\r \x85\xA0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000`
export const GPT2_PATTERN = new RegExp(
  String.raw`'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^${WHITE_SPACE}\p{L}\p{N}]+|[${WHITE_SPACE}]+(?![^${WHITE_SPACE}])|[${WHITE_SPACE}]+`,
  'gu')

// Loads gpt-tokenizer from its package directory (.deps/node_modules/gpt-tokenizer).
export async function loadReference(packageDir) {
  const load = (p) => import(pathToFileURL(join(packageDir, 'esm', p)).href)
  const { GptEncoding } = await load('GptEncoding.js')
  const { R50KBase } = await load('encodingParams/r50k_base.js')
  const ranks = (await load('bpeRanks/r50k_base.js')).default
  const stock = await load('encoding/r50k_base.js')
  const gpt2 = new GptEncoding({ ...R50KBase(ranks), tokenSplitRegex: GPT2_PATTERN })

  // Reference ids: the parts between literal "<|endoftext|>" encoded as ordinary text.
  const encodeWith = (encoding, text) => {
    const ids = []
    text.split(END_OF_TEXT).forEach((part, i) => {
      if (i > 0) ids.push(END_OF_TEXT_ID)
      ids.push(...encoding.encode(part))
    })
    return ids
  }

  // The reference's bytes for `ids`, decoded strictly. (gpt-tokenizer's own decode() shares one
  // streaming TextDecoder between calls, so a call after one that ended mid-character is garbled.)
  const decode = (ids) => {
    const encoder = new TextEncoder()
    const parts = [...gpt2.bytePairEncodingCoreProcessor.decodeNativeGenerator(ids)].map((p) =>
      typeof p === 'string' ? encoder.encode(p) : p)
    const bytes = new Uint8Array(parts.reduce((s, p) => s + p.length, 0))
    let at = 0
    for (const p of parts) { bytes.set(p, at); at += p.length }
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  }

  return {
    encode: (text) => encodeWith(gpt2, text),
    encodeStock: (text) => encodeWith(stock, text),
    decode,
  }
}
