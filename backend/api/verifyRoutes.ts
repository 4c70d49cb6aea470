// Verification routes: kimina-lean-server compatible (`/api/check`, `/verify`,
// `/one_pass_verify_batch`, `/health`) and our richer `/v1/check`.
import { Router, type Request, type Response } from 'express';
import type { CheckResponse, HealthResponse, V1CheckResponse, VerifyResponse } from '../protocol';
import type { BatchVerifier } from '../lean/verifier';
import { clientKey } from '../lean/admission';
import { toKlsResult } from './klsCompat';
import { parseCheckRequest, parseV1CheckRequest, parseVerifyRequest } from './validate';
import { version } from '../../package.json';

/** Aborted when the client goes away before its answer is sent (queued checks are dropped). */
function clientGone(res: Response): AbortSignal {
  const controller = new AbortController();
  res.on('close', () => { if (!res.writableFinished) controller.abort(); });
  return controller.signal;
}

/** The fair-sharing identity of a check request (lean/admission.ts). */
function checkClient(req: Request): string {
  return clientKey('check', req.headers['x-kimina-client'], req.socket.remoteAddress);
}

export function verifyRouter(verifier: BatchVerifier): Router {
  const router = Router();

  const health = (_req: Request, res: Response): void => {
    const s = verifier.stats();
    const body: HealthResponse = { status: 'ok', version, repls: { total: s.total ?? 0, busy: s.busy ?? 0, queued: s.waiting ?? 0 } };
    res.json(body);
  };
  router.get(['/', '/health', '/health/'], health);

  const apiCheck = async (req: Request, res: Response): Promise<void> => {
    const r = parseCheckRequest(req.body);
    const outcomes = await verifier.checkBatch(r.snippets.map((s) => s.code), {
      timeout: r.timeout, reuse: r.reuse, infotree: r.infotree, signal: clientGone(res), client: checkClient(req),
    });
    const body: CheckResponse = { results: outcomes.map((o, i) => toKlsResult(r.snippets[i].id, o, r.debug)) };
    res.json(body);
  };
  router.post(['/api/check', '/api/check/'], apiCheck);

  const verify = async (req: Request, res: Response): Promise<void> => {
    const r = parseVerifyRequest(req.body);
    const outcomes = await verifier.checkBatch(r.codes.map((c) => c.code), {
      timeout: r.timeout, reuse: !r.disableCache, infotree: r.infotree, signal: clientGone(res), client: checkClient(req),
    });
    const body: VerifyResponse = {
      results: outcomes.map((o, i) => {
        const kls = toKlsResult(String(r.codes[i].customId), o, false);
        const entry: VerifyResponse['results'][number] = { custom_id: r.codes[i].customId };
        if (kls.error !== undefined) entry.error = kls.error;
        if (kls.response !== undefined) entry.response = { ...kls.response, time: kls.time };
        return entry;
      }),
    };
    res.json(body);
  };
  router.post(['/verify', '/one_pass_verify_batch'], verify);

  router.post('/v1/check', async (req: Request, res: Response) => {
    const r = parseV1CheckRequest(req.body);
    const outcomes = await verifier.checkBatch(r.snippets.map((s) => s.code), {
      timeout: r.timeout, infotree: r.infotree, theorems: r.theorems, signal: clientGone(res), client: checkClient(req),
    });
    const body: V1CheckResponse = {
      results: outcomes.map((o, i) => ({ id: r.snippets[i].id, ...o.verdict, ...(o.response ? { response: o.response } : {}) })),
    };
    res.json(body);
  });

  return router;
}
