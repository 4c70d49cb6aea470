// Verification routes: kimina-lean-server compatible (`/api/check`, `/verify`, `/one_pass_verify_batch`,
// `/health`) and our richer `/v1/check`. Bodies arrive checked against the contract (backend/protocol/verify.ts);
// absent settings take kimina-lean-server's defaults here.
import { modelText } from '../lean/authorship';
import type { Request, Response, Router } from 'express';
import type { CheckResponse, HealthResponse, LoadResponse, V1CheckResponse, VerifyResponse } from '../protocol';
import type { BatchVerifier } from '../lean/verifier';
import { bodyLimit, serveRoutes } from './contract';
import { clientKey } from '../lean/admission';
import { toKlsResult } from './klsCompat';
import { DEFAULT_VERDICT_MODE, verdictInMode } from '../lean/verdictModes';
import { version } from '../../package.json';

/** Aborted when the client goes away before its answer is sent (queued checks are dropped). */
function clientGone(res: Response): AbortSignal {
  const controller = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  return controller.signal;
}

/** The fair-sharing identity of a check request (lean/admission.ts). */
function checkClient(req: Request): string {
  return clientKey('check', req.headers['x-kimina-client'], req.socket.remoteAddress);
}

export function verifyRouter(verifier: BatchVerifier): Router {
  return serveRoutes({
    health: (_input, req): HealthResponse => {
      const s = verifier.stats();
      return {
        status: 'ok',
        version,
        repls: { total: s.total ?? 0, busy: s.busy ?? 0, queued: s.waiting ?? 0 },
        bodyLimitBytes: bodyLimit(req),
      };
    },

    load: (): LoadResponse => {
      const s = verifier.stats();
      return {
        inFlight: s.inFlight,
        capacity: s.maxInFlight,
        waiting: s.waiting ?? 0,
        repls: { total: s.total ?? 0, busy: s.busy ?? 0 },
      };
    },

    apiCheck: async ({ body }, req, res): Promise<CheckResponse> => {
      const outcomes = await verifier.checkBatch(
        body.snippets.map((s) => modelText(s.code)), // snippets are nobody's code: filtered (docs/security.md)
        {
          timeout: body.timeout ?? 30,
          reuse: body.reuse ?? true,
          infotree: body.infotree ?? null,
          signal: clientGone(res),
          client: checkClient(req),
        },
      );
      return { results: outcomes.map((o, i) => toKlsResult(body.snippets[i].id, o, body.debug ?? false)) };
    },

    verify: async ({ body }, req, res): Promise<VerifyResponse> => {
      const codes = body.codes.map((c) => ({ customId: c.custom_id, code: (c.proof ?? c.code) as string }));
      const outcomes = await verifier.checkBatch(
        codes.map((c) => modelText(c.code)),
        {
          timeout: body.timeout ?? 300,
          reuse: !(body.disable_cache ?? false),
          infotree: body.infotree_type ?? null,
          signal: clientGone(res),
          client: checkClient(req),
        },
      );
      return {
        results: outcomes.map((o, i) => {
          const kls = toKlsResult(String(codes[i].customId), o, false);
          const entry: VerifyResponse['results'][number] = { custom_id: codes[i].customId };
          if (kls.error !== undefined) entry.error = kls.error;
          if (kls.response !== undefined) entry.response = { ...kls.response, time: kls.time };
          return entry;
        }),
      };
    },

    check: async ({ body }, req, res): Promise<V1CheckResponse> => {
      const outcomes = await verifier.checkBatch(
        body.snippets.map((s) => modelText(s.code)), // snippets are nobody's code: filtered (docs/security.md)
        {
          timeout: body.timeout ?? 60,
          infotree: body.infotree ?? null,
          theorems: body.theorems ?? undefined,
          signal: clientGone(res),
          client: checkClient(req),
        },
      );
      const mode = body.mode ?? DEFAULT_VERDICT_MODE;
      return {
        results: outcomes.map((o, i) => ({
          id: body.snippets[i].id,
          ...verdictInMode(o.verdict, mode),
          ...(o.response ? { response: o.response } : {}),
        })),
      };
    },
  });
}
