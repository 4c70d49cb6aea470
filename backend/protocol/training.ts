// Training messages (runs, metrics, rollouts): filled in by the training work.
export {};
