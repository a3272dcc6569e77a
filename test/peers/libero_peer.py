"""A LIBERO-shaped benchmark that drives a vla-eval model server the way vla-eval does.

It plays the benchmark (client) side of the vla-evaluation-harness protocol as upstream's
``Connection`` and ``SyncEpisodeRunner`` do (PROTOCOLS.md §4.5): HELLO with the benchmark's
import string, EPISODE_START with the task dict (name, suite, task_id, episode_idx), one
OBSERVATION per step with PNG ``__image__`` maps and, when the server asked for ``send_state``,
LIBERO's 8-D ``states`` (eef position, axis-angle, two finger joints), then EPISODE_END with
``metrics.success``. An ERROR reply fails the episode and, as upstream, no EPISODE_END follows.

The environment is a point in LIBERO's world frame (metres) that moves 5 cm per unit of action
in x, y and z, like robosuite's OSC controller at its default output limit; a task succeeds
when the point comes within 3 cm of the task's goal in x. The start depends only on the task and
``episode_idx`` (the scene), so every arm sees the same first observation unless
``--vary-start`` shifts it.

Debian's python3 with python3-websockets (10.x: the legacy ``websockets.connect`` API),
python3-msgpack, python3-numpy and python3-pil. Prints one JSON summary on stdout.
"""

import argparse
import asyncio
import io
import json
import sys
import time

import msgpack
import numpy as np
import websockets
from PIL import Image

BENCHMARK = "vla_eval.benchmarks.libero.benchmark:LIBEROBenchmark"
PLUS_BENCHMARK = "vla_eval.benchmarks.libero_plus.benchmark:LIBEROPlusBenchmark"
SUITE = "libero_goal"
RESOLUTION = 256
STEP_M = 0.05
SUCCESS_M = 0.03
WORKSPACE = (np.array([-0.5, -0.8, 0.9]), np.array([0.5, 0.8, 1.4]))

# (language instruction as LIBERO names it, start position, goal x)
TASKS = [
    ("put the bowl on the plate", (-0.20, 0.50, 1.00), 0.40),
    ("put the cream cheese in the bowl", (-0.20, 0.00, 1.00), 0.30),
    ("turn on the stove", (-0.10, -0.20, 1.05), -0.30),
]

# With --libero-plus, each task's perturbation as LIBERO-Plus's get_tasks adds it to LIBERO's
# task dict from task_classification.json (vla_eval/benchmarks/libero_plus/benchmark.py,
# upstream e1ee9ad): category and an integer difficulty_level. The third task has no entry, as
# a libero_90 task has none: its dict carries neither field.
PLUS_FIELDS = [
    {"category": "Camera Viewpoints", "difficulty_level": 1},
    {"category": "Light Conditions", "difficulty_level": 2},
    {},
]


# ----------------------------------------------------------------------------------------------
# Wire codec, as vla_eval.protocol (messages.py, numpy_codec.py, image_codec.py)


# The image codec's format, as vla_eval's set_image_format would set it: "png" (upstream's default)
# or "jpeg" (quality 95, RGB only).
IMAGE_FORMAT = "png"


def encode(obj):
    if isinstance(obj, np.ndarray):
        if obj.ndim == 3 and obj.dtype == np.uint8 and obj.shape[2] in (1, 3, 4):
            buf = io.BytesIO()
            if IMAGE_FORMAT == "jpeg" and obj.shape[2] == 3:
                Image.fromarray(obj).save(buf, format="JPEG", quality=95)
                return {"__image__": True, "format": "jpeg", "data": buf.getvalue(), "shape": list(obj.shape)}
            Image.fromarray(obj).save(buf, format="PNG")
            return {"__image__": True, "format": "png", "data": buf.getvalue(), "shape": list(obj.shape)}
        return {"__ndarray__": True, "data": obj.tobytes(), "dtype": obj.dtype.str, "shape": list(obj.shape)}
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    if isinstance(obj, np.bool_):
        return bool(obj)
    raise TypeError("cannot encode {!r}".format(type(obj)))


