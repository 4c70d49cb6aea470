// Every sentence the extension shows, written for the editor (no VS Code API here, so tests can read them):
// the backend's messages are shared with the command line, so its advice names commands, flags and
// environment variables; here they become the settings and buttons a VS Code user has. Also the texts of
// the proof outcome, the first-run guidance and the status bar item.
import {
  type Attempt,
  type BackendStatus,
  type EditorProveResult,
  type ErrorKind,
  formatWords,
} from '../backend/protocol';
import { settingOfVariable } from '../backend/protocol/settingsTable';

const commandTitles = {
  pullModel: 'Kimina: Pull Model',
  setupLean: 'Kimina: Set Up Lean Verifier',
  restartBackend: 'Kimina: Restart Backend',
  setupTrainer: 'Kimina: Set Up Trainer',
  cancel: 'Kimina: Cancel',
} as const;

/**
 * A backend message in the editor's words: without the JSON-RPC wrapper, with the command line's advice
 * (commands, flags, environment variables) replaced by the command or setting that does the same here.
 */
export function forEditor(message: string): string {
  let m = message.trim();
  m = m.replace(/^Request [\w/$.-]+ failed with message: /, '');
  if (/^Request [\w/$.-]+ failed unexpectedly without providing any details\.?$/.test(m))
    return 'The Kimina backend failed without saying why; the Kimina log may tell more.';
  m = m
    .replace(/run `kimina model pull[^`]*` again to finish/g, `pull it again with "${commandTitles.pullModel}"`)
    .replace(/run `kimina model pull[^`]*`/g, `use "${commandTitles.pullModel}"`)
    .replace(/`kimina model pull[^`]*`|\bkimina model pull\b/g, `"${commandTitles.pullModel}"`)
    .replace(/run `kimina lean setup[^`]*`/g, `use "${commandTitles.setupLean}"`)
    .replace(/`kimina lean setup[^`]*`|\bkimina lean setup\b/g, `"${commandTitles.setupLean}"`)
    .replace(/run `kimina trainer setup[^`]*`/g, `use "${commandTitles.setupTrainer}"`)
    .replace(/`kimina trainer setup[^`]*`|\bkimina trainer setup\b/g, `"${commandTitles.setupTrainer}"`)
    .replace(/pass --project with your Lean project's folder/g, "set kimina.leanProject to your Lean project's folder")
    .replace(/--project\b/g, 'the kimina.leanProject setting')
    .replace(/HF_HUB_OFFLINE is set/g, 'Hugging Face offline mode is on')
    .replace(/`lake env lean --json` per snippet/g, 'Lean runs once per candidate')
    .replace(/start one, e\.g\. `vllm serve[^`]*`(?: \([^)]*\))?/g, 'start one (vLLM, llama.cpp or Ollama)')
    .replace(/\bset (KIMINA_[A-Z0-9_]+)\b/g, (all, name: string) =>
      settingOfVariable[name] ? `set ${settingOfVariable[name]}` : all,
    )
    .replace(/\b(KIMINA_[A-Z0-9_]+)\b/g, (all, name: string) =>
      settingOfVariable[name] ? `the ${settingOfVariable[name]} setting` : all,
    )
    .replace(/\(the (kimina\.[\w.]+) setting\)/g, '($1)')
    // a variable with no setting: the environment VS Code was started with; the name means nothing here
    .replace(/\s*\((?:KIMINA|HF)_[A-Z0-9_]+=[^)]*\)/g, '')
    .replace(/\b(?:KIMINA|HF)_[A-Z0-9_]+\b/g, 'an environment setting of the editor');
  return m;
}

/** How many attempts, in words: "1 attempt", "3 attempts". */
function attemptsText(n: number): string {
  return `${n} attempt${n === 1 ? '' : 's'}`;
}

export interface Shown {
  level: 'info' | 'warning' | 'error';
  text: string;
  /** Button labels, in order. */
  actions: string[];
}

/** What the editor says when a proof ends without an edit to accept (undefined: the Proof view says enough). */
export function outcomeMessage(result: EditorProveResult, apply: boolean): Shown | undefined {
  const name = result.declaration?.name ?? 'the theorem';
  if (result.verifierFailure) {
    return result.verifierFailure.leanMissing
      ? {
          level: 'error',
          text: `Kimina: Lean is missing, so ${name} could not be checked (the proof stopped after ${attemptsText(result.attempts.length)}, without a fix turn). Set up Lean for this project, then retry.`,
          actions: ['Set Up Lean', 'Show Log'],
        }
      : {
          level: 'error',
          text: `Kimina: the Lean verifier failed, so ${name} could not be checked (stopped without a fix turn): ${forEditor(result.verifierFailure.reason)}`,
          actions: ['Set Up Lean', 'Show Log'],
        };
  }
  if (result.problem) {
    if (!result.declaration && result.status === 'not_proved' && result.attempts.length === 0)
      return {
        level: 'info',
        text: `Kimina: ${forEditor(result.problem)} Pick a theorem to prove?`,
        actions: ['Pick a Theorem'],
      };
    return { level: 'warning', text: `Kimina: ${forEditor(result.problem)}`, actions: [] };
  }
  if (result.status === 'not_proved' && !apply)
    return {
      level: 'info',
      text: `Kimina could not prove ${name} (${attemptsText(result.attempts.length)}).`,
      actions: ['Retry', 'Show Attempts'],
    };
  return undefined;
}

