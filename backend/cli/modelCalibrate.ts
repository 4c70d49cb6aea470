// `kimina model calibrate`: times every in-process engine that can run here (onnx, and llama.cpp where it is
// installed or a GPU it can use is there, or with --with-llama, which installs it), prints each one's cost model,
// rows at once and expected time to the first verified proof, and stores the choice kimina.engine = auto runs.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Settings } from '../settings/settings';
import { parseArgs } from './args';
import { engineConfigOf } from '../model/index';
import { DEFAULT_MODEL, locateModel } from '../model/modelStore';
import { forgetChoices, machineKey, readChoice, type EngineEstimate } from '../model/engineChoice';
import { compareAndStore, realAutoDeps } from '../model/autoEngine';
import { aboutTime, costWords } from '../model/schedule';

export const CALIBRATE_USAGE = `  calibrate [ID] [--with-llama] [--again] [--json]
        time the in-process engines on this machine (onnx; llama.cpp where installed or a GPU it can use is here,
        or --with-llama, which installs it), print each one's cost, rows at once and expected first proof, and
        store the choice kimina.engine = auto runs (--again: forget the stored calibrations first)`;

function estimateLine(e: EngineEstimate): string {
  if (!e.cost || e.expectedFirstProofSeconds === undefined) return `  ${e.label}: ${e.none ?? 'no estimate'}`;
  return `  ${e.label}: ${costWords(e.cost)} (${e.calibratedNow ? 'timed now' : 'stored'}); ${e.rows} row${e.rows === 1 ? '' : 's'} at once; expected first proof ${aboutTime(e.expectedFirstProofSeconds)} over the recipe's answers`;
}

/** The override note where kimina.engine names an engine. */
function overrideNote(settings: Settings): string {
  return settings.engine === 'auto' ? '' : ` (kimina.engine = ${settings.engine} overrides it)`;
}

/** The stored choice of a model folder for this machine and settings, in words, if any. */
export function storedChoiceLine(dir: string, settings: Settings): string | undefined {
  const choice = readChoice(dir, machineKey(engineConfigOf(settings)));
  return choice && `${choice.words} (chosen ${choice.at})${overrideNote(settings)}`;
}

export async function calibrate(args: string[], settings: Settings): Promise<number> {
  const p = parseArgs(args, ['with-llama', 'again', 'json']);
  const config = engineConfigOf({ ...settings, model: p.positionals[0] ?? settings.model });
  const options = {
    home: settings.home,
    childEnv: settings.childEnv,
    log: (l: string) => console.error(`kimina: ${l}`),
  };
  const modelDir = locateModel(settings.home, config.model ?? DEFAULT_MODEL).dir;
  if (p.flags.get('again') === true) {
    rmSync(join(modelDir, 'calibration.json'), { force: true });
    forgetChoices(modelDir);
  }
  const withLlama = p.flags.get('with-llama') === true;
  const llama = withLlama
    ? { candidate: true, why: '--with-llama', install: true }
    : await realAutoDeps.llamaCandidacy(config, options, modelDir);
  if (!llama.candidate)
    console.error(`kimina: llama.cpp is not compared: ${llama.why}; --with-llama installs it and compares both`);
  const { choice, engine } = await compareAndStore(
    config,
    llama.install ? options : { ...options, childEnv: undefined }, // installs only with a GPU here or --with-llama
    modelDir,
    llama.candidate ? ['onnx', 'llama'] : ['onnx'],
    undefined,
    llama.candidate ? undefined : llama.why,
  );
  await engine.close();
  if (p.flags.get('json') === true) {
    console.log(
      JSON.stringify({ ...choice, overridden: settings.engine === 'auto' ? undefined : settings.engine }, null, 2),
    );
    return 0;
  }
  console.log(`calibrated on this machine (${machineKey(config)}):`);
  for (const e of choice.estimates) console.log(estimateLine(e));
  console.log(`${choice.words}; stored for kimina.engine = auto${overrideNote(settings)}`);
  return 0;
}
