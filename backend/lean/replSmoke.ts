// The smoke test of a REPL built from another release's repl source: started as the verifier starts it
// (`lake env <binary>` in the project, so on the project's toolchain), it must answer one command and a
// `#print axioms` for the theorem that command added, in the REPL's JSON (blank-line framed, env ids, Lean's
// Print.lean wording). Anything else (no answer, an error, a changed wire format) fails it with the exchange.
import { spawn } from 'node:child_process';

const SMOKE_COMMANDS = [
  { cmd: 'theorem kimina_smoke : 1 + 1 = 2 := rfl' },
  { cmd: '#print axioms kimina_smoke', env: 0 },
];

export interface SmokeResult {
  ok: boolean;
  /** What went in and what came out, for the log. */
  log: string;
  /** Why it failed. */
  reason?: string;
}

/** Parses the REPL's answers: JSON objects separated by blank lines. */
function answers(stdout: string): unknown[] {
  return stdout
    .split(/\n\s*\n/)
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => {
      try {
        return JSON.parse(s) as unknown;
      } catch {
        return { unparsed: s };
      }
    });
}

function judge(got: unknown[]): string | undefined {
  const [first, second] = got as Array<Record<string, unknown> | undefined>;
  if (!first || typeof first.env !== 'number')
    return `the command was not answered with an environment (got ${JSON.stringify(first ?? null)})`;
  const errors = (m: unknown) => Array.isArray(m) && m.some((x) => (x as { severity?: string })?.severity === 'error');
  if (errors(first.messages)) return `the command was refused: ${JSON.stringify(first.messages)}`;
  if (!second) return 'the #print axioms command was not answered';
  const said = Array.isArray(second.messages)
    ? (second.messages as Array<{ data?: string }>).map((m) => m.data ?? '').join(' | ')
    : '';
  if (!/'kimina_smoke' does not depend on any axioms/.test(said))
    return `#print axioms kimina_smoke answered ${JSON.stringify(said || second)}, not "'kimina_smoke' does not depend on any axioms"`;
  return undefined;
}

/** Runs the smoke test; never throws. */
export function smokeTestRepl(
  binary: string,
  projectDir: string,
  env: NodeJS.ProcessEnv,
  timeoutMs = 120_000,
): Promise<SmokeResult> {
  const input = SMOKE_COMMANDS.map((c) => JSON.stringify(c) + '\n\n').join('');
  return new Promise((resolve) => {
    let stdout = '';
    let stderr = '';
    const child = spawn('lake', ['env', binary], { cwd: projectDir, env, stdio: ['pipe', 'pipe', 'pipe'] });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    const finish = (code: number | null, error?: string): void => {
      clearTimeout(timer);
      const log =
        `$ lake env ${binary}   (in ${projectDir})\n` +
        `> ${input.trim().replace(/\n\n/g, '\n> ')}\n` +
        `${stdout.trim() ? stdout.trim() : '(no output)'}\n` +
        (stderr.trim() ? `stderr: ${stderr.trim()}\n` : '') +
        `exit ${code ?? 'killed'}${error ? ` (${error})` : ''}`;
      const reason = error ?? judge(answers(stdout));
      resolve(reason ? { ok: false, log, reason } : { ok: true, log });
    };
    child.on('error', (err) => finish(null, err.message));
    child.on('close', (code) => finish(code, code === null ? `no answer within ${timeoutMs / 1000} s` : undefined));
    child.stdin.on('error', () => {});
    child.stdin.end(input);
  });
}
