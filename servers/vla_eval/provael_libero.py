"""LIBERO for vla-eval, with contact forces and object poses for Provael's physical predicates.

vla-eval loads any ``module:Class`` named as ``benchmark:`` in its config, so this subclass runs
in the stock LIBERO image without a fork. It changes nothing LIBERO does; each observation gains
one key, ``provael_extras``, that ``provael bridge --profile libero`` reads to score
``physical_hazard`` and ``forbidden_grasp`` and removes before the observation reaches the
policy::

    {"contacts": [{"a": "left_finger", "b": "wine_bottle_1", "force": 3.2}, ...],
     "objects": {"wine_bottle_1": {"pos": [x, y, z], "quat": [w, x, y, z]}, ...}}

``force`` is the normal force in newtons summed over the contact points of one pair of bodies.
Positions are in the MuJoCo world frame, the frame of ``robot0_eef_pos`` (``states[0:3]``).
Robot bodies are reported as ``left_finger``, ``right_finger`` (the Panda's finger links and
their pads), ``hand`` (other gripper bodies) and ``arm`` (robot and mount links); LIBERO's
objects and fixtures by their BDDL instance names; the table as ``table``.

The stock image runs Python 3.8 (conda env ``libero``, robosuite 1.4.0, mujoco 3.2.3): this file
keeps to 3.8 syntax. How to run it: docs/benchmarks.md § physical predicates on LIBERO.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

EXTRAS_KEY = "provael_extras"

#: Body names (robosuite arenas) and LIBERO fixture names that are the table.
TABLE_NAMES = frozenset(
    {"table", "main_table", "kitchen_table", "living_room_table", "study_table", "coffee_table"}
)
_LEFT_FINGER = "gripper0_leftfinger"
_RIGHT_FINGER = "gripper0_rightfinger"


def _raw(obj: Any, attr: str) -> Any:
    """The raw ``mujoco`` struct behind robosuite's ``MjSim`` wrappers (``_model``, ``_data``)."""
    inner = getattr(obj, attr, None)
    return obj if inner is None else inner


def mujoco_contact_force(sim: Any, index: int) -> float:
    """Normal force (N) of contact ``index``, through ``mujoco.mj_contactForce``."""
    import mujoco  # only inside the image; the unit tests pass their own function
    import numpy as np

    out = np.zeros(6, dtype=np.float64)
    mujoco.mj_contactForce(_raw(sim.model, "_model"), _raw(sim.data, "_data"), index, out)
    return float(out[0])


def _body_name(model: Any, body: int) -> str:
    name = model.body_id2name(body)
    return name if name else "body{}".format(body)


def classify_body(model: Any, body: int, object_bodies: Mapping[int, str]) -> Optional[str]:
    """The reported name of the body a geom hangs from, or None for bodies nobody asks about.

    Walks up the kinematic tree, so a finger pad counts as its finger and an object's sub-body
    as the object.
    """
    chain: List[int] = []
    b = body
    while True:
        chain.append(b)
        parent = int(model.body_parentid[b])
        if parent == b or b == 0:
            break
        b = parent
    names = [_body_name(model, c) for c in chain]
    if _LEFT_FINGER in names:
        return "left_finger"
    if _RIGHT_FINGER in names:
        return "right_finger"
    for c in chain:
        if c in object_bodies:
            obj = object_bodies[c]
            return "table" if obj in TABLE_NAMES else obj
    leaf = names[0]
    if leaf.startswith("gripper0_"):
        return "hand"
    if leaf.startswith("robot0_") or leaf.startswith("mount0_"):
        return "arm"
    if any(n in TABLE_NAMES for n in names):
        return "table"
    return None


def build_extras(
    sim: Any,
    obj_body_id: Mapping[str, int],
    contact_force: Callable[[Any, int], float] = mujoco_contact_force,
) -> Dict[str, Any]:
    """Contacts that involve the robot or a LIBERO object, and every object's pose.

    ``sim`` is robosuite's ``MjSim`` (``sim.model``, ``sim.data``); ``obj_body_id`` maps LIBERO's
    object and fixture names to body ids (``env.env.obj_body_id``). Pairs are sorted so the
    extras, and hence the bridge's scene digest, do not depend on MuJoCo's contact order.
    """
    model, data = sim.model, sim.data
    object_bodies = {int(v): k for k, v in obj_body_id.items()}
    forces: Dict[Tuple[str, str], float] = {}
    for i in range(int(data.ncon)):
        contact = data.contact[i]
        a = classify_body(model, int(model.geom_bodyid[contact.geom1]), object_bodies)
        b = classify_body(model, int(model.geom_bodyid[contact.geom2]), object_bodies)
        if a is None or b is None or a == b:
            continue
        pair = (a, b) if a < b else (b, a)
        forces[pair] = forces.get(pair, 0.0) + abs(float(contact_force(sim, i)))
    contacts = [
        {"a": a, "b": b, "force": round(f, 6)} for (a, b), f in sorted(forces.items())
    ]
    objects: Dict[str, Any] = {}
    for name in sorted(obj_body_id):
        body = int(obj_body_id[name])
        objects[name] = {
            "pos": [float(v) for v in data.body_xpos[body][:3]],
            "quat": [float(v) for v in data.body_xquat[body][:4]],
        }
    return {"contacts": contacts, "objects": objects}


try:  # inside the vla-eval image
    from vla_eval.benchmarks.libero.benchmark import LIBEROBenchmark as _LIBEROBenchmark
except ImportError:  # elsewhere (unit tests): the extras builder above stays importable
    _LIBEROBenchmark = None

if _LIBEROBenchmark is not None:

    class ProvaelLIBEROBenchmark(_LIBEROBenchmark):  # type: ignore[misc, valid-type]
        """LIBEROBenchmark whose observations also carry ``provael_extras``."""

        def make_obs(self, raw_obs: Any, task: Any) -> Any:
            obs = super().make_obs(raw_obs, task)
            env = self._env  # libero's OffScreenRenderEnv; .env is the robosuite task env
            obs[EXTRAS_KEY] = build_extras(env.sim, getattr(env.env, "obj_body_id", {}))
            return obs
