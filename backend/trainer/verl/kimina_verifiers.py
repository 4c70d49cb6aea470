"""One `kimina serve` per node of a Ray cluster, for the verl reward module to spread its checks over.

    python kimina_verifiers.py start --kimina "npx kimina" --project /shared/lean-project [--port 8000]
    python kimina_verifiers.py urls        # the comma-separated KIMINA_REWARD_URL
    python kimina_verifiers.py stop

`start` places a detached Ray actor on every alive node (NodeAffinitySchedulingStrategy, zero CPUs reserved, so the
GPUs' workers keep theirs); each actor starts `kimina serve` on its node, listening on the node's address with the
API token from KIMINA_API_TOKEN (required: the servers listen beyond localhost), waits for /health and reports its
URL. Every node needs Node.js, this project (`--kimina`: the command that runs its CLI) and the Lean project with
its REPL built (`--project`, on shared storage or the same path everywhere: `kimina lean setup --project …` once).
Then `kimina train export-verl --reward-url "$(python kimina_verifiers.py urls)"` writes the job, whose
runtime_env.yaml hands the list to every worker. Ray is the cluster's own; nothing else is imported.
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
import urllib.request

NAMESPACE = "kimina-verifiers"


def _actor_class():
    import ray

    @ray.remote(num_cpus=0)
    class Verifier:
        def __init__(self, command: list[str], port: int, project: str, token: str, extra_env: dict[str, str]):
            # the address the cluster knows this node by (`ray start --node-ip-address`), as the workers reach it
            me = ray.get_runtime_context().get_node_id()
            ip = next(n["NodeManagerAddress"] for n in ray.nodes() if n["NodeID"] == me)
            env = {**os.environ, **extra_env, "KIMINA_API_TOKEN": token, "KIMINA_LEAN_PROJECT": project,
                   "KIMINA_ALLOWED_HOSTS": ip}
            self.url = f"http://{ip}:{port}"
            self.process = subprocess.Popen([*command, "serve", "--host", ip, "--port", str(port)], env=env,
                                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                if self.process.poll() is not None:
                    err = self.process.stderr.read().decode("utf-8", "replace")[-2000:] if self.process.stderr else ""
                    raise RuntimeError(f"kimina serve on {ip} exited {self.process.returncode}: {err}")
                try:
                    with urllib.request.urlopen(self.url + "/health", timeout=2) as r:
                        if json.loads(r.read()).get("status") == "ok":
                            return
                except OSError:
                    pass
                time.sleep(0.5)
            raise RuntimeError(f"kimina serve on {ip} did not answer /health within 120 s")

        def address(self) -> str:
            return self.url

        def alive(self) -> bool:
            return self.process.poll() is None

        def stop(self) -> None:
            if self.process.poll() is None:
                self.process.terminate()
                try:
                    self.process.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    self.process.kill()

    return Verifier


def _nodes() -> list[str]:
    import ray

    return [n["NodeID"] for n in ray.nodes() if n.get("Alive")]


def start(command: list[str], port: int, project: str, extra_env: dict[str, str]) -> list[str]:
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    token = os.environ.get("KIMINA_API_TOKEN")
    if not token:
        raise SystemExit("kimina_verifiers: set KIMINA_API_TOKEN (the servers listen beyond localhost)")
    verifier = _actor_class()
    actors = []
    for node in _nodes():
        name = f"verifier-{node[:12]}"
        try:
            actors.append(ray.get_actor(name, namespace=NAMESPACE))  # already running on that node
            continue
        except ValueError:
            pass
        # ray.remote adds .options to the actor class at run time
        actors.append(verifier.options(name=name, namespace=NAMESPACE, lifetime="detached",  # pyright: ignore[reportAttributeAccessIssue]
                                       scheduling_strategy=NodeAffinitySchedulingStrategy(node, soft=False))
                      .remote(command, port, project, token, extra_env))
    return ray.get([a.address.remote() for a in actors])


def _running() -> list:
    import ray

    out = []
    for info in ray.util.list_named_actors(all_namespaces=True):
        if info.get("namespace") == NAMESPACE:
            out.append(ray.get_actor(info["name"], namespace=NAMESPACE))
    return out


def urls() -> list[str]:
    import ray

    actors = _running()
    return sorted(u for u, ok in zip(ray.get([a.address.remote() for a in actors]),
                                    ray.get([a.alive.remote() for a in actors])) if ok)


def stop() -> int:
    import ray

    actors = _running()
    ray.get([a.stop.remote() for a in actors])
    for a in actors:
        ray.kill(a)
    return len(actors)


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("action", choices=["start", "urls", "stop"])
    p.add_argument("--address", default=os.environ.get("RAY_ADDRESS", "auto"), help="the Ray cluster (auto)")
    p.add_argument("--kimina", default="npx kimina", help="the command that runs this project's CLI on each node")
    p.add_argument("--project", default=os.environ.get("KIMINA_LEAN_PROJECT", ""), help="the Lean project")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--env", action="append", default=[], help="NAME=VALUE for every server (repeatable)")
    ns = p.parse_args(argv)
    import ray

    ray.init(address=None if ns.address == "local" else ns.address, namespace=NAMESPACE,
             log_to_driver=False, include_dashboard=False)
    if ns.action == "start":
        if not ns.project:
            raise SystemExit("kimina_verifiers: --project (or KIMINA_LEAN_PROJECT) names the Lean project")
        extra = dict(e.split("=", 1) for e in ns.env)
        print(",".join(start(shlex.split(ns.kimina), ns.port, ns.project, extra)))
    elif ns.action == "urls":
        print(",".join(urls()))
    else:
        print(f"stopped {stop()} verifiers", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
