#!/usr/bin/env python3
"""Serve a LeRobot policy (SmolVLA, pi0, ACT, ...) behind the openpi websocket protocol.

Provael's `openpi` client (and openpi's own clients) can then evaluate it:

    python3 servers/lerobot_openpi_server.py --policy lerobot/smolvla_libero --port 8000
    provael attack --policy openpi --policy-url ws://GPU-BOX:8000 --suite tabletop

Why not LeRobot's own async-inference gRPC server: it pickles every payload in both
directions, so any peer that can reach it can run code on it (PROTOCOLS.md section 2.4).
This server speaks openpi's wire format instead (PROTOCOLS.md section 1): plain msgpack,
arrays as maps with *bin* keys __ndarray__/data/dtype/shape, built with numpy.frombuffer.
Nothing received is ever unpickled or evaluated.

Protocol, as upstream openpi does it:
  - the server sends one binary metadata frame first (an empty map here);
  - then strict request/reply: one msgpack map in, one map {"actions": (H, D) float32} out;
  - any failure sends one text frame (the traceback) and closes with code 1011;
  - GET /healthz answers 200 "OK\\n".

Requests use the LIBERO keys by default (observation/image, observation/wrist_image,
observation/state, prompt); --map changes which request key feeds which LeRobot feature.
The whole predicted chunk is returned and no per-episode state is kept, so concurrent
episodes cannot disturb each other; the client executes the first k actions (--replan).

Requires: python >= 3.10, numpy, msgpack, websockets >= 13, torch, lerobot.
"""

from __future__ import annotations

import argparse
import asyncio
import http
import logging
import time
import traceback
from typing import Any

import msgpack
import numpy as np

ERROR_REASON = "Internal server error. Traceback included in previous frame."
# numpy kinds we accept from a peer: bool, signed, unsigned, float. Never object ("O").
ACCEPTED_KINDS = set("biuf")
LIBERO_MAP = {
    "observation/image": "observation.images.image",
    "observation/wrist_image": "observation.images.image2",
    "observation/state": "observation.state",
}

log = logging.getLogger("lerobot_openpi_server")


# --------------------------------------------------------------------------------------
# openpi's msgpack convention (PROTOCOLS.md section 1.3), without pickle


def _pack_default(obj: Any) -> Any:
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind not in ACCEPTED_KINDS:
            raise TypeError(f"refusing to send dtype {obj.dtype}")
        a = np.ascontiguousarray(obj)
        return {b"__ndarray__": True, b"data": a.tobytes(), b"dtype": a.dtype.str, b"shape": list(a.shape)}
    if isinstance(obj, np.generic):
        return {b"__npgeneric__": True, b"data": obj.item(), b"dtype": obj.dtype.str}
    raise TypeError(f"cannot encode {type(obj).__name__}")


def _unpack_hook(obj: dict) -> Any:
    if b"__ndarray__" in obj:
        dtype = np.dtype(obj[b"dtype"])
        if dtype.kind not in ACCEPTED_KINDS:
            raise ValueError(f"refusing array dtype {dtype}")
        shape = tuple(int(d) for d in obj[b"shape"])
        data = obj[b"data"]
        if len(data) != dtype.itemsize * int(np.prod(shape, dtype=np.int64)):
            raise ValueError("array data length does not match dtype and shape")
        return np.frombuffer(data, dtype=dtype).reshape(shape)
    if b"__npgeneric__" in obj:
        dtype = np.dtype(obj[b"dtype"])
        if dtype.kind not in ACCEPTED_KINDS:
            raise ValueError(f"refusing scalar dtype {dtype}")
        return dtype.type(obj[b"data"])
    return obj


def packb(obj: Any) -> bytes:
    return msgpack.packb(obj, default=_pack_default, use_bin_type=True)


def unpackb(data: bytes) -> Any:
    # strict_map_key=False: the array markers are bin keys.
    return msgpack.unpackb(data, object_hook=_unpack_hook, raw=False, strict_map_key=False)


# --------------------------------------------------------------------------------------
# The LeRobot side


