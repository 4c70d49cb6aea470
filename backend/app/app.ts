// The composition root: the one place that turns Settings into the backend's parts and closes them again.
// The store is opened once, the verifier pool built once, the engine loaded once (on first use, so a server
// answers before the model is in memory); each is closed once, in the reverse order of opening.
// `kimina serve`, the other commands and the tests build an App and hand its parts down; nothing else
// opens the store or loads the configured engine. With `demo`, the parts are the doubles of backend/demo.
import type { Engine } from '../model/engine';
import { createEngine, engineConfigOf, type EngineConfig } from '../model/index';
import { buildVerifier, verifierSettingsOf, type BuiltVerifier, type VerifierSettings } from '../lean/buildVerifier';
import { findUserProject } from '../lean/userProject';
import { userSource } from '../lean/authorship';
import { projectToolchainTag } from '../lean/launch';
import { resolve } from 'node:path';
import { lakeFound } from '../lean/lake';
import { openDb, type Db } from '../store/db';
import { AttemptStore } from '../store/attempts';
import { EvalStore } from '../store/eval';
import { RepairStore } from '../store/repairs';
import { AgentJobStore } from '../store/agentJobs';
import { AgentJobs } from '../editor/agentJobs';
import { agentToolbox, type AgentToolboxOptions, type AgentToolHandlers } from '../editor/agentToolbox';
import { createInProcessService } from '../editor/inProcess';
import type { ProveService } from '../editor/service';
import { TrainingStore } from '../store/training';
import { LazyStart, RunningProofs } from '../prover/running';
import { openTrainingService, type TrainingService } from '../training/service';
import { prepareDemo, type DemoParts } from '../demo/demo';
import { readSettings, type Settings } from '../settings/settings';
import { defaultAllowedAxioms } from '../lean/verdict';

/** The app's state as data: what a first run may still need to set up. */
export interface AppState {
  lean: { replBuilt: boolean; lakeFound: boolean };
}

/** How a trainer reaches this backend: the server's URL once it listens, and the API token it requires. */
export interface TrainingLink {
  backendUrl: () => string | undefined;
  token: () => string | undefined;
}

export interface AppOptions {
  /** Default: read from the environment now. */
  settings?: Settings;
  /** Changes to the verifier's settings from command-line flags (`--project`, `--allow-native-decide`, …). */
  verifier?: Partial<VerifierSettings>;
  /** TEST DOUBLES instead of the configured model and Lean: the scripted model and the stand-in REPL (backend/demo). */
  demo?: boolean;
  log?: (line: string) => void;
  /** Seams for tests: how the store is opened and the engine loaded. */
  openStore?: (path: string) => Db;
  loadEngine?: (config: EngineConfig, log: (line: string) => void) => Promise<Engine>;
}

interface Part {
  name: string;
  close: () => unknown;
}

export class App {
  readonly settings: Settings;
  readonly demo: boolean;
  private readonly log: (line: string) => void;
  private readonly options: AppOptions;
  /** What is open, in the order it was opened. */
  private readonly parts: Part[] = [];
  private db?: Db;
  private attemptStore?: AttemptStore;
  private evalStore?: EvalStore;
  private trainingStore?: TrainingStore;
  private repairStore?: RepairStore;
  private proofs?: RunningProofs;
  private agentJobStoreValue?: AgentJobStore;
  private agentJobList?: AgentJobs;
  private ownService?: LazyStart<ProveService>;
  private trainingOpen?: Promise<TrainingService>;
  private built?: BuiltVerifier;
  private engineLoad?: Promise<Engine>;
  private verifierSettingsValue?: VerifierSettings;
  private readonly projectVerifiers = new Map<string, BuiltVerifier>();
  private demoParts?: DemoParts;
  private closing?: Promise<void>;

  constructor(options: AppOptions = {}) {
    this.options = options;
    this.demo = options.demo === true;
    this.settings = options.settings ?? readSettings();
    this.log = options.log ?? ((line) => console.error(line));
    if (this.demo) {
      this.demoParts = prepareDemo();
      this.own('demo model folder', this.demoParts.cleanup);
    }
  }

  /** Something to close with the app (after everything opened later). */
  own(name: string, close: () => unknown): void {
    if (this.closing) throw new Error(`the app is closing: cannot take ${name}`);
    this.parts.push({ name, close });
  }

  /** Where the store lives (`:memory:` for the demo: it never feeds training data). */
  get storePath(): string {
    return this.demo ? ':memory:' : this.settings.db;
  }

  /** The backend's one SQLite handle. */
  store(): Db {
    if (!this.db) {
      const db = (this.options.openStore ?? openDb)(this.storePath);
      this.db = db;
      this.own('store', () => db.close());
    }
    return this.db;
  }

  attempts(): AttemptStore {
    this.attemptStore ??= new AttemptStore(this.store());
    return this.attemptStore;
  }

  /** Evaluation runs and results, in the same database. */
  evals(): EvalStore {
    this.evalStore ??= new EvalStore(this.store());
    return this.evalStore;
  }