def decode(obj):
    if obj.get("__ndarray__"):
        return np.frombuffer(obj["data"], dtype=np.dtype(obj["dtype"])).reshape(obj["shape"]).copy()
    if obj.get("__image__"):
        if obj["format"] == "raw":
            return np.frombuffer(obj["data"], dtype=np.dtype(obj["dtype"])).reshape(obj["shape"]).copy()
        return np.asarray(Image.open(io.BytesIO(obj["data"])))
    return obj


def pack(kind, payload, seq):
    msg = {"type": kind, "payload": payload, "seq": seq, "timestamp": time.time()}
    return msgpack.packb(msg, default=encode, use_bin_type=True)


def unpack(data):
    msg = msgpack.unpackb(data, object_hook=decode, raw=False)
    for key in ("type", "payload", "seq", "timestamp"):
        if key not in msg:
            raise ValueError("message without {}".format(key))
    return msg


class Connection:
    """One websocket with upstream's per-connection seq counter and 30 s receive timeout."""

    def __init__(self, ws, timeout):
        self.ws = ws
        self.seq = 0
        self.timeout = timeout

    async def send(self, kind, payload):
        self.seq += 1
        await self.ws.send(pack(kind, payload, self.seq))
        return self.seq

    async def recv(self):
        return unpack(await asyncio.wait_for(self.ws.recv(), self.timeout))


# ----------------------------------------------------------------------------------------------
# The environment


class PointEnv:
    def __init__(self, task_id, episode_idx, vary_start, send_state, send_wrist):
        _, start, goal_x = TASKS[task_id]
        self.pos = np.array(start, dtype=np.float64)
        self.pos[0] -= 0.01 * episode_idx
        self.pos[1] += vary_start
        self.goal_x = goal_x
        self.gripper = np.array([0.04, -0.04])
        self.send_state = send_state
        self.send_wrist = send_wrist
        self.done = False

    def render(self, scale):
        img = np.full((RESOLUTION, RESOLUTION, 3), 96, dtype=np.uint8)
        # Top view: row from x, column from y, 160 px per metre around the table's centre.
        r = int(RESOLUTION / 2 - self.pos[0] * 160 * scale)
        c = int(RESOLUTION / 2 - self.pos[1] * 160 * scale)
        g = int(RESOLUTION / 2 - self.goal_x * 160 * scale)
        img[max(0, g - 2) : g + 2, :, 1] = 200
        img[max(0, r - 4) : r + 4, max(0, c - 4) : c + 4] = (220, 40, 40)
        return img

    def observation(self, instruction):
        obs = {"images": {"agentview": self.render(1.0)}, "task_description": instruction}
        if self.send_wrist:
            obs["images"]["wrist"] = self.render(2.0)
        if self.send_state:
            # [eef position, axis-angle (gripper pointing down), finger joints], float64 as LIBERO's
            obs["states"] = np.concatenate([self.pos, [np.pi, 0.0, 0.0], self.gripper])
            obs["controller_states"] = obs["states"].astype(np.float32)
        return obs

    def step(self, action):
        a = np.clip(np.asarray(action, dtype=np.float64).reshape(-1)[:7], -1, 1)
        if a.shape[0] != 7:
            raise ValueError("action dimension mismatch: got {}, expected 7".format(a.shape[0]))
        self.pos = np.clip(self.pos + STEP_M * a[:3], WORKSPACE[0], WORKSPACE[1])
        self.gripper = np.array([0.0, 0.0]) if a[6] >= 0 else np.array([0.04, -0.04])
        self.done = abs(self.pos[0] - self.goal_x) < SUCCESS_M


# ----------------------------------------------------------------------------------------------
# The run, as vla-eval's orchestrator and SyncEpisodeRunner


