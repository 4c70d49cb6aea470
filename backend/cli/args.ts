// A small flag parser: `--name value`, `--name=value`, `--flag`, and positionals.
export interface Parsed {
  positionals: string[];
  flags: Map<string, string | true>;
}

export function parseArgs(args: string[], booleans: readonly string[] = []): Parsed {
  const positionals: string[] = [];
  const flags = new Map<string, string | true>();
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--') {
      positionals.push(...args.slice(i + 1));
      break;
    }
    if (!a.startsWith('--')) {
      positionals.push(a);
      continue;
    }
    const eq = a.indexOf('=');
    if (eq > 0) {
      flags.set(a.slice(2, eq), a.slice(eq + 1));
      continue;
    }
    const key = a.slice(2);
    const next = args[i + 1];
    if (booleans.includes(key) || next === undefined || next.startsWith('--')) flags.set(key, true);
    else {
      flags.set(key, next);
      i++;
    }
  }
  return { positionals, flags };
}

export function flagString(p: Parsed, name: string): string | undefined {
  const v = p.flags.get(name);
  if (v === true) throw new Error(`--${name} needs a value`);
  return v;
}

export function flagNumber(p: Parsed, name: string): number | undefined {
  const v = flagString(p, name);
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isFinite(n)) throw new Error(`--${name} must be a number, got '${v}'`);
  return n;
}
