// Validation of the verification request bodies (kimina-lean-server's schema; 422 with FastAPI-style
// details on mismatch). Unknown fields are ignored, as pydantic does.
import type { CheckRequest, InfotreeKind, Snippet, V1CheckRequest, VerifyRequest } from '../protocol';
import { ValidationError, type FieldProblem } from './httpErrors';

const infotreeKinds = ['full', 'tactics', 'original', 'substantive'];
export const maxSnippetChars = 1_000_000;

class Checker {
  readonly problems: FieldProblem[] = [];
  constructor(readonly body: Record<string, unknown>) {}
  fail(loc: (string | number)[], type: string, msg: string, input?: unknown): void {
    this.problems.push({ type, loc: ['body', ...loc], msg, ...(input !== undefined ? { input } : {}) });
  }
  bool(name: string, fallback: boolean): boolean {
    const v = this.body[name];
    if (v === undefined || v === null) return fallback;
    if (typeof v !== 'boolean') { this.fail([name], 'bool_type', 'Input should be a valid boolean', v); return fallback; }
    return v;
  }
  seconds(name: string, fallback: number): number {
    const v = this.body[name];
    if (v === undefined || v === null) return fallback;
    if (typeof v !== 'number' || !Number.isFinite(v)) { this.fail([name], 'int_type', 'Input should be a number of seconds', v); return fallback; }
    if (v < 0) { this.fail([name], 'greater_than_equal', 'Input should be greater than or equal to 0', v); return fallback; }
    return v;
  }
  infotree(name: string): InfotreeKind | null {
    const v = this.body[name];
    if (v === undefined || v === null) return null;
    if (typeof v !== 'string' || !infotreeKinds.includes(v)) {
      this.fail([name], 'enum', `Input should be one of ${infotreeKinds.map((k) => `'${k}'`).join(', ')}`, v);
      return null;
    }
    return v as InfotreeKind;
  }
  code(loc: (string | number)[], v: unknown): string {
    if (typeof v !== 'string') { this.fail(loc, 'string_type', 'Input should be a valid string', v); return ''; }
    if (v.length > maxSnippetChars) this.fail(loc, 'string_too_long', `Code should have at most ${maxSnippetChars} characters`);
    return v;
  }
  done(): void { if (this.problems.length) throw new ValidationError(this.problems); }
}

function asObject(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new ValidationError([{ type: 'model_attributes_type', loc: ['body'], msg: 'Input should be a JSON object', input: body ?? null }]);
  }
  return body as Record<string, unknown>;
}

function snippets(c: Checker): Snippet[] {
  const raw = c.body.snippets;
  if (!Array.isArray(raw)) { c.fail(['snippets'], raw === undefined ? 'missing' : 'list_type', raw === undefined ? 'Field required' : 'Input should be a valid list'); return []; }
  if (raw.length === 0) c.fail(['snippets'], 'value_error', 'Value error, `snippets` must be non empty');
  const seen = new Set<string>();
  const out: Snippet[] = [];
  raw.forEach((s: unknown, i) => {
    if (typeof s !== 'object' || s === null) { c.fail(['snippets', i], 'model_type', 'Input should be an object with id and code', s); return; }
    const { id, code } = s as Record<string, unknown>;
    if (typeof id !== 'string' || id === '') { c.fail(['snippets', i, 'id'], 'string_type', 'id should be a non-empty string', id); return; }
    if (seen.has(id)) c.fail(['snippets', i, 'id'], 'value_error', 'Value error, `snippets` must have unique ids', id);
    seen.add(id);
    out.push({ id, code: c.code(['snippets', i, 'code'], code) });
  });
  return out;
}

export function parseCheckRequest(body: unknown): Required<Omit<CheckRequest, 'infotree'>> & { infotree: InfotreeKind | null } {
  const c = new Checker(asObject(body));
  const r = { snippets: snippets(c), timeout: c.seconds('timeout', 30), debug: c.bool('debug', false), reuse: c.bool('reuse', true), infotree: c.infotree('infotree') };
  c.done();
  return r;
}

export interface ParsedVerify { codes: { customId: string | number; code: string }[]; timeout: number; infotree: InfotreeKind | null; disableCache: boolean }

export function parseVerifyRequest(body: unknown): ParsedVerify {
  const c = new Checker(asObject(body));
  const raw = c.body.codes;
  const codes: ParsedVerify['codes'] = [];
  if (!Array.isArray(raw)) c.fail(['codes'], raw === undefined ? 'missing' : 'list_type', raw === undefined ? 'Field required' : 'Input should be a valid list');
  else {
    const seen = new Set<string>();
    raw.forEach((entry: unknown, i) => {
      if (typeof entry !== 'object' || entry === null) { c.fail(['codes', i], 'model_type', 'Input should be an object with custom_id and proof or code', entry); return; }
      const e = entry as VerifyRequest['codes'][number] & Record<string, unknown>;
      const id = e.custom_id;
      if (!(typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id))) || id === '') { c.fail(['codes', i, 'custom_id'], 'string_type', 'custom_id should be a non-empty string or an integer', id); return; }
      if (seen.has(String(id))) c.fail(['codes', i, 'custom_id'], 'value_error', 'Value error, custom_id values must be unique', id);
      seen.add(String(id));
      const content = e.proof ?? e.code;
      if (content === undefined || content === null) { c.fail(['codes', i], 'missing', `Snippet ${JSON.stringify(id)} has no proof/code content`); return; }
      codes.push({ customId: id, code: c.code(['codes', i, e.proof != null ? 'proof' : 'code'], content) });
    });
  }
  const r = { codes, timeout: c.seconds('timeout', 300), infotree: c.infotree('infotree_type'), disableCache: c.bool('disable_cache', false) };
  c.done();
  return r;
}

export function parseV1CheckRequest(body: unknown): V1CheckRequest & { timeout: number; infotree: InfotreeKind | null } {
  const c = new Checker(asObject(body));
  const list = snippets(c);
  const timeout = c.seconds('timeout', 60);
  const infotree = c.infotree('infotree');
  let theorems: string[] | undefined;
  const t = c.body.theorems;
  if (t !== undefined && t !== null) {
    if (!Array.isArray(t) || t.some((x) => typeof x !== 'string' || !/^[^\s]+$/.test(x))) c.fail(['theorems'], 'list_type', 'theorems should be a list of declaration names');
    else theorems = t as string[];
  }
  c.done();
  return { snippets: list, timeout, infotree, ...(theorems ? { theorems } : {}) };
}
