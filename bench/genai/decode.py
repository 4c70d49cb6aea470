# onnxruntime-genai 0.18.0 (bench/genai/.venv, created by bench/decode-setup) decoding the int4 CPU graph
# its model builder wrote for the benchmark's random Qwen3-0.6B weights: decode tokens/s at N cached
# tokens (one row, and `rows` rows at `batch_cached`), prefill tokens/s of prompts. Prints one JSON
# object on stdout. The measurement matches bench/oursDecode.ts: a warm-up step, then `steps` steps,
# the fastest 4 consecutive (bench/bestWindow.ts).
import json
import sys
import time

import onnxruntime_genai as og
from steps import prompt, timed_steps

args = json.loads(sys.argv[1])
model_dir, threads, steps = args["dir"], args["threads"], args["steps"]

config = og.Config(model_dir)
config.clear_providers()  # CPU
model = og.Model(config)


def best_window(step_ms, window=4, tokens_per_step=1):
    if len(step_ms) < window:
        window = len(step_ms)
    best = min(sum(step_ms[i : i + window]) for i in range(len(step_ms) - window + 1))
    return 1000 * window * tokens_per_step / best


def decode_rate(cached, rows):
    return best_window(timed_steps(model, cached, steps, rows), 4, rows)


def prefill_rate(length):
    params = og.GeneratorParams(model)
    params.set_search_options(max_length=length + 8, batch_size=1, do_sample=False)
    generator = og.Generator(model, params)
    t = time.perf_counter()
    generator.append_tokens(prompt(length))
    seconds = time.perf_counter() - t
    del generator
    return length / seconds


out = {"version": og.__version__, "decode": {}, "rows": {}, "prefill": {}}
for cached in args.get("points", []):
    out["decode"][str(cached)] = decode_rate(cached, 1)
    print(f"  onnxruntime-genai: {out['decode'][str(cached)]:.1f} tok/s at {cached} cached", file=sys.stderr)
for rows in args.get("rows", []):
    out["rows"][str(rows)] = decode_rate(args["batch_cached"], rows)
    print(f"  onnxruntime-genai: {rows} rows at {args['batch_cached']} cached {out['rows'][str(rows)]:.1f} tok/s", file=sys.stderr)
for length in args.get("prefill", []):
    out["prefill"][str(length)] = prefill_rate(length)
    print(f"  onnxruntime-genai: prefill {length} tokens at {out['prefill'][str(length)]:.0f} tok/s", file=sys.stderr)
print(json.dumps(out))
