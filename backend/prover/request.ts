// Checking a ProveRequest from the outside (HTTP body, CLI flags) and filling in the defaults.
import type { ProveRequest } from '../protocol';

/** A request that cannot be run as given; the message says which field and why. */
export class ProveRequestError extends Error {
  override readonly name = 'ProveRequestError';
}

export interface ProveSettings {
  samples: number;
  fixTurns: number;
  temperature: number;
  topP: number;
  maxTokens: number;
}

/** The recipe's validation sampling (temperature 1.0, top_p 0.95) and one fix turn. */
/** maxTokens: the recipe's answer budget (24576 = 32768 context − 8192 prompt); the engine cuts it to what the context leaves. */
export const DEFAULT_SETTINGS: ProveSettings = { samples: 4, fixTurns: 1, temperature: 1.0, topP: 0.95, maxTokens: 24576 };

export const LIMITS = {
  samples: [1, 64], fixTurns: [0, 4], temperature: [0, 2], topP: [0, 1], maxTokens: [1, 131072],
  codeChars: 1_000_000,
} as const;

function numberField(body: Record<string, unknown>, key: keyof typeof LIMITS & keyof ProveSettings, integer: boolean): number | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  const [lo, hi] = LIMITS[key];
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new ProveRequestError(`'${key}' must be a number, got ${JSON.stringify(v)}`);
  if (integer && !Number.isInteger(v)) throw new ProveRequestError(`'${key}' must be a whole number, got ${v}`);
  if (v < lo || v > hi || (key === 'topP' && v === 0)) throw new ProveRequestError(`'${key}' must be ${key === 'topP' ? 'above' : 'at least'} ${lo} and at most ${hi}, got ${v}`);
  return v;
}

function stringField(body: Record<string, unknown>, key: string, required: boolean): string | undefined {
  const v = body[key];
  if (v === undefined || v === null) {
    if (required) throw new ProveRequestError(`'${key}' is required`);
    return undefined;
  }
  if (typeof v !== 'string') throw new ProveRequestError(`'${key}' must be a string, got ${typeof v}`);
  return v;
}

/** Validates an untrusted body; throws ProveRequestError naming the first bad field. */
export function parseProveRequest(body: unknown): ProveRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new ProveRequestError('the request body must be a JSON object');
  const b = body as Record<string, unknown>;
  const known = new Set(['id', 'code', 'theorem', 'informal', 'samples', 'fixTurns', 'temperature', 'topP', 'maxTokens']);
  const unknown = Object.keys(b).filter((k) => !known.has(k));
  if (unknown.length > 0) throw new ProveRequestError(`unknown field${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}`);
  const code = stringField(b, 'code', true) as string;
  if (code.trim() === '') throw new ProveRequestError("'code' is empty");
  if (code.length > LIMITS.codeChars) throw new ProveRequestError(`'code' is longer than ${LIMITS.codeChars} characters`);
  const id = stringField(b, 'id', false);
  if (id !== undefined && !/^[A-Za-z0-9_.:-]{1,100}$/.test(id)) throw new ProveRequestError("'id' must be 1-100 letters, digits or _.:-");
  const req: ProveRequest = { code };
  const optional = {
    id, theorem: stringField(b, 'theorem', false), informal: stringField(b, 'informal', false),
    samples: numberField(b, 'samples', true), fixTurns: numberField(b, 'fixTurns', true),
    temperature: numberField(b, 'temperature', false), topP: numberField(b, 'topP', false),
    maxTokens: numberField(b, 'maxTokens', true),
  };
  for (const [k, v] of Object.entries(optional)) if (v !== undefined) (req as unknown as Record<string, unknown>)[k] = v;
  return req;
}

export function settingsOf(req: ProveRequest, defaults: ProveSettings = DEFAULT_SETTINGS): ProveSettings {
  return {
    samples: req.samples ?? defaults.samples,
    fixTurns: req.fixTurns ?? defaults.fixTurns,
    temperature: req.temperature ?? defaults.temperature,
    topP: req.topP ?? defaults.topP,
    maxTokens: req.maxTokens ?? defaults.maxTokens,
  };
}
