// `kimina model pull|list|path|convert|calibrate`: the model store (and the engine choice) on the command line.
import { basename } from 'node:path';
import { settingsTable } from '../protocol/settingsTable';
import type { Settings } from '../settings/settings';
import { parseArgs, flagString } from './args';
import { ProgressBar, formatSeconds } from './progress';
import {
  DEFAULT_MODEL,
  listModels,
  locateModel,
  pullModel,
  resolveModelDir,
  type PullEvent,
  type Quantize,
} from '../model/modelStore';
import { hubEndpoint, hubOptionsOf } from '../model/hub';
import { convertLazily } from '../model/lazyConvert';
import { storedSchedules } from '../model/calibrationFile';
import { scheduleWords } from '../model/schedule';
import { calibrate, CALIBRATE_USAGE, storedChoiceLine } from './modelCalibrate';

const USAGE = `usage: kimina model <command>

  pull [ID] [--revision REV] [--quantize q4|fp32] [--force]
        download a model from the Hugging Face hub into the store (default ${DEFAULT_MODEL});
        checkpoints without an ONNX export in Kimina's layout are converted (4-bit by default, for CPU).
        Resumes interrupted downloads. Honours HF_TOKEN and HF_ENDPOINT.
  list [--json]
        the models in the store: name, size, format, folder; * marks the one in use (KIMINA_MODEL);
        then each model's device calibrations and the samples they decode at once (KIMINA_ROWS_AT_ONCE overrides),
        and the engine kimina.engine = auto chose on this machine (KIMINA_ENGINE naming one overrides);
        last, the engine kind in use (kimina.engine)
${CALIBRATE_USAGE}
  path [ID]
        the folder the ONNX engine would load for ID (default: KIMINA_MODEL or ${DEFAULT_MODEL})
  convert SRC [OUT] [--quantize q4|fp32]
        convert a local safetensors checkpoint folder into a model folder (OUT defaults to SRC)`;

export function formatBytes(n: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let v = n;
  let u = 0;
  while (v >= 1000 && u < units.length - 1) {
    v /= 1000;
    u++;
  }
  return `${u === 0 ? v : v.toFixed(v < 10 ? 2 : 1)} ${units[u]}`;
}

function quantizeFlag(value: string | undefined): Quantize {
  if (value === undefined) return 'q4';
  if (value !== 'q4' && value !== 'fp32') throw new Error(`--quantize must be q4 or fp32, got '${value}'`);
  return value;
}

/** One progress line for byte transfers: bar, MB done/total, speed, ETA, file (redrawn on a terminal). */
class ByteProgress {
  private readonly started = Date.now();
  private lastDraw = 0;
  private finished = false;
  constructor(
    private readonly label: string,
    private readonly stream = process.stderr,
  ) {}

  update(done: number, total: number, file: string): void {
    if (this.finished) return;
    const now = Date.now();
    const complete = done >= total;
    const every = this.stream.isTTY ? 100 : 5000;
    if (!complete && now - this.lastDraw < every) return;
    this.lastDraw = now;
    const seconds = (now - this.started) / 1000;
    const speed = seconds > 0 ? done / seconds : 0;
    const frac = total > 0 ? Math.min(1, done / total) : 1;
    const filled = Math.round(frac * 24);
    const eta = !complete && speed > 0 ? ` eta ${formatSeconds((total - done) / speed)}` : '';
    const line =
      `${this.label} [${'#'.repeat(filled)}${'.'.repeat(24 - filled)}] ${formatBytes(done)} / ${formatBytes(total)} ${formatBytes(speed)}/s${eta} ${complete ? '' : file}`.trimEnd();
    if (this.stream.isTTY) this.stream.write(`\r\x1b[2K${line}${complete ? '\n' : ''}`);
    else this.stream.write(line + '\n');
    if (complete) this.finished = true;
  }
}

/** Draws pull progress: bytes, speed and ETA while downloading, steps while converting. */
function pullReporter(id: string): (e: PullEvent) => void {
  let download: ByteProgress | undefined;
  let convert: ProgressBar | undefined;
  let convertDone = false;
  return (e) => {
    if (e.stage === 'listing') console.error(`kimina: ${e.message}`);
    if (e.stage === 'download' && e.total !== undefined && e.done !== undefined) {
      download ??= new ByteProgress(`downloading ${id}`);
      download.update(e.done, e.total, e.file ?? '');
    }
    if (e.stage === 'convert') {
      if (e.total === undefined) {
        console.error(`kimina: ${e.message}`);
        return;
      }
      if (convertDone) return;
      convert ??= new ProgressBar('converting', e.total);
      convert.setTotal(e.total);
      if (e.done === e.total) {
        convert.done(e.message ?? '');
        convertDone = true;
      } else convert.update(e.done ?? 0, e.message ?? '');
    }
  };
}