  /** Training runs, metrics and rollouts, in the same database. */
  trainingRuns(): TrainingStore {
    this.trainingStore ??= new TrainingStore(this.store());
    return this.trainingStore;
  }

  /** The Repair All queue, in the same database. */
  repairs(): RepairStore {
    this.repairStore ??= new RepairStore(this.store());
    return this.repairStore;
  }

  /** The one registry of running proofs the app's faces share (HTTP and language server). */
  runningProofs(): RunningProofs {
    this.proofs ??= new RunningProofs();
    return this.proofs;
  }

  /** Agents' proof jobs, in the same database. */
  agentJobStore(): AgentJobStore {
    this.agentJobStoreValue ??= new AgentJobStore(this.store());
    return this.agentJobStoreValue;
  }

  /**
   * The one list of agents' proof jobs (the MCP tools `prove`, `repair`, `job`, `apply`), registered in the app's
   * registry of running proofs beside the editor's; built once, over the prove service of the first call.
   */
  agentJobs(service: () => Promise<ProveService>): AgentJobs {
    if (!this.agentJobList) {
      const jobs = new AgentJobs({
        store: this.agentJobStore(),
        proofs: this.runningProofs(),
        service,
        perClient: this.settings.agentJobsPerClient,
        keepHours: this.settings.agentJobKeepHours,
        log: this.log,
      });
      this.agentJobList = jobs;
      this.own('agent jobs', () => jobs.close());
    }
    return this.agentJobList;
  }

  /** The prove service over this app's own parts (engine loaded on first use), for agents' jobs. */
  private proveService(): Promise<ProveService> {
    this.ownService ??= new LazyStart(() =>
      createInProcessService(
        {
          verifier: () => this.verifier(),
          verifierForFile: (file) => this.verifierForFile(file),
          engine: () => this.engine(),
          attempts: () => this.attempts(),
          describe: () => this.describe(),
          state: () => this.state(),
          close: async () => {}, // the parts are the app's: it closes them
        },
        this.log,
      ),
    );
    return this.ownService.get();
  }

  /**
   * The agent tools over this app's parts (`kimina serve`'s `/mcp`, `kimina mcp`): checks pass the verifier's fair
   * admission under the caller's key, proofs run in this process, paths stay inside `roots`.
   */
  agentToolbox(roots: () => string[]): AgentToolHandlers {
    return this.agentsOver(
      () => this.proveService(),
      roots,
      (code, client, signal, file) =>
        (file ? this.verifierForFile(file) : this.verifier()).admission.check(code, { signal, client }),
    ).tools;
  }

  /**
   * The agent tools over a face's own prove service (`kimina lsp`: in this process or an attached `kimina serve`),
   * with the job list in this app's database and registry of running proofs.
   */
  agentsOver(
    service: () => Promise<ProveService>,
    roots: () => string[],
    // Lean through the face's services; before they can start (no model pulled yet) through this app's verifier,
    // so checking never waits for a model
    check: AgentToolboxOptions['check'] = async (code, client, signal, file) => {
      const started = await service().catch(() => null);
      return started
        ? started.check(code, signal, file ? { file } : undefined)
        : (file ? this.verifierForFile(file) : this.verifier()).admission.check(code, { signal, client });
    },
  ): { tools: AgentToolHandlers; jobs: AgentJobs } {
    const jobs = this.agentJobs(service);
    const tools = agentToolbox({
      roots,
      check,
      service,
      jobs,
      // an unchanged file is the user's: checked in its own project, its own commands unfiltered (still audited)
      checkUserFile: (text, path, _client, signal) =>
        this.verifierForFile(path).verifier.checkUserFile(userSource(text), { signal }),
      allowedAxioms: this.verifierSettings().allowedAxioms ?? defaultAllowedAxioms,
      childEnv: this.settings.childEnv,
    });
    return { tools, jobs };
  }

  /**
   * The training service over the app's stores, verifier and engine, opened once (the link of the first call
   * counts). Runs that were running are resumed by the caller (`kimina serve` once it listens); closing the app
   * detaches it: trainers keep their checkpoints and the next backend resumes them.
   */
  training(link: TrainingLink): Promise<TrainingService> {
    if (!this.trainingOpen) {
      const settings = this.settings;
      this.trainingOpen = openTrainingService({
        store: this.trainingRuns(),
        attempts: this.attempts(),
        verifier: this.verifier().admission,
        token: link.token,
        deferRecover: true,
        settings,
        // the configured prover model, shared with the prove routes, used by win-rate estimation
        jobs: { engine: () => this.engine() },
        backendUrl: () => link.backendUrl() ?? settings.trainerBackendUrl ?? `http://127.0.0.1:${settings.port}`,
      });
      this.trainingOpen.then(
        (service) => {
          if (this.closing) service.detach();
          else this.own('training service', () => service.detach());
        },
        () => (this.trainingOpen = undefined),
      );
    }
    return this.trainingOpen;
  }

