// Recorded real-REPL answers through a real HTTP server: kimina-lean-server's `/api/check` and
// `/verify`, judged as kimina-client judges them, over replaying REPLs (a TEST DOUBLE of Lean).
import { test } from 'node:test';
import { createApp, listen } from '../../backend/api/server';
import type { CheckResponse, ReplResponse, VerifyResponse } from '../../backend/protocol';
import { postJson } from '../api/apiServer';
import { kiminaAnalyze } from '../api/kiminaClientAnalyze';
import { snippetOf } from '../fixtures/replay-repl/index';
import { assertClasses, casesOf, describeReport, leanVersions, replayVerifier } from './replayCases';

for (const lean of leanVersions) {
  test(`/api/check and /verify over recorded answers of Lean ${lean}: every verdict class matches the recording`, async (t) => {
    const cases = casesOf(lean);
    const verifier = replayVerifier(lean);
    const http = await listen(await createApp({ verifier }), '127.0.0.1', 0, undefined);
    try {
      const check = await postJson(`${http.url}/api/check`, {
        snippets: cases.map((r) => ({ id: r.id, code: snippetOf(r) })),
        timeout: 60,
        debug: false,
        reuse: true,
        infotree: null,
      });
      const checked = (check.json as CheckResponse).results;
      const fromCheck = new Map(checked.map((res) => [res.id, kiminaAnalyze(res)]));
      t.diagnostic(describeReport('/api/check', lean, assertClasses('/api/check', cases, fromCheck, true)));

      const verify = await postJson(`${http.url}/verify`, {
        codes: cases.map((r) => ({ custom_id: r.id, proof: snippetOf(r) })),
        timeout: 60,
      });
      const verified = (verify.json as VerifyResponse).results;
      const asKls = (e: VerifyResponse['results'][number]): ReplResponse => ({
        id: String(e.custom_id),
        time: e.response?.time ?? 0,
        error: e.error,
        response: e.response,
      });
      const fromVerify = new Map(verified.map((e) => [String(e.custom_id), kiminaAnalyze(asKls(e))]));
      t.diagnostic(describeReport('/verify', lean, assertClasses('/verify', cases, fromVerify, true)));
    } finally {
      await http.close();
      await verifier.close();
    }
  });
}
