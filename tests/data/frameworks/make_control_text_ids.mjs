// Writes control-text-ids.json: the ids independent GPT-2 encoders give the texts of
// tests/unit/params/control_text_ids_test.cpp under each framework's rule for a control given as
// text (docs/sampling.md, "Tokens given as text"), so that test compares genrepro's encoding with
// encoders that share none of its code:
//
//   node tests/data/frameworks/make_control_text_ids.mjs .deps > tests/data/frameworks/control-text-ids.json
//
//   hf:        transformers' recipe tokenizer(text, add_prefix_space=True, add_special_tokens=False)
//              with GPT2TokenizerFast: the text split at each "<|endoftext|>" (its id, 50256), and
//              each non-empty part given a leading space unless it starts with one (tokenizers'
//              ByteLevel pre-tokenizer), then encoded by gpt-tokenizer's r50k_base
//              (tests/reference/tokenizer/reference_encoder.mjs, GPT-2's pattern);
//   llama.cpp: its server's common_tokenize(vocab, text, add_special=false, parse_special=false):
//              the text as written, "<|endoftext|>" as ordinary characters, encoded by the npm
//              package gpt-3-encoder (OpenAI's encoder.py ported to JavaScript; it knows no
//              special tokens at all).
import { createRequire } from 'node:module'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { END_OF_TEXT, END_OF_TEXT_ID, loadReference } from '../../reference/tokenizer/reference_encoder.mjs'

const here = dirname(fileURLToPath(import.meta.url))
const deps = resolve(process.argv[2] ?? join(here, '..', '..', '..', '.deps'))
const reference = await loadReference(join(deps, 'node_modules', 'gpt-tokenizer'))
const gpt3 = createRequire(import.meta.url)(join(deps, 'node_modules', 'gpt-3-encoder'))

const TEXTS = ['the cat', ' the cat', 'the', ' the', 'Hello', ' Hello', 'Hello world', 'river bank', '\nthe',
  "don't", 'héllo wörld', '!', '<|endoftext|>', 'a<|endoftext|>b', '<|endoftext|> the', '  two spaces']

const hf = (text) => {
  const ids = []
  text.split(END_OF_TEXT).forEach((part, i) => {
    if (i > 0) ids.push(END_OF_TEXT_ID)
    if (part === '') return
    ids.push(...reference.encode(part.startsWith(' ') ? part : ' ' + part))
  })
  return ids
}
const llamaCpp = (text) => gpt3.encode(text)

const cases = TEXTS.map((text) => ({ text, hf: hf(text), 'llama.cpp': llamaCpp(text) }))
process.stdout.write(JSON.stringify({
  made_by: 'node tests/data/frameworks/make_control_text_ids.mjs .deps (gpt-tokenizer r50k_base with GPT-2\'s pattern; gpt-3-encoder 1.1.4)',
  cases,
}, null, 1) + '\n')
