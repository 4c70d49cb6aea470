// HTTP face of evaluation for `kimina serve` (Training Monitor, extension): stored runs, their reports,
// plots and comparisons. Read-only; runs are started with `kimina eval run` or `evaluate()`.
import type { Response, Router } from 'express';
import { serveRoutes } from './contract';
import type { EvalStore } from '../store/eval';
import type { ApiContext } from './server';
import { compareReports } from '../eval/compare';
import { bySourceSvg, comparisonSvg, passAtKSvg } from '../eval/plots';
import { buildReport } from '../eval/report';

/** A run name that is not stored: 404 `{detail}`. */
class UnknownRun extends Error {}

export function createEvalRouter(store: EvalStore): Router {
  const known = (name: string): string => {
    if (!store.getRun(name)) throw new UnknownRun(`no evaluation run named '${name.slice(0, 200)}'`);
    return name;
  };
  const report = (name: string) => buildReport(store, known(name));
  const svg = (res: Response, body: string) => {
    res.type('image/svg+xml').send(body);
  };
  return serveRoutes(
    {
      evalRuns: () => ({ runs: store.listRuns().map((run) => store.summary(run.name)) }),
      evalReport: ({ params }) => report(params.name),
      evalPassAtKSvg: ({ params }, _req, res) => svg(res, passAtKSvg(report(params.name))),
      evalBySourceSvg: ({ params }, _req, res) => svg(res, bySourceSvg(report(params.name))),
      evalCompare: ({ params }) => compareReports(report(params.name), report(params.other)),
      evalComparePassAtKSvg: ({ params }, _req, res) =>
        svg(res, comparisonSvg(compareReports(report(params.name), report(params.other)))),
    },
    { mapError: (err) => (err instanceof UnknownRun ? { status: 404, message: err.message } : undefined) },
  );
}

/** For the `kimina serve` mounts registry (backend/api/mounts.ts): runs in the app's database. */
export function evalRouterFactory(ctx: Pick<ApiContext, 'evals'>): Router {
  return createEvalRouter(ctx.evals);
}
