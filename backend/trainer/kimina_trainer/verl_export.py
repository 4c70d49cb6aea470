"""`python -m kimina_trainer.verl_export IN.jsonl OUT.parquet`: the verl dataset rows as parquet.

Input rows: {prompt_id, prompt, formal_statement}. Output columns follow the recipe's prepare_data.py:
data_source, prompt, ability, reward_model {style, ground_truth}, extra_info {formal_statement, index}.
"""
from __future__ import annotations

import json
import sys

import pyarrow as pa
import pyarrow.parquet as pq


def convert(src: str, dst: str, data_source: str) -> int:
    rows = []
    with open(src, encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            r = json.loads(line)
            rows.append({
                "data_source": data_source,
                "prompt": r["prompt"],
                "ability": "lean4",
                "reward_model": {"style": "rule", "ground_truth": "Should be solved in Lean 4."},
                "extra_info": {"formal_statement": r["formal_statement"], "index": str(r["prompt_id"])},
            })
    pq.write_table(pa.Table.from_pylist(rows), dst)
    return len(rows)


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 3):
        print("usage: python -m kimina_trainer.verl_export IN.jsonl OUT.parquet [DATA_SOURCE]", file=sys.stderr)
        return 2
    n = convert(argv[0], argv[1], argv[2] if len(argv) == 3 else "kimina/personal")
    print(f"{argv[1]}: {n} rows")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
