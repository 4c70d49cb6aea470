// Request bodies: read with a size cap (413), require valid UTF-8 (400) and valid JSON (422 like
// FastAPI's json_invalid), so bad input gets a clear answer and the server keeps serving.
import type { RequestHandler } from 'express';
import { HttpError, ValidationError } from './httpErrors';

export const defaultBodyLimitBytes = 4 * 1024 * 1024;

export function jsonBody(limitBytes = defaultBodyLimitBytes): RequestHandler {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  return (req, _res, next) => {
    if (req.method === 'GET' || req.method === 'HEAD') { next(); return; }
    const declared = Number(req.headers['content-length'] ?? NaN);
    const tooLarge = new HttpError(413, `Request body too large: the limit is ${limitBytes} bytes`, { Connection: 'close' });
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
    req.on('error', (err) => next(err));
    req.on('end', () => {
      if (over) { next(tooLarge); return; }
      const raw = Buffer.concat(chunks);
      if (raw.length === 0) { req.body = undefined; next(); return; }
      let text: string;
      try { text = decoder.decode(raw); } catch { next(new HttpError(400, 'Request body is not valid UTF-8')); return; }
      try {
        req.body = JSON.parse(text) as unknown;
      } catch (err) {
        next(new ValidationError([{ type: 'json_invalid', loc: ['body'], msg: `JSON decode error: ${(err as Error).message}` }]));
        return;
      }
      next();
    });
  };
}
