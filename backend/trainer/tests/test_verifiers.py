"""kimina_verifiers.py's placement logic against a RAY DOUBLE: a stand-in `ray` module with the few calls the script
makes (ray.nodes() rows with NodeID / Alive / NodeManagerAddress as Ray documents them, remote actors with options,
named detached actors, ray.get, ray.kill). A real Ray head cannot run in these tests: Ray replaces a loopback node
address with the machine's own (ray/_private/services.py, resolve_ip_for_localhost), and tests here may only reach
127.0.0.1. The actor's `kimina serve` is replaced by a recorder, so this checks which node gets which server."""
from __future__ import annotations

import importlib.util
import os
import sys
import types
import unittest
from typing import ClassVar

HERE = os.path.dirname(os.path.abspath(__file__))


def fake_ray(nodes: list[dict]) -> types.ModuleType:
    ray = types.ModuleType("ray")
    named: dict[tuple[str, str], object] = {}
    killed: list[object] = []
    current: dict[str, str] = {}

    class Handle:
        def __init__(self, instance):
            self.instance = instance

        def __getattr__(self, name):
            method = getattr(self.instance, name)
            return types.SimpleNamespace(remote=lambda *a, **k: method(*a, **k))

    class Remote:
        def __init__(self, cls):
            self.cls = cls
            self.opts: dict = {}

        def options(self, **opts):
            r = Remote(self.cls)
            r.opts = opts
            return r

        def remote(self, *args):
            current["node"] = self.opts["scheduling_strategy"].node_id
            handle = Handle(self.cls(*args))
            handle.options = self.opts
            named[(self.opts["namespace"], self.opts["name"])] = handle
            return handle

    def remote(**_):
        return lambda cls: Remote(cls)

    def get_actor(name, namespace):
        if (namespace, name) not in named:
            raise ValueError(f"Failed to look up actor {name}")
        return named[(namespace, name)]

    ray.remote = remote
    ray.nodes = lambda: nodes
    ray.get = lambda x: x
    ray.get_actor = get_actor
    ray.kill = lambda a: (killed.append(a), named.pop(next(k for k, v in named.items() if v is a)))
    ray.get_runtime_context = lambda: types.SimpleNamespace(get_node_id=lambda: current["node"])
    ray.util = types.SimpleNamespace(
        list_named_actors=lambda all_namespaces=False: [{"name": n, "namespace": ns} for ns, n in named],
        scheduling_strategies=types.SimpleNamespace(),
    )
    strategies = types.ModuleType("ray.util.scheduling_strategies")

    class NodeAffinitySchedulingStrategy:
        def __init__(self, node_id, soft):
            self.node_id = node_id
            self.soft = soft

    strategies.NodeAffinitySchedulingStrategy = NodeAffinitySchedulingStrategy
    ray._named, ray._killed = named, killed
    sys.modules["ray"] = ray
    sys.modules["ray.util"] = types.ModuleType("ray.util")
    sys.modules["ray.util.scheduling_strategies"] = strategies
    return ray


def load_script():
    path = os.path.join(HERE, "..", "verl", "kimina_verifiers.py")
    spec = importlib.util.spec_from_file_location("kimina_verifiers", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class StartedServer:
    """Stands in for the `kimina serve` process the actor starts."""

    started: ClassVar[list[list[str]]] = []

    def __init__(self, argv, env, **_):
        StartedServer.started.append(argv)
        self.env = env
        self.returncode = None
        self.stderr = None

    def poll(self):
        return self.returncode

    def terminate(self):
        self.returncode = -15

    def wait(self, timeout=None):
        return self.returncode


class Health:
    """The answer of the started server's /health."""

    def __enter__(self):
        return self

    def __exit__(self, *_):
        return False

    def read(self):
        return b'{"status": "ok"}'


class VerifiersTest(unittest.TestCase):
    def setUp(self):
        self.nodes = [
            {"NodeID": "a" * 40, "Alive": True, "NodeManagerAddress": "10.0.0.1"},
            {"NodeID": "b" * 40, "Alive": True, "NodeManagerAddress": "10.0.0.2"},
            {"NodeID": "c" * 40, "Alive": False, "NodeManagerAddress": "10.0.0.3"},
        ]
        self.ray = fake_ray(self.nodes)
        self.script = load_script()
        StartedServer.started = []
        # the script's module-level names are patched on copies, so no other test sees them
        self.script.subprocess = types.SimpleNamespace(Popen=StartedServer, TimeoutExpired=TimeoutError,
                                                       DEVNULL=None, PIPE=None)
        self.script.urllib = types.SimpleNamespace(request=types.SimpleNamespace(urlopen=lambda *a, **k: Health()))
        os.environ["KIMINA_API_TOKEN"] = "tok"

    def tearDown(self):
        for name in ("ray", "ray.util", "ray.util.scheduling_strategies"):
            sys.modules.pop(name, None)

    def test_one_server_per_alive_node_on_its_own_address(self):
        urls = self.script.start(["kimina"], 8000, "/shared/project", {"KIMINA_MAX_REPLS": "8"})
        self.assertEqual(urls, ["http://10.0.0.1:8000", "http://10.0.0.2:8000"])
        self.assertEqual([argv[-3] for argv in StartedServer.started], ["10.0.0.1", "10.0.0.2"])
        for handle in self.ray._named.values():
            self.assertEqual(handle.options["lifetime"], "detached")
            self.assertFalse(handle.options["scheduling_strategy"].soft, "pinned to its node")
            env = handle.instance.process.env
            self.assertEqual(env["KIMINA_API_TOKEN"], "tok")
            self.assertEqual(env["KIMINA_LEAN_PROJECT"], "/shared/project")
            self.assertEqual(env["KIMINA_MAX_REPLS"], "8")
            self.assertIn(env["KIMINA_ALLOWED_HOSTS"], ("10.0.0.1", "10.0.0.2"))

    def test_start_again_keeps_the_running_servers(self):
        self.script.start(["kimina"], 8000, "/p", {})
        self.script.start(["kimina"], 8000, "/p", {})
        self.assertEqual(len(StartedServer.started), 2)

    def test_urls_leave_out_a_dead_server_and_stop_ends_them_all(self):
        self.script.start(["kimina"], 8000, "/p", {})
        first = next(iter(self.ray._named.values()))
        first.instance.process.returncode = 1
        self.assertEqual(len(self.script.urls()), 1)
        self.assertEqual(self.script.stop(), 2)
        self.assertEqual(self.ray._named, {})

    def test_no_token_is_refused(self):
        del os.environ["KIMINA_API_TOKEN"]
        with self.assertRaises(SystemExit):
            self.script.start(["kimina"], 8000, "/p", {})


if __name__ == "__main__":
    unittest.main()