/** A prove request that failed as a whole (the backend answered with an error); its kind picks the button. */
export function requestFailedMessage(message: string, kind?: ErrorKind): Shown {
  const text = forEditor(message);
  if (kind === 'model-missing')
    return { level: 'error', text: `Kimina has no model to prove with: ${text}`, actions: ['Pull Model', 'Show Log'] };
  return { level: 'error', text: `Kimina: ${text}`, actions: ['Show Log'] };
}

/** The parts a first-time user still has to set up, each with the button that fixes it. */
function missingParts(s: BackendStatus): { part: string; action: string }[] {
  const out: { part: string; action: string }[] = [];
  if (s.setup?.model) out.push({ part: 'a model', action: 'Pull Model' });
  if (s.setup?.lean) out.push({ part: 'Lean', action: 'Set Up Lean' });
  return out;
}

/** The first-run guidance: what is missing and the buttons that fix it (undefined when nothing is). */
export function setupGuidance(s: BackendStatus): Shown | undefined {
  const parts = missingParts(s);
  if (!parts.length) return undefined;
  const what = parts.map((p) => p.part).join(' and ');
  const hints = (s.setup?.hints ?? []).map(forEditor).join(' ');
  return {
    level: 'warning',
    text: `Kimina needs ${what} before it can prove. ${hints}`.trim(),
    actions: [...parts.map((p) => p.action), 'Open Settings'],
  };
}

const looks: Record<BackendStatus['state'], { icon: string; label: string }> = {
  starting: { icon: '$(loading~spin)', label: 'starting' },
  ready: { icon: '$(check)', label: 'ready' },
  proving: { icon: '$(sync~spin)', label: 'proving' },
  training: { icon: '$(pulse)', label: 'training' },
  error: { icon: '$(error)', label: 'error' },
  restricted: { icon: '$(shield)', label: 'Restricted Mode' },
};

/** The status bar item: its text, its tooltip (each fact once) and what a click does. */
export function statusLook(s: BackendStatus): {
  text: string;
  tooltip: string;
  error: boolean;
  /** The text says what is missing (model, Lean): the item takes the warning colour. */
  missing: boolean;
  command: 'kimina.pullModel' | 'kimina.setupLean' | 'kimina.showLog';
} {
  const look = looks[s.state] ?? looks.error;
  const parts = missingParts(s);
  const missing = parts.length
    ? `${parts.map((p) => (p.part === 'a model' ? 'model' : p.part)).join(', ')} missing`
    : '';
  const showsMissing = Boolean(missing) && s.state !== 'proving' && s.state !== 'starting';
  const label = showsMissing ? missing : look.label;
  const icon = showsMissing ? '$(warning)' : look.icon;
  const text = `${icon} Kimina${s.state === 'ready' && !missing ? '' : `: ${label}`}`;
  const facts = [
    `Kimina: ${label}`,
    // The detail repeats engine, model and Lean when ready; it says what went wrong otherwise.
    s.state !== 'ready' && s.detail ? forEditor(s.detail) : undefined,
    s.engine && `Engine: ${s.engine}`,
    s.model && `Model: ${s.model}`,
    s.schedule && `Decoding: ${s.schedule}`,
    s.lean && `Lean: ${forEditor(s.lean)}`,
    s.backend && `Proofs run ${s.backend === 'server' ? 'on the attached server' : 'in the editor backend'}`,
    ...(s.setup?.hints ?? []).map(forEditor),
    parts.length
      ? `Click to ${parts[0].action === 'Pull Model' ? 'pull a model' : 'set up Lean'}.`
      : 'Click to open the log.',
  ];
  const seen = new Set<string>();
  const tooltip = facts
    .filter((f): f is string => Boolean(f))
    .flatMap((f) => f.split('\n'))
    .filter((line) => {
      const key = line.trim().toLowerCase();
      if (!key || seen.has(key)) return false;
      seen.add(key);
      return true;
    })
    .join('\n');
  const command =
    parts[0]?.action === 'Pull Model' ? 'kimina.pullModel' : parts.length ? 'kimina.setupLean' : 'kimina.showLog';
  return { text, tooltip, error: s.state === 'error' && !parts.length, missing: showsMissing, command };
}

/**
 * The level of one line the backend wrote on stderr (all its logging goes there): errors and stack traces as
 * errors, warnings as warnings, everything else (start-up, each proof's start and end) as information.
 */
export function logLevelOf(line: string): 'info' | 'warn' | 'error' {
  const l = line.replace(/^\[[^\]]+\]\s*/, '');
  if (/^(?:\w*Error\b|error\b|fatal\b|Uncaught|\s+at .+:\d+:\d+\)?$)/i.test(l) || /\b(?:crashed|exception)\b/i.test(l))
    return 'error';
  if (/^(?:warn(?:ing)?\b|\(node:\d+\) \w*Warning)/i.test(l) || /\b(?:failed|could not|cannot)\b/i.test(l))
    return 'warn';
  return 'info';
}

/** One attempt in a few words (progress notification, Show Attempts). */
export function attemptSummary(a: Attempt): string {
  if (a.finishReason === 'cancelled' || a.format.stopped) return 'stopped before the answer ended';
  const v = a.verdict;
  if (v?.status === 'valid') return 'Lean accepted';
  if (v?.status === 'server_error') return v.leanMissing ? 'Lean is missing' : 'Lean could not run';
  if (v) {
    const what: Record<string, string> = {
      sorry: 'uses sorry',
      lean_error: 'Lean error',
      repl_error: 'the Lean REPL refused it',
      timeout_error: 'Lean timed out',
      rejected: 'rejected before Lean',
    };
    return what[v.status] ?? 'not accepted';
  }
  if (!a.format.ok) return `not checked: ${formatWords[a.format.error]}`;
  return a.code === null ? 'no proof in the answer' : 'not checked';
}
