#!/usr/bin/env node
// Turns the real Lean REPL's own test recordings (leanprover-community/repl: test/*.in with
// test/*.expected.out, answered by the Lean of the commit's lean-toolchain; Apache-2.0) into our
// test data: test/fixtures/repl-recordings/recordings.json. Only the commands the verifier can send
// exactly as recorded are kept; every other command is counted under the reason it was left out.
//
//   node scripts/convert-repl-recordings.mjs [MIRROR_GIT_DIR] [--out FILE]
//
// MIRROR_GIT_DIR: a clone (bare is fine) of https://github.com/leanprover-community/repl.
// FILE: where to write (default test/fixtures/repl-recordings/recordings.json).
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const outAt = args.indexOf('--out');
const out =
  outAt >= 0
    ? args.splice(outAt, 2)[1]
    : join(dirname(fileURLToPath(import.meta.url)), '..', 'test', 'fixtures', 'repl-recordings', 'recordings.json');
const mirror = args[0] ?? process.env.LEAN_REPL_GIT_DIR;
if (!mirror) {
  console.error('usage: node scripts/convert-repl-recordings.mjs <git dir of leanprover-community/repl> [--out FILE]');
  process.exit(2);
}

// Three toolchains, two generations of Lean's messages: the newest (sorry warning with backticks, Lean >= 4.28),
// and v4.26.0 and v4.19.0, the two Lean versions kimina-lean-server tests against (sorry warning with quotes).
// The REPL's CI runs every recording against the commit's toolchain, so each tree holds answers of that Lean.
const snapshots = [
  { rev: '8948401ab4924499421c94b7facdfca5ff27d81d', note: 'HEAD of the clone' },
  { rev: 'a9a6f5bac483d65d08f6226e0ed653f03c479fb7', note: 'last commit on v4.26.0 (next: bump to v4.27.0-rc1)' },
  { rev: '3b27c8543a48444ffab4077f47526d91849cca3d', note: 'last commit on v4.19.0 (next: v4.20.1-rc1)' },
];

