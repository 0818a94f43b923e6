// Made the tokenizer's reference fixtures: deterministic mixed corpora of strings, each with the
// token ids an independent GPT-2 encoder gives it.
//
//   node tests/reference/tokenizer/make_reference.mjs [--out DIR]
// (after scripts/setup.sh installed .deps; DIR defaults to this script's directory)
// writes corpus.jsonl (the corpus the tokenizer was developed against) and unseen.jsonl (another
// seed and another mix of generators, kept for the final check), one {"text", "ids"} per line.
// The reference encoder (gpt-tokenizer's r50k_base with GPT-2's \s) is in reference_encoder.mjs.
//
// The committed files are the fixture, not this script's output on whatever machine runs it: the
// strings it draws depend on node's Unicode version. It skips random code points that are letters
// or numbers assigned after Unicode 14.0, asking V8's /\p{L}/, /\p{N}/; a node with another
// Unicode version skips other code points, and from there on the random generator's stream, and
// so every later string, shifts. The committed files are what node 20.20.2 (ICU 78.2, Unicode
// 17.0) writes; Debian 12's node 18.20.4 (ICU 72.1, Unicode 15.0) draws U+13472, U+A7CF and others
// that Unicode 16.0 and 17.0 made letters, and its corpus.jsonl differs from line 12 on, unseen.jsonl
// from line 68 on (the ids of the strings both write are the same). So the CTest reference.tokenizer.reference_ids (check_reference_ids.mjs) does not
// regenerate them: it re-encodes the committed strings and compares the ids.
import { writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { inNewerThanUnicode14, loadReference } from './reference_encoder.mjs'

const here = dirname(fileURLToPath(import.meta.url))
const outFlag = process.argv.indexOf('--out')
const outDir = outFlag >= 0 ? process.argv[outFlag + 1] : here
const reference = await loadReference(join(here, '..', '..', '..', '.deps', 'node_modules', 'gpt-tokenizer'))
const FIXTURE_UNICODE = '17.0'
if (process.versions.unicode !== FIXTURE_UNICODE) {
  console.error(`make_reference.mjs: this node has Unicode ${process.versions.unicode}, the committed fixtures were ` +
                `written with ${FIXTURE_UNICODE}; the random strings will differ from theirs`)
}

// Random code points are not drawn from the letters and numbers assigned after Unicode 14.0
// (reference_encoder.mjs): GPT-2's ids for them depend on the Unicode version of whichever regex
// engine runs the pattern. The test below is V8's own /\p{L}/, /\p{N}/, so which code points of
// those ranges are skipped, and with them the random strings, depends on node's Unicode version.
const isNewerLetterOrNumber = (cp) => inNewerThanUnicode14(cp) && /[\p{L}\p{N}]/u.test(String.fromCodePoint(cp))

// mulberry32: a small deterministic generator, so the corpus is the same on every machine (with the
// same Unicode version, see above).
function rng(seed) {
  let a = seed >>> 0
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (lo, hi) => lo + Math.floor(next() * (hi - lo + 1))
  const pick = (xs) => xs[int(0, xs.length - 1)]
  const chance = (p) => next() < p
  const repeat = (n, f, sep = '') => Array.from({ length: n }, f).join(sep)
  return { next, int, pick, chance, repeat }
}

const WORDS = `the of and to in is was that for it with as his on be at by had are but from or have an they
which one you were her all she there would their we him been has when who will more no if out so said what
up its about into than them can only other new some could time these two may then do first any my now such
like our over man me even most made after also did many before must through back years where much your way
well down should because each just those people how too little state good very make world still own see
men work long get here between both life being under never day same another know while last might us great
old year off come since against go came right used take three river bank model token sample greedy nucleus
temperature probability distribution softmax logits kernel tensor vocabulary prompt`.split(/\s+/)
const ACCENTED = `café naïve résumé façade Ångström Ærøskøbing São Paulo jalapeño über Straße Größe fiancée
déjà vu Zürich Kraków Łódź żółć Dvořák Škoda Ærø Þórr Reykjavík Hồ Chí Minh Nguyễn Việt Tiếng İstanbul
ağaç çiçek Ğ œuvre cœur Ñandú crème brûlée piñata Fjällräven Mötley`.split(/\s+/)
const SCRIPTS = {
  chinese: ['我们', '今天', '天气', '很好', '中文', '分词器', '模型', '生成', '温度', '概率', '河岸', '的', '是', '了'],
  japanese: ['こんにちは', '世界', 'カタカナ', 'ひらがな', '東京', 'トークン', 'です', 'ます', '日本語', 'ラーメン'],
  korean: ['안녕하세요', '세계', '한국어', '토큰', '모델', '강둑', '입니다', '사랑'],
  arabic: ['مرحبا', 'بالعالم', 'اللغة', 'العربية', 'نموذج', 'كلمة', 'ضفة', 'النهر', '٠١٢٣٤٥٦٧٨٩'],
  hebrew: ['שלום', 'עולם', 'עברית', 'מודל', 'אסימון'],
  devanagari: ['नमस्ते', 'दुनिया', 'हिन्दी', 'भाषा', 'मॉडल', 'नदी', 'किनारा', '१२३४५', 'क्षत्रिय', 'श्री'],
  cyrillic: ['Привет', 'мир', 'русский', 'язык', 'модель', 'берег', 'реки', 'Ёлка', 'їжак', 'Ґанок'],
  greek: ['Γειά', 'σου', 'κόσμε', 'ελληνικά', 'μοντέλο', 'ὄχθη', 'ποταμοῦ', 'Ωμέγα'],
  thai: ['สวัสดี', 'ชาวโลก', 'ภาษาไทย', 'โมเดล', 'ริมฝั่ง'],
  tamil: ['வணக்கம்', 'உலகம்', 'தமிழ்'],
  other: ['ሰላም', 'Բարեւ', 'გამარჯობა', 'ᠮᠣᠩᠭᠣᠯ', 'ꦗꦮ', 'ᐊᐃᓐᓇ', '𐌰𐌱𐌲', '𝔘𝔫𝔦𝔠𝔬𝔡𝔢', '𝟙𝟚𝟛', 'Ⅻ', '½', '²³', '①②'],
}
const EMOJI = ['😀', '😂', '🤖', '🚀', '❤️', '✨', '🔥', '👍', '🎉', '🐍', '🦀', '☕', '⭐', '✅', '❌', '♻️', '©️', '™']
const SKIN = ['\u{1F3FB}', '\u{1F3FC}', '\u{1F3FD}', '\u{1F3FE}', '\u{1F3FF}']
const ZWJ_SEQUENCES = ['👩‍💻', '👨‍👩‍👧‍👦', '🏳️‍🌈', '🧑🏽‍🚀', '👩🏿‍🔬', '🐻‍❄️', '❤️‍🔥', '👁️‍🗨️', '🏴‍☠️', '🧔‍♂️']
const FLAGS = ['🇫🇷', '🇯🇵', '🇺🇸', '🇮🇳', '🇧🇷', '🏴󠁧󠁢󠁳󠁣󠁴󠁿']
const KEYCAPS = ['1️⃣', '#️⃣', '*️⃣']
const INVISIBLE = ['\u200B', '\u200C', '\u200D', '\u2060', '\uFEFF', '\u00A0', '\u202F', '\u2007', '\u3000',
  '\u2028', '\u2029', '\u0085', '\u180E', '\u1680', '\u000B', '\u000C', '\u001C', '\u001F', '\u00AD', '\u2009', '\u200A',
  '\u205F', '\u2003', '\u00A0\u00A0', '\r', '\r\n']
const PUNCT = ['!', '?', '.', ',', ';', ':', '-', '—', '–', '…', '«', '»', '“', '”', '‘', '’', '"', "'", '(', ')',
  '[', ']', '{', '}', '<', '>', '/', '\\', '|', '@', '#', '$', '%', '^', '&', '*', '_', '=', '+', '~', '`', '§', '¶',
  '•', '€', '£', '¥', '¿', '¡', '°', '±', '×', '÷', '→', '⇒', '∑', '∞', '≠', '≤', '√', '♥', '★', '、', '。', '「', '」', '！', '？']
const CONTRACTIONS = ["'s", "'t", "'re", "'ve", "'m", "'ll", "'d"]
const CODE = [
  'int main(int argc, char** argv) {', 'return 0;', '}', 'for (size_t i = 0; i < n; ++i) {', 'x += y * 2;',
  'def encode(self, text: str) -> list[int]:', 'return [self.encoder[t] for t in tokens]', 'if __name__ == "__main__":',
  'const ids = tokenizer.encode("hello world");', 'console.log(`ids: ${ids.join(",")}`);', '#include <vector>',
  'std::vector<int64_t> ids{1169, 7850, 3331, 373};', 'let mut v: Vec<u32> = Vec::new();', 'SELECT * FROM t WHERE id = 42;',
  '# comment: TODO(fix) this', '// NOTE: linear time', '/* block */', 'x = {"a": [1, 2.5, -3e10], "b": null}',
  'git commit -m "fix: tokenizer"', 'echo $HOME && ls -la | grep .cpp', '<div class="x">&nbsp;</div>', 'a->b->c;',
  'lambda x: x**2 % 7', 'i++; j--; k <<= 3;', '0xDEADBEEF', 'printf("%d\\n", x);', 'm.def("f", &f);', '@decorator',
]

function generators(r) {
  const word = () => r.pick(WORDS)
  const cap = (s) => s[0].toUpperCase() + s.slice(1)
  const sentence = () => {
    const n = r.int(3, 14)
    let s = cap(word())
    for (let i = 1; i < n; i++) s += (r.chance(0.08) ? ', ' : ' ') + (r.chance(0.05) ? word().toUpperCase() : word())
    return s + r.pick(['.', '.', '.', '!', '?', '...', ':', ';', '?!'])
  }
  const spaces = () => r.pick([' ', '  ', '   ', '    ', '\t', '\t\t', '\n', '\n\n', ' \n', '\n ', ' \t ', '\r\n', '        '])
  const randomCodePoint = () => {
    for (;;) {
      const plane = r.next()
      const cp = plane < 0.55 ? r.int(0x20, 0xffff) : plane < 0.8 ? r.int(0x10000, 0x2ffff) : plane < 0.9 ? r.int(0, 0x7f) : r.int(0x30000, 0x10ffff)
      if (cp >= 0xd800 && cp <= 0xdfff) continue
      if (isNewerLetterOrNumber(cp)) continue
      return String.fromCodePoint(cp)
    }
  }
  const scriptText = () => {
    const words = SCRIPTS[r.pick(Object.keys(SCRIPTS))]
    return r.repeat(r.int(1, 6), () => r.pick(words), r.pick([' ', '', ' ', '、', ', ']))
  }
  const emoji = () => {
    const kind = r.int(0, 4)
    if (kind === 0) return r.pick(['👍', '👋', '🙏', '💪', '🧑', '👩', '👶']) + r.pick(SKIN)
    if (kind === 1) return r.pick(ZWJ_SEQUENCES)
    if (kind === 2) return r.pick(FLAGS)
    if (kind === 3) return r.pick(KEYCAPS)
    return r.pick(EMOJI)
  }
  const combining = () => {
    const base = r.pick(['e', 'a', 'o', 'Z', 'n', 'i', 'x', '1', ' ', '!', 'क', 'ا'])
    return base + r.repeat(r.int(1, 5), () => String.fromCodePoint(r.int(0x300, 0x36f)))
  }
  return {
    prose: () => r.repeat(r.int(1, 3), sentence, r.pick([' ', '  ', '\n', '\n\n'])),
    code: () => r.repeat(r.int(1, 4), () => r.pick(['', '  ', '    ', '\t', '\t\t', '        ']) + r.pick(CODE), '\n'),
    whitespace: () => {
      const parts = r.repeat(r.int(1, 5), () => (r.chance(0.6) ? word() : '') + spaces())
      return (r.chance(0.3) ? spaces() : '') + parts + (r.chance(0.5) ? ' '.repeat(r.int(1, 4)) : '')
    },
    contractions: () => r.repeat(r.int(1, 4), () => {
      const c = r.pick(CONTRACTIONS)
      const suffix = r.chance(0.4) ? c.toUpperCase() : r.chance(0.2) ? "'" + c.slice(1, 2).toUpperCase() + c.slice(2) : c
      return r.pick(['I', 'you', 'we', 'they', 'it', 'IT', 'she', "rock'n'roll", 'don', 'DON', 'He', '']) + suffix +
        r.pick(['', ' ', "'", 's', '!', ' x']) + r.pick(['', ' ', " '", "''"])
    }, ' '),
    digits: () => r.repeat(r.int(1, 5), () => r.pick([
      String(r.int(0, 9)), String(r.int(0, 999999)), String(r.int(0, 2 ** 31)) + String(r.int(0, 2 ** 31)),
      `${r.int(0, 99)}.${r.int(0, 9999)}`, `${r.int(1, 999)},${String(r.int(0, 999)).padStart(3, '0')}`,
      `20${r.int(10, 30)}-${r.int(1, 12)}-${r.int(1, 28)}`, `v${r.int(0, 9)}.${r.int(0, 20)}.${r.int(0, 9)}`,
      `abc${r.int(0, 999)}def`, `${r.int(0, 9)}e-${r.int(0, 30)}`, '１２３', '٣٤٥', '४५६', '½', '¼', 'Ⅳ',
    ]), r.pick([' ', '', ', ', ' + ', '\n'])),
    punctuation: () => r.repeat(r.int(1, 6), () => r.repeat(r.int(1, 5), () => r.pick(PUNCT)) + (r.chance(0.4) ? ' ' : '') + (r.chance(0.3) ? word() : '')),
    accented: () => r.repeat(r.int(1, 8), () => (r.chance(0.3) ? cap(r.pick(ACCENTED)) : r.pick(ACCENTED)), ' ') + r.pick(['', '.', '!', ' ']),
    scripts: () => r.repeat(r.int(1, 3), scriptText, r.pick([' ', '。', '\n', '. '])),
    emoji: () => r.repeat(r.int(1, 6), () => (r.chance(0.3) ? word() + ' ' : '') + emoji(), r.pick(['', ' ', '  '])),
    combining: () => r.repeat(r.int(1, 5), () => (r.chance(0.5) ? word() : '') + combining(), r.pick(['', ' '])),
    invisible: () => r.repeat(r.int(1, 6), () => (r.chance(0.6) ? word() : r.pick(PUNCT)) + (r.chance(0.3) ? ' ' : '') +
      r.pick(INVISIBLE) + (r.chance(0.3) ? r.pick(INVISIBLE) : '')),
    endoftext: () => r.repeat(r.int(1, 3), () => r.pick([
      '<|endoftext|>', ' <|endoftext|> ', '<|endoftext|><|endoftext|>', '<|endoftext|', '<|endoftext |>',
      '<|ENDOFTEXT|>', '<|endoftext|>\n', '\n<|endoftext|>', '<<|endoftext|>>', '<|endoftext||>',
    ]) + (r.chance(0.5) ? sentence() : word()), r.pick(['', ' ', '\n'])),
    random: () => r.repeat(r.int(1, 24), randomCodePoint),
    mixed: null,
  }
}

function makeCorpus({ seed, count, weights }) {
  const r = rng(seed)
  const g = generators(r)
  const names = Object.keys(weights).filter((k) => k !== 'mixed')
  g.mixed = () => r.repeat(r.int(2, 5), () => g[r.pick(names)](), r.pick(['', ' ', '\n', '  ', '\t']))
  const table = Object.entries(weights)
  const total = table.reduce((s, [, w]) => s + w, 0)
  const seen = new Set()
  const texts = []
  while (texts.length < count) {
    let x = r.next() * total
    const [name] = table.find(([, w]) => (x -= w) < 0) ?? table[table.length - 1]
    const text = g[name]()
    if (text.length === 0 || seen.has(text)) continue
    seen.add(text)
    texts.push(text)
  }
  return texts
}

function write(file, texts) {
  let stockDiffers = 0
  const lines = texts.map((text) => {
    const ids = reference.encode(text)
    if (reference.decode(ids) !== text) throw new Error(`reference does not round-trip: ${JSON.stringify(text)}`)
    const stockIds = reference.encodeStock(text)
    if (JSON.stringify(stockIds) !== JSON.stringify(ids)) {
      if (!/[\u0085\uFEFF]/.test(text)) throw new Error(`unchanged r50k_base differs without U+0085/U+FEFF: ${JSON.stringify(text)}`)
      stockDiffers++
    }
    return JSON.stringify({ text, ids })
  })
  writeFileSync(join(outDir, file), lines.join('\n') + '\n')
  const bytes = texts.reduce((s, t) => s + Buffer.byteLength(t), 0)
  console.log(`${file}: ${texts.length} strings, ${bytes} bytes of text; unchanged r50k_base differs on ${stockDiffers} (all hold U+0085 or U+FEFF)`)
}

// The development corpus: every generator, weighted towards the usual cases.
write('corpus.jsonl', makeCorpus({
  seed: 20240607,
  count: 3000,
  weights: { prose: 14, code: 8, whitespace: 10, contractions: 8, digits: 7, punctuation: 7, accented: 6, scripts: 9,
    emoji: 7, combining: 5, invisible: 6, endoftext: 3, random: 6, mixed: 4 },
}))
// The held-out corpus: another seed and another mix, mostly fragments mixed across generators.
write('unseen.jsonl', makeCorpus({
  seed: 977,
  count: 2000,
  weights: { prose: 4, code: 4, whitespace: 5, contractions: 4, digits: 3, punctuation: 4, accented: 3, scripts: 5,
    emoji: 4, combining: 4, invisible: 5, endoftext: 2, random: 8, mixed: 45 },
}))
