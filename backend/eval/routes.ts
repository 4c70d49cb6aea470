// HTTP face of evaluation for `kimina serve` (Training Monitor, extension): stored runs, their reports,
// plots and comparisons. Read-only; runs are started with `kimina eval run` or `evaluate()`.
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import type { Db } from '../store/db';
import { EvalStore } from '../store/eval';
import { compareReports } from './compare';
import { bySourceSvg, comparisonSvg, passAtKSvg } from './plots';
import { buildReport } from './report';

type Handler = (req: Request, res: Response) => unknown;

/** Unknown runs answer 404 `{detail}`; anything else goes to the app's error handler. */
function route(store: EvalStore, fn: Handler) {
  return (req: Request, res: Response, next: NextFunction) => {
    try {
      for (const key of ['name', 'other'] as const) {
        const name = req.params[key];
        if (typeof name === 'string' && !store.getRun(name)) { res.status(404).json({ detail: `no evaluation run named '${name}'` }); return; }
      }
      const out = fn(req, res);
      if (out !== undefined && !res.headersSent) res.json(out);
    } catch (err) {
      next(err);
    }
  };
}

export function createEvalRouter(store: EvalStore): Router {
  const r = express.Router();
  const name = (req: Request) => String(req.params.name);
  const svg = (res: Response, body: string) => { res.type('image/svg+xml').send(body); };
  r.get('/v1/eval/runs', route(store, () => ({ runs: store.listRuns().map((run) => store.summary(run.name)) })));
  r.get('/v1/eval/runs/:name', route(store, (req) => buildReport(store, name(req))));
  r.get('/v1/eval/runs/:name/pass-at-k.svg', route(store, (req, res) => svg(res, passAtKSvg(buildReport(store, name(req))))));
  r.get('/v1/eval/runs/:name/by-source.svg', route(store, (req, res) => svg(res, bySourceSvg(buildReport(store, name(req))))));
  r.get('/v1/eval/runs/:name/compare/:other', route(store, (req) => compareReports(buildReport(store, name(req)), buildReport(store, String(req.params.other)))));
  r.get('/v1/eval/runs/:name/compare/:other/pass-at-k.svg', route(store, (req, res) =>
    svg(res, comparisonSvg(compareReports(buildReport(store, name(req)), buildReport(store, String(req.params.other)))))));
  return r;
}

/** For the `kimina serve` mounts registry (backend/api/mounts.ts): runs in the app's database. */
export function evalRouterFactory(ctx: { db?: Db }): Router {
  if (!ctx.db) throw new Error('the evaluation routes need the app\'s store (ApiContext.db)');
  return createEvalRouter(new EvalStore(ctx.db));
}