const git = (...args) =>
  execFileSync('git', ['-C', mirror, ...args], {
    encoding: 'utf8',
    maxBuffer: 1 << 28,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
const tryShow = (rev, path) => {
  try {
    return git('show', `${rev}:${path}`);
  } catch {
    return undefined;
  }
};

/** Requests as the REPL reads them: lines up to a blank one, right-trimmed, concatenated; `#`/`--` requests are skipped. */
function requests(text) {
  const found = [];
  let current;
  for (const line of text.split('\n')) {
    if (line.trim() === '') {
      if (current !== undefined) found.push(current);
      current = undefined;
      continue;
    }
    current = (current ?? '') + line.trimEnd();
  }
  if (current !== undefined) found.push(current);
  return found.filter((q) => !q.startsWith('#') && !q.startsWith('--'));
}

/** Answers: each is JSON followed by one blank line (Lean's JSON never holds a blank line). */
function answers(text) {
  return text
    .split('\n\n')
    .map((a) => a.replace(/^\n+|\n+$/g, ''))
    .filter((a) => a !== '');
}

const importOnly = (cmd) => cmd.split('\n').every((l) => l.trim() === '' || /^import\s/.test(l.trim()));
/** The verifier widens every `import Mathlib.X` to `import Mathlib` (backend/lean/header.ts). */
const widenedByVerifier = (cmd) => /^\s*import\s.*\bMathlib\./m.test(cmd);

function convertSnapshot({ rev, note }) {
  const commit = git('rev-parse', rev).trim();
  const toolchain = git('show', `${commit}:lean-toolchain`).trim();
  const lean = /:(v\S+)$/.exec(toolchain)?.[1] ?? toolchain;
  const inputs = git('ls-tree', '-r', '--name-only', commit, 'test')
    .split('\n')
    .filter((p) => /^test\/(Mathlib\/test\/)?[^/]+\.in$/.test(p));
  const skipped = {};
  const skip = (reason, n = 1) => {
    skipped[reason] = (skipped[reason] ?? 0) + n;
  };
  const kept = [];
  for (const path of inputs) {
    const answerPath = path.replace(/\.in$/, '.expected.out');
    const outText = tryShow(commit, answerPath);
    const qs = requests(git('show', `${commit}:${path}`));
    if (outText === undefined) {
      skip('no .expected.out recorded for the file', qs.length);
      continue;
    }
    const as = answers(outText);
    if (as.length !== qs.length) {
      skip('file whose answers do not pair up one to one with its requests', qs.length);
      continue;
    }
    // env id -> the import-only command text that produced it, or null when another kind of command did
    const producedBy = new Map();
    qs.forEach((q, index) => {
      const request = JSON.parse(q);
      const answerText = as[index];
      const answer = JSON.parse(answerText);
      const record = (imports) => {
        if (typeof answer.env === 'number') producedBy.set(answer.env, imports);
      };
      if (typeof request.cmd !== 'string') {
        const kind =
          'tactic' in request
            ? 'tactic-mode command (proofState)'
            : Object.keys(request).some((k) => k.startsWith('pickle') || k.startsWith('unpickle'))
              ? 'pickle/unpickle command'
              : 'path' in request
                ? 'file command ({"path": …})'
                : 'other command kind';
        skip(`${kind}: the verifier sends whole-file commands only`);
        record(null);
        return;
      }
      const extra = Object.keys(request).filter((k) => k !== 'cmd' && k !== 'env');
      if (extra.length > 0) {
        skip(`asks for extra output (${extra.sort().join(', ')}) the verifier never requests`);
        record(null);
        return;
      }
      if (typeof answer.message === 'string') {
        skip('answered with a REPL error (e.g. "Unknown environment."), a request the verifier never makes');
        return;
      }
      let runsOn = null;
      if (request.env !== undefined) {
        const producer = producedBy.get(request.env);
        if (producer === undefined || producer === null) {
          skip(
            'runs on an environment built by an earlier declaration command; the verifier starts every snippet on a fresh import environment',
          );
          record(null);
          return;
        }
        runsOn = producer;
      }
      const isHeader = runsOn === null && importOnly(request.cmd);
      if (!isHeader && /^\s*import\s/.test(request.cmd)) {
        skip('imports and declarations in one command: the verifier sends the imports as a command of their own');
        record(null);
        return;
      }
      if (!isHeader && /^[ \t]*(\n|$)/.test(request.cmd)) {
        skip('starts with a blank line, which the verifier moves into the header');
        record(null);
        return;
      }
      if (widenedByVerifier(isHeader ? request.cmd : (runsOn ?? ''))) {
        skip('imports a Mathlib module the verifier widens to `import Mathlib`, a different environment than recorded');
        record(isHeader ? request.cmd : null);
        return;
      }
      record(isHeader ? request.cmd : null);
      kept.push({ lean, commit, path, answerPath, index, request, runsOn, answer: answerText });
    });
  }
  // one recording per command and context: a repeat within the same Lean version is counted, not kept
  const unique = [];
  const seen = new Map();
  for (const r of kept) {
    const key = JSON.stringify([r.runsOn, r.request.cmd]);
    const first = seen.get(key);
    if (first) {
      const same = normalise(first.answer) === normalise(r.answer);
      skip(
        same
          ? 'the same command in the same context recorded again (same Lean version)'
          : 'the same command recorded again with a different answer (kept the first)',
      );
      continue;
    }
    seen.set(key, r);
    unique.push(r);
  }
  const commands = inputs.reduce((n, p) => n + requests(git('show', `${commit}:${p}`)).length, 0);
  return {
    summary: { lean, commit, note, inputFiles: inputs.length, commands, kept: unique.length, skipped },
    recordings: unique,
  };
}

/** Session-specific numbers (env, proofState) differ between sessions; everything else must match. */
function normalise(answerText) {
  return answerText.replace(/"(env|proofState)": \d+/g, '"$1": N');
}

const converted = snapshots.map(convertSnapshot);
const data = {
  about:
    'Real answers of the Lean REPL, recorded by its authors as its own tests, as data for the replay double ' +
    '(test/fixtures/replay-repl). One entry per kept command: `request` is the JSON the test sent, `answer` the exact text ' +
    'the REPL printed (one answer, without the blank line after it), `runsOn` the import command whose environment it ran on ' +
    '(null: sent without env, a fresh environment). Generated by scripts/convert-repl-recordings.mjs; see NOTICE.',
  source: { repository: 'https://github.com/leanprover-community/repl', license: 'Apache-2.0' },
  snapshots: converted.map((c) => c.summary),
  recordings: converted.flatMap((c) => c.recordings.map((r) => ({ id: `${r.lean}:${r.path}#${r.index}`, ...r }))),
};
writeFileSync(out, JSON.stringify(data, null, 1) + '\n');
for (const s of data.snapshots) {
  console.log(`${s.lean} (${s.commit.slice(0, 7)}): ${s.commands} commands in ${s.inputFiles} files, ${s.kept} kept`);
  for (const [reason, n] of Object.entries(s.skipped)) console.log(`  skipped ${n}: ${reason}`);
}
console.log(`wrote ${data.recordings.length} recordings to ${out}`);