async def run(args):
    summary = {"hello": None, "episodes": []}
    async with websockets.connect(
        args.url, max_size=None, ping_interval=None, compression=None, open_timeout=args.timeout
    ) as ws:
        conn = Connection(ws, args.timeout)
        await conn.send("hello", {"harness_version": "0.0.0", "protocol_version": 1, "benchmark": args.benchmark})
        reply = await conn.recv()
        if reply["type"] != "hello":
            raise RuntimeError("expected a hello reply, got {}".format(reply["type"]))
        info = reply["payload"]
        # The orchestrator merges the server's observation_params under the config's own params.
        params = dict(info.get("observation_params") or {})
        params.update(args.param)
        summary["hello"] = {k: v for k, v in info.items() if k in ("observation_params", "model_server")}
        send_state = bool(params.get("send_state", False))
        send_wrist = bool(params.get("send_wrist_image", False))
        # vla-eval's work items: task-major, round-robin across shards (orchestrator.py).
        work = [(t, e) for t in range(args.tasks) for e in range(args.episodes)]
        if args.num_shards is not None:
            work = [w for i, w in enumerate(work) if i % args.num_shards == args.shard_id]
        for task_id, episode_idx in work:
            instruction = TASKS[task_id][0]
            env = PointEnv(task_id, episode_idx, args.vary_start, send_state, send_wrist)
            record = {
                "task": "{}/{}".format(SUITE, instruction),
                "episode_idx": episode_idx,
                "poses": [],
                "actions": [],
                "error": None,
            }
            task = {"name": instruction, "suite": SUITE, "task_id": task_id, "episode_idx": episode_idx}
            if args.libero_plus:
                task.update(PLUS_FIELDS[task_id])
            await conn.send("episode_start", {"task": task})
            steps = 0
            try:
                for _ in range(args.max_steps):
                    obs = env.observation(instruction)
                    record["poses"].append([float(v) for v in env.pos])
                    seq = await conn.send("observation", obs)
                    msg = await conn.recv()
                    if msg["type"] == "error":
                        raise RuntimeError("server error: {}".format(msg["payload"]))
                    if msg["seq"] != seq:
                        raise RuntimeError("seq mismatch: sent {}, got {}".format(seq, msg["seq"]))
                    action = msg["payload"]["actions"]
                    record["actions"].append([float(v) for v in np.asarray(action).reshape(-1)])
                    env.step(action)
                    steps += 1
                    if env.done:
                        break
            except RuntimeError as e:
                # Upstream records the failure and sends no EPISODE_END.
                record["error"] = str(e)
                summary["episodes"].append(record)
                continue
            record["steps"] = steps
            record["success"] = bool(env.done)
            await conn.send(
                "episode_end", {"metrics": {"success": bool(env.done)}, "steps": steps, "elapsed_sec": 0.0}
            )
            summary["episodes"].append(record)
    return summary


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--url", required=True)
    p.add_argument("--tasks", type=int, default=2, help="how many of the fake tasks (at most {})".format(len(TASKS)))
    p.add_argument("--episodes", type=int, default=2, help="episodes per task (episode_idx 0..n-1)")
    p.add_argument("--max-steps", type=int, default=16)
    p.add_argument("--vary-start", type=float, default=0.0, help="shift every start by this much in y (m)")
    p.add_argument("--benchmark", default=None, help="the HELLO's import string (default: LIBERO's, or LIBERO-Plus's)")
    p.add_argument(
        "--libero-plus",
        action="store_true",
        help="play LIBERO-Plus: its HELLO, and each task's perturbation category and difficulty_level",
    )
    p.add_argument("--timeout", type=float, default=30.0)
    p.add_argument("--image-format", choices=("png", "jpeg"), default="png", help="how images travel")
    p.add_argument("--shard-id", type=int, default=None, help="this shard (with --num-shards), as vla-eval")
    p.add_argument("--num-shards", type=int, default=None)
    p.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=true|false",
        help="benchmark parameter set by the config (wins over the server's observation_params)",
    )
    args = p.parse_args(argv)
    global IMAGE_FORMAT
    IMAGE_FORMAT = args.image_format
    params = {}
    for item in args.param:
        key, _, value = item.partition("=")
        if value not in ("true", "false"):
            p.error("--param {}: the value must be true or false".format(item))
        params[key] = value == "true"
    args.param = params
    if args.benchmark is None:
        args.benchmark = PLUS_BENCHMARK if args.libero_plus else BENCHMARK
    if (args.shard_id is None) != (args.num_shards is None):
        p.error("--shard-id and --num-shards go together")
    if not 1 <= args.tasks <= len(TASKS):
        p.error("--tasks must be 1..{}".format(len(TASKS)))
    summary = asyncio.run(run(args))
    json.dump(summary, sys.stdout, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