  /** The verifier's settings: the app's settings, the demo's REPL, and the command's flags. */
  verifierSettings(): VerifierSettings {
    this.verifierSettingsValue ??= {
      ...verifierSettingsOf(this.settings),
      ...this.demoParts?.verifier,
      ...this.options.verifier,
    };
    return this.verifierSettingsValue;
  }

  /** The Lean verifier (REPL pool or `lake env lean`), built on first use. */
  verifier(): BuiltVerifier {
    if (!this.built) {
      const built = buildVerifier(this.verifierSettings());
      this.built = built;
      this.own('verifier', () => built.verifier.close());
    }
    return this.built;
  }

  /**
   * The verifier for the user's file at `file`: the one of its own Lean project (the nearest folder above it with a
   * lakefile and a lean-toolchain: its toolchain, `lake env` and build; lean/userProject.ts), built once per project;
   * the app's verifier when the file has none or it is the app's project.
   */
  verifierForFile(file: string): BuiltVerifier {
    const settings = this.verifierSettings();
    const projectDir = findUserProject(file);
    if (projectDir === undefined || resolve(projectDir) === resolve(settings.leanProject)) return this.verifier();
    let built = this.projectVerifiers.get(projectDir);
    if (!built) {
      // KIMINA_REPL_PATH was built for the verifier's project: another toolchain finds its own REPL (the project's
      // `repl` package, or `kimina lean setup`'s for its tag), else runs `lake env lean`
      const sameToolchain = projectToolchainTag(projectDir) === projectToolchainTag(settings.leanProject);
      const own = buildVerifier({
        ...settings,
        leanProject: projectDir,
        ...(sameToolchain ? {} : { replPath: undefined }),
      });
      built = own;
      this.projectVerifiers.set(projectDir, own);
      this.own(`verifier of ${projectDir}`, () => own.verifier.close());
    }
    return built;
  }

  engineConfig(): EngineConfig {
    return { ...engineConfigOf(this.settings), ...this.demoParts?.engine };
  }

  /** The configured engine, loaded once on first use; a failed load is tried again on the next call. */
  engine(): Promise<Engine> {
    this.engineLoad ??= (
      this.options.loadEngine ??
      ((config, log) => createEngine(config, { home: this.settings.home, log, childEnv: this.settings.childEnv }))
    )(this.engineConfig(), this.log).then(
      (engine) => {
        this.parts.push({ name: 'engine', close: () => engine.close() });
        return engine;
      },
      (err: unknown) => {
        this.engineLoad = undefined;
        throw err;
      },
    );
    return this.engineLoad;
  }

  /** What is there, as data (for first-run guidance): the verifier runs a REPL build; lake can be found. */
  state(): AppState {
    return { lean: { replBuilt: this.verifier().mode === 'repl', lakeFound: lakeFound(this.settings.searchPath) } };
  }

  /** One line per part, for people: which engine, verifier and store run. */
  async describe(): Promise<string[]> {
    const engine = await this.engine();
    if (this.demo) {
      return [
        'running with test doubles: a scripted ONNX model (fixed answers) and the stand-in REPL (text rules, not Lean).',
        'Nothing is proved for real; see docs/prover.md for a real model and Lean.',
      ];
    }
    // The schedule first (a short calibration at first run on this device), so the engine's line shows it.
    await engine
      .schedule?.()
      .catch((err: Error) => this.log(`engine: no schedule, the calibration failed: ${err.message}`));
    return [
      `engine: ${engine.name} (${engine.model})${engine.detail ? `: ${engine.detail}` : ''}`,
      `verifier: ${this.verifier().describe}`,
      `store: ${this.storePath}`,
    ];
  }

  /**
   * Closes the engine and the verifier and forgets them, so that their next use loads the model and the Lean that
   * are there now (the language server, after a setup request). The store, the running proofs and the Repair All
   * queue stay open: one app, one database handle per process. Refused while the training service, which holds
   * the verifier, is open.
   */
  async reload(): Promise<void> {
    if (this.trainingOpen) throw new Error('the training service holds the verifier: close the app instead');
    await this.engineLoad?.catch(() => undefined); // an engine still loading is closed too
    this.engineLoad = undefined;
    this.built = undefined;
    const going: Part[] = [];
    for (let i = this.parts.length - 1; i >= 0; i--)
      if (reloaded.includes(this.parts[i].name)) going.push(...this.parts.splice(i, 1));
    await this.closeParts(going);
  }

  /** Closes what was opened, last first, each once; failures are logged and the rest still closes. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.engineLoad?.catch(() => undefined); // an engine still loading is closed with the rest
      await this.closeParts(this.parts.splice(0).reverse());
    })();
    return this.closing;
  }

  private async closeParts(parts: Part[]): Promise<void> {
    for (const part of parts) {
      try {
        await part.close();
      } catch (err) {
        this.log(`closing the ${part.name}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  }
}

/** The parts `reload` closes and builds afresh on their next use. */
const reloaded = ['engine', 'verifier'];

export function openApp(options: AppOptions = {}): App {
  return new App(options);
}
