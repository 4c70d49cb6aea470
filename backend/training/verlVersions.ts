// Which verl an exported job is written for, and how its reward is wired there. verl moved its reward path twice
// between the recipe's fork (0.5.0) and the newest release (0.9.1, 2026-09), read from each release's wheel:
// - 0.5.x, 0.6.x: `reward_model.reward_manager=batch` calls one function with the whole batch, and
//   `reward_model.launch_reward_fn_async` runs it beside the rollout (reward_model/reward_model.yaml).
// - 0.7.x to 0.9.x: the reward loop (verl/experimental/reward_loop) is the default; its managers (`naive`,
//   `dapo`, `gdpo`, `remote`, `rate_limited`: reward_manager/registry.py) call
//   `compute_score(data_source=, solution_str=, ground_truth=, extra_info=)` once per sample, awaiting it when it
//   is a coroutine function (naive.py run_single). `launch_reward_fn_async` is gone from the config from 0.7.1
//   (Hydra refuses the key), and the legacy keys `reward_model.reward_manager` and `custom_reward_function.*`
//   still compose: 0.7.0 reads them directly, 0.7.1+ moves them into `reward.*` (reward_loop.py
//   migrate_legacy_reward_impl).
// A release outside these series is refused: its config was never checked against the job.

export type VerlRewardWiring = 'batch' | 'reward-loop';

export interface VerlTarget {
  /** The exact version the job is written for, e.g. 0.9.1. */
  version: string;
  /** The release series whose config the job matches, e.g. 0.9. */
  series: string;
  wiring: VerlRewardWiring;
  /** Where the version came from, for the export's message. */
  from: 'flag' | 'trainer environment' | 'default';
}

/** Release series the export knows, with the newest release of each (PyPI, 2026-12-06). */
export const VERL_SERIES: Readonly<Record<string, { newest: string; wiring: VerlRewardWiring }>> = {
  '0.5': { newest: '0.5.0', wiring: 'batch' },
  '0.6': { newest: '0.6.1', wiring: 'batch' },
  '0.7': { newest: '0.7.1', wiring: 'reward-loop' },
  '0.8': { newest: '0.8.0', wiring: 'reward-loop' },
  '0.9': { newest: '0.9.1', wiring: 'reward-loop' },
};

/** The newest verl the export knows: what a job is written for when nothing says otherwise. */
export const NEWEST_VERL = '0.9.1';

export class VerlVersionError extends Error {}

/** The release series of a version string (0.9.1, 0.7.0.dev, 0.5.0rc1 → 0.9, 0.7, 0.5); undefined if unreadable. */
export function verlSeries(version: string): string | undefined {
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
  return { version, series, wiring: known.wiring, from };
}
