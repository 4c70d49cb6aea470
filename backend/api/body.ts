// Request bodies: read with a size cap (413), require valid UTF-8 (400) and valid JSON (json_invalid), so bad
// input gets a clear answer and the server keeps serving. Nothing of the body is repeated in the answer.
import type { Request } from 'express';

export const defaultBodyLimitBytes = 4 * 1024 * 1024;

/** Why a body could not be read; each route answers it in its own error style (backend/api/contract.ts). */
interface BodyFailure {
  status: 400 | 413;
  kind: 'too_large' | 'not_utf8' | 'json_invalid';
  message: string;
}

export type BodyResult = { ok: true; value: unknown } | { ok: false; failure: BodyFailure };

/** Where JSON.parse stopped, without the text around it (that would echo the body). */
function jsonProblem(err: unknown): string {
  const at = /position (\d+)/.exec(err instanceof Error ? err.message : '');
  return `JSON decode error${at ? ` at position ${at[1]}` : ''}`;
}

/** Reads and parses the request's JSON body; an empty body is `undefined`. */
export function readJsonBody(req: Request, limitBytes = defaultBodyLimitBytes): Promise<BodyResult> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? NaN);
    const chunks: Buffer[] = [];
    let size = 0;
    let over = Number.isFinite(declared) && declared > limitBytes;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limitBytes) over = true;
      if (!over) chunks.push(chunk);
      // an oversized body is read and dropped so the client can read the 413; a huge one is cut off
      if (size > Math.max(64 * 1024 * 1024, limitBytes * 4)) req.destroy();
    });
    req.on('error', reject);
    req.on('end', () => {
      if (over) {
        resolve({
          ok: false,
          failure: {
            status: 413,
            kind: 'too_large',
            message: `Request body too large: the limit is ${limitBytes} bytes`,
          },
        });
        return;
      }
      const raw = Buffer.concat(chunks);
      if (raw.length === 0) {
        resolve({ ok: true, value: undefined });
        return;
      }
      let text: string;
      try {
        text = decoder.decode(raw);
      } catch {
        resolve({ ok: false, failure: { status: 400, kind: 'not_utf8', message: 'Request body is not valid UTF-8' } });
        return;
      }
      try {
        resolve({ ok: true, value: JSON.parse(text) as unknown });
      } catch (err) {
        resolve({ ok: false, failure: { status: 400, kind: 'json_invalid', message: jsonProblem(err) } });
      }
    });
  });
}
