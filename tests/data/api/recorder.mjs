// The published resolver over a store written to a temporary folder, and the recording of what
// it answers in each scenario: shared by package_titles.mjs and package_signals.mjs.
// Run those from the oracle folder, so node_modules resolve (see each script's first lines).
import { Context } from '@deepseek-ai/cordis'
import SessionStore from '@deepseek-ai/dsh-session'
import JsonlSessionPersistence from '@deepseek-ai/dsh-session-persistence-jsonl'
import SessionQueryEngine from '@deepseek-ai/dsh-session-query'
import * as ref from '@deepseek-ai/dsh-session-reference'
import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export { ref }

// The query engine with search answered empty: the resolver only reads surfaces and lists.
export class Engine extends SessionQueryEngine {
  searchSessions () { return Promise.resolve({ items: [] }) }
  async searchEvents (r) { return { session: (await this.readSurface(r.sessionId)).session, items: [] } }
}

// A store root holding one plain session.jsonl per entry of `logs` ({ 'dir/id': [event, …] }).
export function writeStore (logs) {
  const root = mkdtempSync(join(tmpdir(), 'recorder-'))
  for (const [dir, events] of Object.entries(logs)) {
    mkdirSync(join(root, dir), { recursive: true })
    writeFileSync(join(root, dir, 'session.jsonl'), events.map(e => JSON.stringify(e) + '\n').join(''))
  }
  return root
}

// A SessionReferenceResolver over `root`, read through `engine` (a subclass of Engine).
export async function resolverOver (root, engine = Engine) {
  const ctx = new Context()
  await ctx.plugin(SessionStore)
  await ctx.plugin(JsonlSessionPersistence, { root, compression: 'none' })
  await ctx.plugin(engine)
  await ctx.sessionQuery
  const r = Object.create(ref.SessionReferenceResolver.prototype)
  Object.defineProperty(r, 'ctx', { value: ctx })
  r.config = { maxReferences: 3, candidateLimit: 50, maxReferenceBytes: 65536 }
  return r
}

// Runs each scenario in turn and prints { ...extra, name: { ok: shown(value) } | { error } }
// as JSON, where `error` holds the thrown error's `fields`; then removes `root` and exits.
export async function record (root, scenarios, { shown = v => v, fields = ['code', 'message'], extra = {} } = {}) {
  const out = { ...extra }
  for (const [name, run] of Object.entries(scenarios)) {
    try {
      out[name] = { ok: shown(await run()) }
    } catch (e) {
      out[name] = { error: Object.fromEntries(fields.map(f => [f, e[f]])) }
    }
  }
  rmSync(root, { recursive: true, force: true })
  process.stdout.write(JSON.stringify(out, null, 1) + '\n')
  process.exit(0)
}
