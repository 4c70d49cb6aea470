// Evaluation messages (benchmark runs, pass@k reports): filled in by the evaluation work.
export {};
