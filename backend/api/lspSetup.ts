// The language-server face's setup requests: pull a model and build the Lean REPL, the same code as
// `kimina model pull` and `kimina lean setup`, with `$/progress` on the client's token (LSP work-done
// progress) instead of a terminal. After a success the face's services are built afresh.
import type { CancellationToken, Connection, WorkDoneProgressReporter } from 'vscode-languageserver/node';
import type { LspRequestTypes, SetupResult } from '../protocol';
import { ProjectNotBuiltError, setupRepl } from '../lean/setup';
import { serveLspRequests } from './lspContract';
import { convertLazily } from '../model/lazyConvert';
import { hubOptionsOf, type HubSettings } from '../model/hub';
import { pullModel, type PullEvent } from '../model/modelStore';
import type { Settings } from '../settings/settings';

/** What the setup requests read: KIMINA_HOME (the model store and the REPL builds), the REPL's git URL, the hub's settings. */
export type SetupSettings = Pick<Settings, 'home' | 'replGitUrl' | 'replFlushFix' | 'childEnv'> & HubSettings;

export interface SetupRequestOptions {
  connection: Connection;
  settings: SetupSettings;
  /** Called after a setup request succeeded: the services should start again with what is now there. */
  onSetUp: () => void;
  log: (line: string) => void;
}

function percent(done: number | undefined, total: number | undefined): number | undefined {
  return done !== undefined && total ? Math.min(100, Math.floor((100 * done) / total)) : undefined;
}

function mib(n: number | undefined): string {
  return `${((n ?? 0) / 2 ** 20).toFixed(1)} MiB`;
}

/** What one pull event says on the progress line. */
function pullEventMessage(e: PullEvent): string {
  switch (e.stage) {
    case 'download':
      return `downloading ${e.file ?? ''} (${mib(e.done)} of ${mib(e.total)})`.replace('  ', ' ');
    case 'convert':
      return `converting to ONNX${e.total ? ` (${e.done ?? 0}/${e.total})` : ''}${e.message ? `: ${e.message}` : ''}`;
    default:
      return e.message ?? e.stage;
  }
}

async function withProgress(
  connection: Connection,
  token: LspRequestTypes['kimina/setup/lean']['params']['workDoneToken'],
  title: string,
  cancellable: boolean,
  work: (report: WorkDoneProgressReporter) => Promise<string>,
  cancel: CancellationToken,
  log: (line: string) => void,
): Promise<SetupResult> {
  const reporter = connection.window.attachWorkDoneProgress(token);
  reporter.begin(title, 0, undefined, cancellable);
  try {
    const message = await work(reporter);
    log(`${title}: ${message}`);
    return { ok: true, message };
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    log(`${title} failed: ${message}`);
    return { ok: false, message, ...(cancel.isCancellationRequested ? { cancelled: true } : {}) };
  } finally {
    reporter.done();
  }
}

export function registerSetupRequests({ connection, settings, onSetUp, log }: SetupRequestOptions): void {
  serveLspRequests(connection, {
    pullModel: async (params, cancel): Promise<SetupResult> => {
      const model = typeof params?.model === 'string' ? params.model.trim() : '';
      if (!model) return { ok: false, message: 'kimina/setup/pullModel needs a model id' };
      const controller = new AbortController();
      cancel.onCancellationRequested(() => controller.abort());
      const result = await withProgress(
        connection,
        params.workDoneToken,
        `pulling ${model}`,
        true,
        async (report) => {
          let last = 0;
          const pulled = await pullModel(model, {
            ...hubOptionsOf(settings),
            home: settings.home,
            convert: convertLazily,
            signal: controller.signal,
            onEvent: (e) => {
              const now = Date.now();
              if (e.stage === 'download' && now - last < 250 && (e.done ?? 0) < (e.total ?? 0)) return;
              last = now;
              // a percentage for the download only (conversion counts its own steps in the message), so it never goes back
              const pct = e.stage === 'download' ? percent(e.done, e.total) : undefined;
              if (pct === undefined) report.report(pullEventMessage(e));
              else report.report(pct, pullEventMessage(e));
            },
          });
          return `${model} is ready in ${pulled.dir}${pulled.converted ? ` (converted, ${pulled.manifest.quantize})` : ''}`;
        },
        cancel,
        log,
      );
      if (result.ok) onSetUp();
      return result;
    },
    setupLean: async (params, cancel): Promise<SetupResult> => {
      const project = typeof params?.project === 'string' ? params.project : '';
      if (!project) return { ok: false, message: 'kimina/setup/lean needs the Lean project folder' };
      let buildCommand: string | undefined;
      const result = await withProgress(
        connection,
        params.workDoneToken,
        'setting up the Lean verifier',
        false,
        async (report) => {
          try {
            const built = await setupRepl(
              project,
              (line) => {
                log(`[lean setup] ${line}`);
                report.report(line.trim().slice(0, 160));
              },
              settings,
              { build: params.build === true },
            );
            const from = built.provenance
              ? ` (repl has no revision for ${built.tag}: built from repl ${built.provenance.commit.slice(0, 12)}, made for ${built.provenance.madeFor}, with the project's toolchain; smoke test passed)`
              : '';
            return `REPL for ${built.tag} ready: ${built.binary}${from}`;
          } catch (err) {
            if (err instanceof ProjectNotBuiltError) buildCommand = err.result.project.buildCommand;
            throw err;
          }
        },
        cancel,
        log,
      );
      if (result.ok) onSetUp();
      return buildCommand && !result.ok ? { ...result, buildCommand } : result;
    },
  });
}
