// Bearer-token auth, kimina-lean-server style: `Authorization: Bearer <token>`, the prefix optional. `kimina serve`
// always has a token: KIMINA_API_TOKEN (or LEAN_SERVER_API_KEY), else a random one written to serve.json.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { routes, type RouteSpec } from '../protocol';
import { sendDetail } from './httpErrors';

function sameSecret(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb);
}

/** Paths anyone may read: the routes the contract declares public (health checks, as in kimina-lean-server). */
const publicPaths = new Set(
  Object.values(routes as Record<string, RouteSpec>)
    .filter((r) => r.public && r.method === 'GET')
    .flatMap((r) => [r.path, ...(r.aliases ?? [])]),
);

export function requireToken(token: string | undefined): RequestHandler {
  return (req, res, next) => {
    if (!token || (req.method === 'GET' && publicPaths.has(req.path))) {
      next();
      return;
    }
    const header = req.headers.authorization;
    if (!header) {
      sendDetail(res, 401, 'Missing API key');
      return;
    }
    const given = header.replace(/^Bearer\s+/i, '').trim();
    if (!sameSecret(given, token)) {
      sendDetail(res, 401, 'Invalid API key');
      return;
    }
    next();
  };
}

/** A fresh random token for a server started without one (written to the 0600 discovery file for local clients). */
export function newApiToken(): string {
  return randomBytes(24).toString('base64url');
}
