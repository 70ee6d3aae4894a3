#!/usr/bin/env node
// Times the published @deepseek-ai/dsh-session-reference `prepare()` for one
// reference to one session log, in-process, the way a DSH host runs it.
//
// The host wiring is the real published stack: a cordis Context with the
// dsh-session SessionStore (`ctx.sessions`, empty: no live sessions), the
// dsh-session-query SessionQueryEngine (`ctx.sessionQuery`, whose readSurface
// validates and folds the log) and the SessionReferenceResolver. Only the
// durable backend (`ctx.sessionPersistence`) is a small adapter here, because
// the published JSONL backend needs Node's zlib zstd API (Node >= 22.15). It
// behaves like that backend's read path: every `inspect()` reads the file,
// decompresses every zstd frame (fzstd, pure JS), splits lines, JSON.parses
// them and expands packed chunk rows with dsh-session's decodeStorageRecord.
// So each timed prepare() includes reading the log from disk.
//
// Usage:
//   node run.mjs --file PATH [--max-bytes 65536] [--runs 5] [--warmup 1]
//                [--label L] [--dump OUT.json] [--no-read-breakdown] [--validate]
// Prints one JSON object on stdout:
//   {median_s, runs, times_s, min_s, max_s, read_surface_s, file, session_id,
//    events, surface_events, captured_through_seq, max_reference_bytes,
//    prompt_bytes, reference, package, node, validated?}
// --validate first replays the whole log through dsh-session's Session
// (readSession), the harness's own validation; --dump writes the prepared
// {content, additionalContext} (context without its random id) as JSON.
// Errors print {"error": {code, message}} and exit 1.

import { readFile, writeFile } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';

import { Context, Service } from '@deepseek-ai/cordis';
import { SessionStore, decodeStorageRecord } from '@deepseek-ai/dsh-session';
import { SessionQueryEngine } from '@deepseek-ai/dsh-session-query';
import { SessionReferenceResolver } from '@deepseek-ai/dsh-session-reference';
import { decompress } from 'fzstd';

const require = createRequire(import.meta.url);
const PACKAGE = '@deepseek-ai/dsh-session-reference';
const TARGET_ID = 'sessionref-benchmark-target';

/** Parse the command line into a normalized options object. */
function options() {
  const { values } = parseArgs({
    options: {
      file: { type: 'string' },
      'max-bytes': { type: 'string', default: '65536' },
      runs: { type: 'string', default: '5' },
      warmup: { type: 'string', default: '1' },
      label: { type: 'string' },
      dump: { type: 'string' },
      'no-read-breakdown': { type: 'boolean', default: false },
      validate: { type: 'boolean', default: false },
    },
  });
  if (values.file === undefined) throw usage('--file is required');
  const int = (name, min) => {
    const n = Number(values[name]);
    if (!Number.isSafeInteger(n) || n < min) throw usage(`--${name} must be an integer >= ${min}`);
    return n;
  };
  return {
    file: values.file,
    maxBytes: int('max-bytes', 1),
    runs: int('runs', 1),
    warmup: int('warmup', 0),
    label: values.label,
    dump: values.dump,
    readBreakdown: !values['no-read-breakdown'],
    validate: values.validate,
  };
}

function usage(message) {
  return Object.assign(new Error(message), { code: 'USAGE' });
}

/** Read a session log as text: zstd (all concatenated frames) or plain JSONL. */
async function readLogText(path) {
  const bytes = await readFile(path);
  const plain = path.endsWith('.zstd') ? decompress(bytes) : bytes;
  return new TextDecoder('utf-8', { fatal: true }).decode(plain);
}

/** Split log text into the header (without its `type` tag) and expanded events. */
function parseLog(text) {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  const { type, ...header } = JSON.parse(lines[0]);
  if (type !== 'session') throw new Error('first line is not a session header');
  const events = [];
  for (let i = 1; i < lines.length; i += 1) {
    for (const event of decodeStorageRecord(JSON.parse(lines[i]))) events.push(event);
  }
  return { header, events };
}

