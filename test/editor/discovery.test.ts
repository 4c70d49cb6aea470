// Finding a running `kimina serve` to attach to: the setting wins, else a live server's discovery file.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as discovery from '../../backend/editor/discovery';
import { kiminaHome, readSome, type Env } from '../../backend/settings/settings';

// The commands read the settings and hand them down; these tests read them from the environment they set.
const findServer = (env: Env) =>
  discovery.findServer({ ...readSome(['apiToken', 'serverUrl'], env), home: kiminaHome() });
const discoveryPath = () => discovery.discoveryPath(kiminaHome());

let home: string;
const savedHome = process.env.KIMINA_HOME;

before(() => {
  home = mkdtempSync(join(tmpdir(), 'kimina-discovery-'));
  process.env.KIMINA_HOME = home;
});
after(() => {
  if (savedHome === undefined) delete process.env.KIMINA_HOME;
  else process.env.KIMINA_HOME = savedHome;
  rmSync(home, { recursive: true, force: true });
});

test('no setting and no discovery file: no server', () => {
  assert.equal(findServer({}), null);
});

test('kimina.serverUrl (KIMINA_SERVER_URL) with its token wins over the discovery file', () => {
  writeFileSync(discoveryPath(), JSON.stringify({ url: 'http://127.0.0.1:9/', pid: process.pid }));
  assert.deepEqual(findServer({ KIMINA_SERVER_URL: 'http://127.0.0.1:8000/', KIMINA_API_TOKEN: 't' }), {
    url: 'http://127.0.0.1:8000',
    token: 't',
    source: 'setting',
  });
});

test('kimina.serverUrl without a token takes the token of the discovery file when that names the same server', () => {
  writeFileSync(
    discoveryPath(),
    JSON.stringify({ url: 'http://127.0.0.1:8000', token: 'random-one', pid: process.pid }),
  );
  assert.deepEqual(findServer({ KIMINA_SERVER_URL: 'http://127.0.0.1:8000/' }), {
    url: 'http://127.0.0.1:8000',
    token: 'random-one',
    source: 'setting',
  });
  assert.deepEqual(findServer({ KIMINA_SERVER_URL: 'http://127.0.0.1:8001' }), {
    url: 'http://127.0.0.1:8001',
    token: undefined,
    source: 'setting',
  });
});

test("a live server's discovery file is used, with its token", () => {
  writeFileSync(
    discoveryPath(),
    JSON.stringify({ url: 'http://127.0.0.1:8123', token: 'from-file', pid: process.pid }),
  );
  assert.deepEqual(findServer({}), { url: 'http://127.0.0.1:8123', token: 'from-file', source: 'discovery' });
});

test('a discovery file left behind by a server that is gone, or a malformed one, is ignored', () => {
  const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  writeFileSync(discoveryPath(), JSON.stringify({ url: 'http://127.0.0.1:8123', pid: Number(gone.stdout) }));
  assert.equal(findServer({}), null);
  writeFileSync(discoveryPath(), '{"url": ');
  assert.equal(findServer({}), null);
  writeFileSync(discoveryPath(), JSON.stringify({ port: 8000 }));
  assert.equal(findServer({}), null);
});
