# The decode measurement both onnxruntime-genai scripts make (decode.py, profile.py): `rows` prompts of `cached`
# tokens prefilled (not timed), a warm-up step, then `steps` timed steps; each step's wall time in ms.
import time

import onnxruntime_genai as og


def prompt(length, row=0):
    return [1000 + ((i * 7919 + row * 131) % 100000) for i in range(length)]


def timed_steps(model, cached, steps, rows=1):
    params = og.GeneratorParams(model)
    params.set_search_options(max_length=cached + steps + 8, batch_size=rows, do_sample=False)
    generator = og.Generator(model, params)
    generator.append_tokens([t for r in range(rows) for t in prompt(cached, r)])  # prefill (not timed)
    generator.generate_next_token()  # warm-up step
    step_ms = []
    for _ in range(steps):
        t = time.perf_counter()
        generator.generate_next_token()
        step_ms.append((time.perf_counter() - t) * 1000)
    del generator
    return step_ms