async function pull(args: string[], settings: Settings): Promise<number> {
  const p = parseArgs(args, ['force']);
  const id = p.positionals[0] ?? DEFAULT_MODEL;
  const controller = new AbortController();
  const stop = (): void => controller.abort();
  process.once('SIGINT', stop);
  try {
    const result = await pullModel(id, {
      ...hubOptionsOf(settings),
      home: settings.home,
      revision: flagString(p, 'revision'),
      quantize: quantizeFlag(flagString(p, 'quantize')),
      force: p.flags.get('force') === true,
      convert: convertLazily,
      onEvent: pullReporter(id),
      signal: controller.signal,
    });
    console.error(
      `kimina: ${id} is ready in ${result.dir}${result.converted ? ` (converted, ${result.manifest.quantize})` : ''}`,
    );
    if ((settings.model ?? DEFAULT_MODEL) !== id) console.error(`kimina: to use it, set KIMINA_MODEL=${id}`);
    return 0;
  } catch (err) {
    if (!controller.signal.aborted) throw err;
    console.error(`kimina: ${(err as Error).message}`);
    return 130;
  } finally {
    process.removeListener('SIGINT', stop);
  }
}

function list(args: string[], settings: Settings): number {
  const p = parseArgs(args, ['json']);
  const current = settings.model ?? DEFAULT_MODEL;
  const models = listModels(settings.home, current);
  const calibrations = (dir: string) => storedSchedules(dir, settings.rowsAtOnce);
  if (p.flags.get('json') === true) {
    const withCalibrations = models.map((m) => ({
      ...m,
      calibrations: calibrations(m.dir).map(({ key, schedule: s }) => ({
        key,
        cost: s.cost,
        rows: s.rows,
        from: s.from,
        expectedFirstProofSeconds: s.expectedFirstProofSeconds,
      })),
      engineChoice: storedChoiceLine(m.dir, settings),
    }));
    console.log(JSON.stringify(withCalibrations, null, 2));
    return 0;
  }
  if (models.length === 0) {
    console.log(
      `no models yet; run \`kimina model pull ${DEFAULT_MODEL}\` (hub: ${hubEndpoint({ hfEndpoint: settings.hfEndpoint })})`,
    );
    return 0;
  }
  const rows = models.map((m) => [
    m.isDefault ? '*' : ' ',
    m.id === m.dir ? `${basename(m.dir)} (folder)` : m.id,
    formatBytes(m.bytes),
    m.format + (m.quantize ? ` ${m.quantize}` : ''),
    m.dir,
  ]);
  const header = [' ', 'NAME', 'SIZE', 'FORMAT', 'PATH'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  for (const r of [header, ...rows])
    console.log(r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]))).join('  '));
  const calibrated = rows.flatMap((r, i) =>
    calibrations(models[i].dir).map((c) => `  ${r[1]} on ${c.key}: ${scheduleWords(c.schedule)}`),
  );
  if (calibrated.length)
    console.log(
      `\ncalibrations (the engine times decode steps at first run; the rows at once minimise the expected time to the first verified proof, kimina.rowsAtOnce overrides):\n${calibrated.join('\n')}`,
    );
  const chosen = rows.flatMap((r, i) => {
    const line = storedChoiceLine(models[i].dir, settings);
    return line ? [`  ${r[1]}: ${line}`] : [];
  });
  if (chosen.length)
    console.log(
      `\nengine choice on this machine (kimina.engine = auto; \`kimina model calibrate\` compares again):\n${chosen.join('\n')}`,
    );
  if (!models.some((m) => m.isDefault))
    console.log(`\n(in use: ${current}, not in the store: run \`kimina model pull ${current}\`)`);
  console.log(`\nengine: kimina.engine = ${settings.engine}: ${settingsTable.engine.enum[settings.engine]}`);
  return 0;
}

async function convert(args: string[], settings: Settings): Promise<number> {
  const p = parseArgs(args);
  const src = p.positionals[0];
  if (!src) throw new Error('kimina model convert needs a checkpoint folder');
  const { dir: srcDir } = locateModel(settings.home, src);
  const out = p.positionals[1] ? locateModel(settings.home, p.positionals[1]).dir : srcDir;
  const quantize = quantizeFlag(flagString(p, 'quantize'));
  const report = pullReporter(basename(srcDir));
  await convertLazily(srcDir, out, {
    quantize,
    onProgress: (e) => report({ stage: 'convert', done: e.done, total: e.total, message: e.stage }),
  });
  console.error(`kimina: converted ${srcDir} into ${out} (${quantize})`);
  return 0;
}

export async function run(args: string[], settings: Settings): Promise<number> {
  const [command, ...rest] = args;
  switch (command) {
    case 'pull':
      return pull(rest, settings);
    case 'list':
      return list(rest, settings);
    case 'path':
      console.log(resolveModelDir(settings.home, rest[0] ?? settings.model ?? DEFAULT_MODEL, settings.hfHubCache));
      return 0;
    case 'convert':
      return convert(rest, settings);
    case 'calibrate':
      return calibrate(rest, settings);
    case undefined:
    case '--help':
    case '-h':
    case 'help':
      console.log(USAGE);
      return command === undefined ? 2 : 0;
    default:
      console.error(`kimina model: unknown command '${command}'\n\n${USAGE}`);
      return 2;
  }
}
