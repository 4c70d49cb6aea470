// The README as a front page: within its bounds (150 lines, 10,000 characters), the two commands unchanged, one
// picture, and every headline figure linking to its benchmark's section of docs/benchmarks.md, where every run is
// dated, with its load and the command that reproduces it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const readme = readFileSync('README.md', 'utf8');
const benchmarks = readFileSync('docs/benchmarks.md', 'utf8');

/** GitHub's anchor of a heading. */
const anchor = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\w\- ]/g, '')
    .replace(/ /g, '-');

test('the README stays a front page: at most 150 lines and 10,000 characters', () => {
  assert.ok(readme.split('\n').length <= 150, `${readme.split('\n').length} lines`);
  assert.ok(readme.length <= 10_000, `${readme.length} characters`);
});

test('the README keeps the two commands, word for word, and .ci/run runs the second', () => {
  assert.ok(
    readme.includes(
      'ONNXRUNTIME_NODE_INSTALL=skip npm ci && npm run build && npx kimina prove examples/algebra_example.lean --demo\n',
    ),
  );
  assert.ok(readme.includes('# 2. run every test\nONNXRUNTIME_NODE_INSTALL=skip npm ci && npm test\n'));
  assert.match(readFileSync('.ci/run', 'utf8'), /^npm ci && npm test$/m);
});

test("the README's picture and local links exist; its figures link to sections of docs/benchmarks.md", () => {
  const links = [...readme.matchAll(/\]\(([^)#\s]+)(?:#([^)\s]+))?\)/g)].filter((m) => !/^https?:/.test(m[1]));
  assert.ok(
    links.some((m) => /^docs\/images\/.+\.png$/.test(m[1])),
    'one picture',
  );
  for (const [, path] of links) assert.ok(existsSync(path), `${path} exists`);
  const sections = new Set([...benchmarks.matchAll(/^## (.+)$/gm)].map((m) => anchor(m[1])));
  const figures = links.filter((m) => m[1] === 'docs/benchmarks.md' && m[2]);
  assert.ok(figures.length >= 4, `${figures.length} headline figures`);
  for (const m of figures) assert.ok(sections.has(m[2]), `docs/benchmarks.md has a section #${m[2]}`);
});

test('docs/benchmarks.md: every section names its command, every run its date and load', () => {
  const sections = benchmarks.split(/^## /m).slice(1);
  assert.ok(sections.length >= 4);
  for (const section of sections) {
    const name = section.split('\n')[0];
    assert.match(section, /^Command: `[^`]+`/m, `${name}: a command`);
    const rows = section
      .split('\n')
      .filter((l) => l.startsWith('| ') && !l.startsWith('| What') && !l.startsWith('|---'));
    assert.ok(rows.length > 0, `${name}: rows`);
    for (const row of rows) {
      const cells = row.split(' | ');
      const [run, load] = cells.slice(-2).map((c) => c.replace(/\|$/, '').trim());
      assert.match(run, /20\d\d-\d\d-\d\d|the same/, `${name}: a run without a date: ${row.slice(0, 60)}`);
      assert.ok(load.length > 0, `${name}: a run without its load: ${row.slice(0, 60)}`);
    }
  }
  assert.match(benchmarks, /\*\*Machine\.\*\*/);
  assert.ok(existsSync(join('docs', 'images')));
});
