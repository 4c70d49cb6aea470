// Checking a ProveRequest from the outside (HTTP body, CLI flags) and filling in the defaults.
import { proveRequestSchema, type ProveRequest, type ProveRequestBody } from '../protocol';
import { checkValue } from '../protocol/schema';

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
export const DEFAULT_SETTINGS: ProveSettings = {
  samples: 4,
  fixTurns: 1,
  temperature: 1.0,
  topP: 0.95,
  maxTokens: 24576,
};

/** Validates an untrusted body against the contract's schema; throws ProveRequestError naming the first bad field. */
export function parseProveRequest(body: unknown): ProveRequest {
  const problems = checkValue(proveRequestSchema, body);
  if (problems.length) throw new ProveRequestError(problems[0].text);
  const req: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body as ProveRequestBody)) if (v !== null && v !== undefined) req[k] = v;
  return req as ProveRequest;
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
