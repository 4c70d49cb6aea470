// Closing the API to web pages in the user's browser. A page can send requests to 127.0.0.1, and with DNS
// rebinding (a name of its own that resolves to 127.0.0.1) even read the answers. So, before anything else:
// - `Host` must name this server: a loopback name (localhost, 127.x.x.x, [::1]) or the address the request
//   came in on, or a configured name, always with the port the connection came in on (rebinding fails here);
// - a request with an `Origin` (any page's fetch or form) is refused unless it is this server's own origin;
//   the editor talks from Node and sends none, the webviews never talk to the backend directly;
// - `Sec-Fetch-Site` other than same-origin or none (typed in the address bar) is refused (embeds, links);
// - a POST must say `Content-Type: application/json`, which a page can only send after a CORS preflight that
//   this server never grants (no form or text/plain POST slips through).
// The API token (./auth.ts) comes after these.
import { isIP } from 'node:net';
import type { Request, RequestHandler } from 'express';
import { sendDetail } from './httpErrors';

export interface BrowserGuardOptions {
  /** Further host names the server may be reached by (no port), when it listens on a non-loopback address. */
  allowedHosts?: string[];
}

const loopbackNames = new Set(['localhost', '::1']);

export function isLoopbackName(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  return loopbackNames.has(bare) || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare);
}

/** `host:port` (or `[v6]:port`) as name and port; the port is 80 when absent. Null when malformed. */
function splitHost(value: string): { name: string; port: number } | null {
  const m = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(value.trim());
  if (!m) return null;
  return { name: m[1].replace(/^\[|\]$/g, '').toLowerCase(), port: m[2] === undefined ? 80 : Number(m[2]) };
}

function localAddress(req: Request): string {
  return (req.socket.localAddress ?? '').replace(/^::ffff:/, '').toLowerCase();
}

/** Why the request's Host is not this server, or null when it is. */
function hostProblem(req: Request, allowed: Set<string>): string | null {
  const raw = req.headers.host;
  if (!raw) return 'a Host header is required';
  const host = splitHost(raw);
  if (!host) return 'the Host header is malformed';
  if (host.port !== req.socket.localPort) return "the Host header does not carry this server's port";
  const name = host.name;
  if (isLoopbackName(name) || allowed.has(name)) return null;
  // an address (not a name) cannot be rebound: the one the request came in on is this server
  if (isIP(name) && name === localAddress(req)) return null;
  return `Host '${name.slice(0, 100)}' is not a name of this server (set KIMINA_ALLOWED_HOSTS to add one)`;
}

export function refuseBrowsers(options: BrowserGuardOptions = {}): RequestHandler {
  const allowed = new Set((options.allowedHosts ?? []).map((h) => h.trim().toLowerCase()).filter(Boolean));
  return (req, res, next) => {
    const hostIssue = hostProblem(req, allowed);
    if (hostIssue) {
      sendDetail(res, 403, `Refused: ${hostIssue}`);
      return;
    }
    const origin = req.headers.origin;
    if (origin !== undefined && origin !== `http://${req.headers.host}`) {
      sendDetail(res, 403, 'Refused: requests from web pages (a foreign Origin) are not accepted');
      return;
    }
    const site = req.headers['sec-fetch-site'];
    if (site !== undefined && site !== 'same-origin' && site !== 'none') {
      sendDetail(res, 403, 'Refused: cross-site requests are not accepted');
      return;
    }
    if (req.method === 'POST' || req.method === 'PUT' || req.method === 'PATCH') {
      const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
      if (type !== 'application/json') {
        sendDetail(res, 415, 'Content-Type must be application/json');
        return;
      }
    }
    next();
  };
}
