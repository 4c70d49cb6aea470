# onnxruntime-genai's decode step under onnxruntime's own profiler (bench/profileNative.ts runs it beside the
# same profile of our C API path): the model folder's files linked into a temporary folder whose
# genai_config.json turns "enable_profiling" on, a prompt of `cached` tokens prefilled, a warm-up step,
# then `steps` timed steps. Prints one JSON object: the temporary folder (where onnxruntime's profile is
# written) and each step's wall time.
import json
import os
import sys
import tempfile

import onnxruntime_genai as og
from steps import timed_steps

args = json.loads(sys.argv[1])
src, threads, cached, steps = os.path.abspath(args["dir"]), args["threads"], args["cached"], args["steps"]

work = tempfile.mkdtemp(prefix="kimina-genai-profile-")
for name in os.listdir(src):
    if name != "genai_config.json":
        os.symlink(os.path.join(src, name), os.path.join(work, name))
with open(os.path.join(src, "genai_config.json")) as f:
    config = json.load(f)
options = config["model"]["decoder"].setdefault("session_options", {})
options["intra_op_num_threads"] = threads
options["enable_profiling"] = os.path.join(work, "ort")
with open(os.path.join(work, "genai_config.json"), "w") as f:
    json.dump(config, f)

og_config = og.Config(work)
og_config.clear_providers()  # CPU
model = og.Model(og_config)
step_ms = timed_steps(model, cached, steps)
# Which libonnxruntime onnxruntime-genai loaded (the onnxruntime wheel beside it).
with open("/proc/self/maps") as f:
    ort_library = next((line.split()[-1] for line in f if "libonnxruntime.so" in line), "")
# onnxruntime writes the profile when the session ends, at the latest when this process exits: the caller
# reads it from `folder` (and removes the folder).
print(json.dumps({"version": og.__version__, "ort_library": ort_library, "folder": work, "step_ms": step_ms}))
