// Which verl an exported job is written for, and how its reward is wired there. verl moved its reward path twice
// between the recipe's fork (0.5.0) and the newest release (0.9.1, 2026-09), read from each release's wheel:
// - 0.5.x, 0.6.x: `reward_model.reward_manager=batch` calls one function with the whole batch, and
//   `reward_model.launch_reward_fn_async` runs it beside the rollout (reward_model/reward_model.yaml).
// - 0.7.x to 0.9.x: the reward loop (verl/experimental/reward_loop) is the default; its managers (`naive`,
//   `dapo`, `gdpo`, `remote`, `rate_limited`: reward_manager/registry.py) call
//   `compute_score(data_source=, solution_str=, ground_truth=, extra_info=)` once per sample, awaiting it when it
//   is a coroutine function (naive.py run_single). `launch_reward_fn_async` is gone from the config from 0.7.1
//   (Hydra refuses the key). Where the reward loop reads its settings moved too: 0.7.0 reads the top-level
//   `custom_reward_function.*` and `reward_model.reward_manager`; from 0.7.1 they live under `reward.*`
//   (config/reward/reward.yaml). 0.7.1 and 0.8.0's main_ppo still move the old keys there
//   (migrate_legacy_reward_impl), but 0.9's does not: there the old keys compose and are silently ignored, so
//   the job names `reward.*` from 0.7.1 on.
// - 0.9.x: `trainer.use_v1` (default true) runs the new v1 trainer (trainer/ppo/v1), which builds our dataset
//   class but never calls its `on_batch_end`, so the error-fix turn would never be served; the job sets
//   `trainer.use_v1=false`, the ray_trainer.py loop that still calls it (and scores through the same reward loop).
// A release outside these series is refused: its config was never checked against the job.

type VerlRewardWiring = 'batch' | 'reward-loop';

/** Where the reward settings live: top-level (`custom_reward_function`, `reward_model`) or under `reward`. */
type VerlRewardKeys = 'top-level' | 'reward';

export interface VerlTarget {
  /** The exact version the job is written for, e.g. 0.9.1. */
  version: string;
  /** The release series whose config the job matches, e.g. 0.9. */
  series: string;
  wiring: VerlRewardWiring;
  keys: VerlRewardKeys;
  /** The release defaults to its v1 trainer, which never calls the dataset's on_batch_end (0.9). */
  v1Trainer: boolean;
  /** Shell `case` patterns of the releases whose config the job matches (run_verl.sh checks the cluster's). */
  accepts: string[];
  /** Where the version came from, for the export's message. */
  from: 'flag' | 'trainer environment' | 'default';
}

/** Release series the export knows, with the newest release of each (PyPI, 2026-12-06). */
const VERL_SERIES: Readonly<Record<string, { newest: string; wiring: VerlRewardWiring; v1Trainer?: boolean }>> = {
  '0.5': { newest: '0.5.0', wiring: 'batch' },
  '0.6': { newest: '0.6.1', wiring: 'batch' },
  '0.7': { newest: '0.7.1', wiring: 'reward-loop' },
  '0.8': { newest: '0.8.0', wiring: 'reward-loop' },
  '0.9': { newest: '0.9.1', wiring: 'reward-loop', v1Trainer: true },
};

/** The newest verl the export knows: what a job is written for when nothing says otherwise. */
export const NEWEST_VERL = '0.9.1';

export class VerlVersionError extends Error {}

/** The release series of a version string (0.9.1, 0.7.0.dev, 0.5.0rc1 → 0.9, 0.7, 0.5); undefined if unreadable. */
function verlSeries(version: string): string | undefined {
  const m = /^v?(\d+)\.(\d+)(?:\.\d+)?(?:[.+-]?[a-z0-9.]*)?$/i.exec(version.trim());
  return m ? `${Number(m[1])}.${Number(m[2])}` : undefined;
}

/**
 * The verl a job is written for: `--verl` when given, else the one installed in the trainer environment, else
 * the newest the export knows. A version outside the known series is refused, naming the ones that are known.
 */
export function chooseVerl(flag: string | undefined, installed: string | undefined): VerlTarget {
  const [version, from] =
    flag !== undefined
      ? [flag.trim(), 'flag' as const]
      : installed
        ? [installed.trim(), 'trainer environment' as const]
        : [NEWEST_VERL, 'default' as const];
  const series = verlSeries(version);
  const known = series ? VERL_SERIES[series] : undefined;
  if (!series || !known) {
    const list = Object.entries(VERL_SERIES)
      .map(([s, k]) => `${s}.x (newest ${k.newest})`)
      .join(', ');
    const where =
      from === 'flag'
        ? 'given with --verl'
        : from === 'trainer environment'
          ? "installed in the trainer's environment"
          : '';
    throw new VerlVersionError(
      `verl ${version} (${where}) is not a release the export knows how to write a job for; it knows ${list}. ` +
        (from === 'flag'
          ? `Pass one of those with --verl (e.g. --verl ${NEWEST_VERL}).`
          : `Pass the verl your cluster runs with --verl (e.g. --verl ${NEWEST_VERL}).`),
    );
  }
  // 0.7.0 is the one reward-loop release with the settings at the top level.
  const patch = Number(/^v?\d+\.\d+\.(\d+)/.exec(version)?.[1] ?? 0);
  const early = series === '0.7' && patch === 0;
  const keys: VerlRewardKeys = known.wiring === 'batch' || early ? 'top-level' : 'reward';
  const accepts = series === '0.7' ? (early ? ['0.7.0', '0.7.0[.+a-z]*'] : ['0.7.[1-9]*']) : [`${series}.*`];
  return { version, series, wiring: known.wiring, keys, v1Trainer: known.v1Trainer === true, accepts, from };
}
