// The CTest reference.tokenizer.reference_ids: re-encodes every committed string of corpus.jsonl
// and unseen.jsonl with the reference encoder (gpt-tokenizer, reference_encoder.mjs, under
// whatever node is installed) and fails unless it gives the committed ids.
//
//   node tests/reference/tokenizer/check_reference_ids.mjs .deps/node_modules/gpt-tokenizer
//
// The committed files are the fixture. make_reference.mjs documents how they were made, but its
// strings depend on node's Unicode version (see there), so they are not regenerated here; their ids
// are compared instead. Also checked, independently of any Unicode version: every line is a
// {"text", "ids"} pair, texts are unique, the ids decode byte for byte to the text, and
// unassigned_in_unicode_14.json lists only code points the fixtures hold (and, under Unicode 14.0
// or later, every fixture code point this node calls unassigned).
//
// The ids of a string depend on node's Unicode version only through code points whose class in
// GPT-2's pattern (letter, number, or neither) differs between versions. In the committed ids every
// code point unassigned in Unicode 14.0 is neither (make_reference.mjs skips the letters and
// numbers assigned in 15.0 to 17.0; PCRE2 10.42 in the C++ tokenizer, Unicode 14.0, agrees on all
// ids). So a string is left out of the id comparison, counted and named, when it holds
//   - a code point unassigned in Unicode 14.0 that this node calls a letter or number (a Unicode
//     version after 17.0 may assign some), or
//   - a code point assigned in Unicode 14.0 that this node calls unassigned (node built with a
//     Unicode version before 14.0).
// Under node 18 (Unicode 15.0) and node 20 (Unicode 17.0) no string is left out: all 5,000 are
// compared, and all agree.
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { END_OF_TEXT_ID, loadReference } from './reference_encoder.mjs'

const here = dirname(fileURLToPath(import.meta.url))
const packageDir = process.argv[2]
if (!packageDir) {
  console.error('usage: node check_reference_ids.mjs GPT_TOKENIZER_PACKAGE_DIR')
  process.exit(2)
}
let packageVersion
try {
  packageVersion = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')).version
} catch (e) {
  console.error(`check_reference_ids: no gpt-tokenizer in ${packageDir} (${e.message}); run scripts/setup.sh`)
  process.exit(1)
}
const reference = await loadReference(packageDir)
const engine = `gpt-tokenizer ${packageVersion} under node ${process.version} (ICU ${process.versions.icu}, Unicode ${process.versions.unicode})`

const unassignedFile = JSON.parse(readFileSync(join(here, 'unassigned_in_unicode_14.json'), 'utf8'))
const unassignedIn14 = new Set(unassignedFile.code_points.map((h) => parseInt(h, 16)))
const letterOrNumber = /^[\p{L}\p{N}]$/u
const unassigned = /^\p{Cn}$/u
const hex = (cp) => 'U+' + cp.toString(16).toUpperCase().padStart(4, '0')
const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i])

const problems = []
const fail = (message) => {
  problems.push(message)
  if (problems.length <= 5) console.log(message)
}
const seenUnassigned = new Set()
const leftOut = []
// A comparison that quietly compared little passes for nothing: of the 5,000 committed strings at
// least this many must be compared (under node 18 and 20 all are; a Unicode version far from 14.0
// may leave out a few dozen, never a tenth).
const MIN_COMPARED = 4500
let comparedTotal = 0

