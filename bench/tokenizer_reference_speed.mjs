// Encoding speed of the reference encoder (gpt-tokenizer, r50k_base = GPT-2) on the same strings
// bench/tokenizer_bench.cpp uses, in MB/s of UTF-8 text, to put genrepro's numbers next to.
//   node bench/tokenizer_reference_speed.mjs
// Cold: gpt-tokenizer's merge cache is cleared before each pass; warm: it holds every word.
// Times are CPU seconds (user + system), as Google Benchmark's default MB/s in tokenizer_bench.cpp,
// so that other work on a shared machine does not skew the comparison.
// Literal "<|endoftext|>" is split out first, as in tests/reference/tokenizer/make_reference.mjs.
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const r50k = await import(pathToFileURL(join(root, '.deps/node_modules/gpt-tokenizer/esm/encoding/r50k_base.js')).href)

const texts = ['corpus.jsonl', 'unseen.jsonl'].flatMap((name) =>
  readFileSync(join(root, 'tests/reference/tokenizer', name), 'utf8').trim().split('\n').map((l) => JSON.parse(l).text))
const bytes = texts.reduce((s, t) => s + Buffer.byteLength(t), 0)

const encodeAll = (list) => {
  let n = 0
  for (const t of list) for (const part of t.split('<|endoftext|>')) n += r50k.encode(part).length
  return n
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const PASSES = 15  // enough for a stable median on a shared machine; the first passes warm up V8

function measure(label, list, listBytes, clear) {
  const seconds = []
  for (let i = 0; i < PASSES; i++) {
    if (clear) r50k.clearMergeCache()
    const t0 = process.cpuUsage()
    encodeAll(list)
    const used = process.cpuUsage(t0)
    seconds.push((used.user + used.system) / 1e6)
  }
  const s = median(seconds)
  console.log(`${label}: ${(listBytes / 1e6 / s).toFixed(2)} MB/s (median of ${PASSES} passes, ${(s * 1e3).toFixed(1)} ms per pass)`)
}

console.log(`gpt-tokenizer r50k_base on ${texts.length} strings, ${bytes} bytes`)
measure('corpus cold', texts, bytes, true)
measure('corpus warm', texts, bytes, false)
let prose = ''
while (prose.length < 1 << 20) {
  prose += 'The river bank was quiet in the morning, and the model sampled the next token from the ' +
    'distribution it had computed; temperature 0.7 made it sharper, top-p 0.9 kept the nucleus. '
}
measure('prose warm', [prose], Buffer.byteLength(prose), false)