/**
 * Minimal durable backend holding exactly one session log file: `list()`
 * returns its header, `inspect()` reads and decodes the whole log each time.
 */
class FileSessionPersistence extends Service {
  constructor(ctx, config) {
    super(ctx, 'sessionPersistence');
    this.path = config.path;
    this.header = config.header;
  }

  async list() {
    return [structuredClone(this.header)];
  }

  async inspect(sessionId) {
    if (sessionId !== this.header.id) throw new Error(`session "${sessionId}" not found`);
    const { header, events } = parseLog(await readLogText(this.path));
    return { meta: header, events };
  }
}

/** The combined query service; full-text search is not needed by prepare(). */
class QueryEngine extends SessionQueryEngine {
  async searchSessions() {
    throw new Error('full-text search is not available in the benchmark host');
  }

  async searchEvents() {
    throw new Error('full-text search is not available in the benchmark host');
  }
}

/** Build the host context and return its resolver and query services. */
async function host(path, header, maxBytes) {
  const root = new Context();
  await root.plugin(SessionStore);
  await root.plugin(FileSessionPersistence, { path, header });
  await root.plugin(QueryEngine, {});
  await root.plugin(SessionReferenceResolver, { maxReferenceBytes: maxBytes });
  return { root, resolver: root.sessionReferenceResolver, query: root.sessionQuery };
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

async function time(fn) {
  const t0 = performance.now();
  const value = await fn();
  return { seconds: (performance.now() - t0) / 1000, value };
}

async function main() {
  const opts = options();
  const { header } = parseLog((await readLogText(opts.file)).split('\n', 1)[0]);
  const { root, resolver, query } = await host(opts.file, header, opts.maxBytes);
  const agent = { id: TARGET_ID, session: { header: { version: 0, id: TARGET_ID, createdAt: 0 } } };
  const reference = { sessionId: header.id, ...(opts.label === undefined ? {} : { label: opts.label }) };
  const content = [{ type: 'text', text: `@${opts.label ?? header.id} what happened there?` }];
  const prepare = () => resolver.prepare(agent, content, [reference]);
  // Full replay validation of the log by the published Session model (untimed).
  if (opts.validate) await query.readSession(header.id);

  for (let i = 0; i < opts.warmup; i += 1) await prepare();
  const times = [];
  let result;
  for (let i = 0; i < opts.runs; i += 1) {
    const run = await time(prepare);
    times.push(run.seconds);
    result = run.value;
  }
  const context = result.additionalContext;
  const out = {
    median_s: median(times),
    runs: times.length,
    times_s: times,
    min_s: Math.min(...times),
    max_s: Math.max(...times),
    file: opts.file,
    session_id: header.id,
    max_reference_bytes: opts.maxBytes,
    prompt_bytes: Buffer.byteLength(context.content[0].text, 'utf8'),
    reference: context.source.references[0],
    package: `${PACKAGE}@${require(`${PACKAGE}/package.json`).version}`,
    node: process.version,
    ...(opts.validate ? { validated: true } : {}),
  };
  if (opts.readBreakdown) {
    const read = await time(() => query.readSurface(header.id));
    Object.assign(out, {
      read_surface_s: read.seconds,
      surface_events: read.value.events.length,
      captured_through_seq: read.value.capturedThroughSeq,
      events: read.value.capturedThroughSeq === null ? 0 : read.value.capturedThroughSeq + 1,
    });
  }
  if (opts.dump !== undefined) {
    const { id, ...message } = context;
    await writeFile(opts.dump, `${JSON.stringify({ content: result.content, additionalContext: message })}\n`);
  }
  await root.fiber.dispose?.();
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

main().catch((error) => {
  const code = error?.code ?? error?.name ?? 'ERROR';
  process.stdout.write(`${JSON.stringify({ error: { code, message: String(error?.message ?? error) } })}\n`);
  process.exit(code === 'USAGE' ? 2 : 1);
});