for (const name of ['corpus.jsonl', 'unseen.jsonl']) {
  const lines = readFileSync(join(here, name), 'utf8').split('\n')
  if (lines.at(-1) === '') lines.pop()
  const texts = new Set()
  let compared = 0
  lines.forEach((line, index) => {
    const where = `${name}:${index + 1}`
    let text, ids
    try {
      ({ text, ids } = JSON.parse(line))
    } catch (e) {
      return fail(`${where}: not JSON (${e.message})`)
    }
    if (typeof text !== 'string' || !Array.isArray(ids) || !ids.every((id) => Number.isInteger(id) && id >= 0 && id <= END_OF_TEXT_ID)) {
      return fail(`${where}: not a {"text": string, "ids": [0..${END_OF_TEXT_ID}]} line`)
    }
    if (texts.has(text)) return fail(`${where}: ${JSON.stringify(text)} is listed twice`)
    texts.add(text)

    let decoded
    try {
      decoded = reference.decode(ids)
    } catch (e) {
      decoded = `(not UTF-8: ${e.message})`
    }
    if (decoded !== text) fail(`${where}: the committed ids do not decode to the text\n  text    ${JSON.stringify(text)}\n  decoded ${JSON.stringify(decoded)}`)

    const versionDependent = []
    for (const ch of text) {
      const cp = ch.codePointAt(0)
      const newIn14 = unassignedIn14.has(cp)
      if (newIn14) seenUnassigned.add(cp)
      if (newIn14 && letterOrNumber.test(ch)) versionDependent.push(`${hex(cp)} (unassigned in Unicode 14.0, a letter or number here)`)
      else if (!newIn14 && unassigned.test(ch)) versionDependent.push(`${hex(cp)} (assigned in Unicode 14.0, unassigned here)`)
    }
    if (versionDependent.length > 0) {
      leftOut.push(`${where}: ${[...new Set(versionDependent)].join(', ')}`)
      return
    }

    compared++
    const got = reference.encode(text)
    if (!same(got, ids)) {
      const at = ids.findIndex((id, i) => got[i] !== id)
      fail(`${where}: ${JSON.stringify(text)}\n  ${engine}: ${JSON.stringify(got)}\n  committed ids${' '.repeat(Math.max(0, engine.length - 13))}: ${JSON.stringify(ids)}\n  first difference at id ${at < 0 ? ids.length : at}`)
    }
  })
  console.log(`${name}: ${lines.length} strings, ${compared} compared with ${engine}`)
  comparedTotal += compared
}
if (comparedTotal < MIN_COMPARED) fail(`only ${comparedTotal} strings compared, fewer than the ${MIN_COMPARED} required`)

const stale = [...unassignedIn14].filter((cp) => !seenUnassigned.has(cp))
if (stale.length > 0) {
  fail(`unassigned_in_unicode_14.json lists ${stale.length} code points no fixture holds (first ${hex(stale[0])}); rerun list_unassigned.py`)
}
// Left out is only what a Unicode version other than 14.0 to 17.0 explains: after 14.0 nothing becomes
// unassigned, and up to 17.0 none of the listed code points is a letter or number.
const [major, minor] = process.versions.unicode.split('.').map(Number)
const version = major + minor / 100
for (const [kind, explained] of [['assigned in Unicode 14.0, unassigned here', version < 14],
                                 ['unassigned in Unicode 14.0, a letter or number here', version > 17]]) {
  const unexplained = leftOut.filter((l) => l.includes(kind))
  if (unexplained.length > 0 && !explained) {
    fail(`${unexplained.length} strings hold code points ${kind}, which Unicode ${process.versions.unicode} does not explain ` +
         `(${unexplained[0]}): unassigned_in_unicode_14.json is wrong (rerun list_unassigned.py) or a fixture holds a ` +
         `letter or number assigned after Unicode 14.0`)
  }
}

if (leftOut.length > 0) {
  console.log(`${leftOut.length} strings left out of the id comparison: their ids depend on the Unicode version, ` +
              `and this node's ${process.versions.unicode} classes some of their code points otherwise than the committed ids do`)
  for (const l of leftOut.slice(0, 20)) console.log(`  ${l}`)
  if (leftOut.length > 20) console.log(`  ... and ${leftOut.length - 20} more`)
}
if (problems.length > 0) {
  if (problems.length > 5) console.log(`... and ${problems.length - 5} more`)
  console.log(`FAILED: ${problems.length} problems with the tokenizer reference fixtures`)
  process.exit(1)
}
console.log(`every compared string has the committed ids: ${comparedTotal} compared (at least ${MIN_COMPARED} required), ${leftOut.length} left out`)