class LeRobotPolicy:
    """A LeRobot policy loaded from the hub or a local directory, queried for whole chunks."""

    def __init__(self, path: str, policy_type: str, device: str, key_map: dict[str, str]):
        import torch  # imported here so --help works without torch

        from lerobot.policies.factory import get_policy_class

        self.torch = torch
        self.device = torch.device(device)
        self.key_map = key_map
        self.policy = get_policy_class(policy_type).from_pretrained(path)
        self.policy.to(self.device)
        self.policy.eval()
        self.pre = self.post = None
        try:
            from lerobot.policies.factory import make_pre_post_processors

            self.pre, self.post = make_pre_post_processors(self.policy.config, pretrained_path=path)
        except ImportError:
            log.info("this lerobot has no processor pipeline; the policy normalises by itself")

    def infer(self, obs: dict) -> np.ndarray:
        torch = self.torch
        batch: dict[str, Any] = {}
        for request_key, feature in self.key_map.items():
            if request_key not in obs:
                raise KeyError(f"request lacks {request_key!r} (sent keys: {sorted(obs)})")
            value = np.asarray(obs[request_key])
            if feature.startswith("observation.images."):
                if value.dtype != np.uint8 or value.ndim != 3:
                    raise ValueError(f"{request_key} must be a uint8 image, got {value.dtype} {value.shape}")
                chw = value if value.shape[0] == 3 else value.transpose(2, 0, 1)
                tensor = torch.from_numpy(np.ascontiguousarray(chw)).float().div(255.0)
            else:
                tensor = torch.from_numpy(np.asarray(value, dtype=np.float32).copy())
            batch[feature] = tensor.unsqueeze(0).to(self.device)
        prompt = obs.get("prompt", "")
        batch["task"] = [prompt.decode() if isinstance(prompt, bytes) else str(prompt)]
        with torch.inference_mode():
            if self.pre is not None:
                batch = self.pre(batch)
            if hasattr(self.policy, "predict_action_chunk"):
                chunk = self.policy.predict_action_chunk(batch)
            else:
                # Without a chunk API, one stateless step: reset so no queue leaks across episodes.
                self.policy.reset()
                chunk = self.policy.select_action(batch).unsqueeze(1)
            if self.post is not None:
                chunk = self.post(chunk)
        actions = chunk[0] if chunk.ndim == 3 else chunk
        return actions.detach().float().cpu().numpy().astype(np.float32)


# --------------------------------------------------------------------------------------
# The openpi websocket server


async def serve(policy: LeRobotPolicy, host: str, port: int, metadata: dict) -> None:
    import websockets.asyncio.server as ws_server
    from websockets.exceptions import ConnectionClosed
    from websockets.frames import CloseCode

    lock = asyncio.Lock()

    def health(connection, request):
        if request.path == "/healthz":
            return connection.respond(http.HTTPStatus.OK, "OK\n")
        return None

    async def handler(ws) -> None:
        await ws.send(packb(metadata))
        prev_total = None
        while True:
            try:
                message = await ws.recv()
                start = time.monotonic()
                if isinstance(message, str):
                    raise TypeError("requests must be binary msgpack frames")
                obs = unpackb(message)
                if not isinstance(obs, dict):
                    raise TypeError("the request is not a map")
                # One inference at a time, like openpi's server: the GPU is the shared resource.
                async with lock:
                    t0 = time.monotonic()
                    actions = await asyncio.to_thread(policy.infer, obs)
                    infer_ms = (time.monotonic() - t0) * 1000
                timing = {"infer_ms": (time.monotonic() - start) * 1000}
                if prev_total is not None:
                    timing["prev_total_ms"] = prev_total
                await ws.send(packb({"actions": actions, "policy_timing": {"infer_ms": infer_ms}, "server_timing": timing}))
                prev_total = (time.monotonic() - start) * 1000
            except ConnectionClosed:
                return
            except Exception:
                log.exception("request failed")
                await ws.send(traceback.format_exc())
                await ws.close(code=CloseCode.INTERNAL_ERROR, reason=ERROR_REASON)
                return

    async with ws_server.serve(
        handler, host, port, compression=None, max_size=None, process_request=health
    ) as server:
        log.info("serving on ws://%s:%d", host, port)
        await server.serve_forever()


def parse_map(pairs: list[str]) -> dict[str, str]:
    if not pairs:
        return dict(LIBERO_MAP)
    out = {}
    for pair in pairs:
        key, sep, feature = pair.partition("=")
        if not sep:
            raise SystemExit(f"--map needs REQUEST_KEY=LEROBOT_FEATURE, got {pair!r}")
        out[key] = feature
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--policy", required=True, help="hub id or local path of a pretrained LeRobot policy")
    ap.add_argument("--type", default="smolvla", help="LeRobot policy type (smolvla, pi0, act, diffusion, ...)")
    ap.add_argument("--device", default="cuda", help="torch device (cuda, cpu, mps)")
    ap.add_argument("--host", default="127.0.0.1", help="address to bind (use 0.0.0.0 on a trusted network only)")
    ap.add_argument("--port", type=int, default=8000)
    ap.add_argument(
        "--map",
        action="append",
        default=[],
        metavar="KEY=FEATURE",
        help="request key -> LeRobot feature, repeatable (default: the LIBERO keys)",
    )
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    policy = LeRobotPolicy(args.policy, args.type, args.device, parse_map(args.map))
    asyncio.run(serve(policy, args.host, args.port, metadata={}))


if __name__ == "__main__":
    main()
