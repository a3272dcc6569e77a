"""Unit test of servers/vla_eval/provael_libero.py's extras builder on a fake robosuite sim.

Run with /usr/bin/python3 -m unittest (no LIBERO, robosuite or mujoco needed); the vitest
wrapper test/peers/provael-libero.test.ts runs it.
"""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "servers", "vla_eval"))

import provael_libero  # noqa: E402

# A small kinematic tree like LIBERO's: world, the table, the Panda's links and fingers (each
# finger with a pad sub-body, as in robosuite's Panda gripper), a wine bottle with a sub-body,
# a plate, and the floor.
BODIES = [
    ("world", 0),
    ("table", 0),  # 1
    ("robot0_link7", 0),  # 2
    ("gripper0_right_gripper", 2),  # 3
    ("gripper0_leftfinger", 3),  # 4
    ("gripper0_finger_joint1_tip", 4),  # 5
    ("gripper0_rightfinger", 3),  # 6
    ("gripper0_finger_joint2_tip", 6),  # 7
    ("wine_bottle_1_main", 0),  # 8
    ("wine_bottle_1_neck", 8),  # 9
    ("plate_1_main", 0),  # 10
    ("floor", 0),  # 11
]
# One geom per body, geom i on body i.
OBJ_BODY_ID = {"wine_bottle_1": 8, "plate_1": 10}


class FakeModel:
    def __init__(self):
        self.body_parentid = [p for _, p in BODIES]
        self.geom_bodyid = list(range(len(BODIES)))

    def body_id2name(self, i):
        return BODIES[i][0]


class Contact:
    def __init__(self, g1, g2):
        self.geom1 = g1
        self.geom2 = g2


class FakeData:
    def __init__(self, contacts):
        self.contact = [Contact(a, b) for a, b, _ in contacts]
        self.ncon = len(contacts)
        self.body_xpos = [[0.0, 0.0, 0.0] for _ in BODIES]
        self.body_xquat = [[1.0, 0.0, 0.0, 0.0] for _ in BODIES]
        self.body_xpos[8] = [-0.2, -0.05, 0.93]
        self.body_xquat[8] = [0.5, 0.5, 0.5, 0.5]
        self.body_xpos[10] = [0.05, 0.0, 0.91]


class FakeSim:
    def __init__(self, contacts):
        self.model = FakeModel()
        self.data = FakeData(contacts)
        # mj_contactForce's normal component can come out negative in the contact frame.
        self.forces = [f for _, _, f in contacts]


def forces(sim, i):
    return sim.forces[i]


class BuildExtrasTest(unittest.TestCase):
    def extras(self, contacts):
        return provael_libero.build_extras(FakeSim(contacts), OBJ_BODY_ID, contact_force=forces)

    def test_fingers_objects_and_table_are_named_as_the_profile_expects(self):
        x = self.extras(
            [
                (5, 9, 2.0),  # left pad on the bottle's neck
                (4, 8, 1.5),  # left finger on the bottle's body
                (7, 8, -3.0),  # right pad on the bottle
                (2, 1, 60.0),  # arm link on the table
                (3, 10, 4.0),  # gripper base on the plate
            ]
        )
        self.assertEqual(
            x["contacts"],
            [
                {"a": "arm", "b": "table", "force": 60.0},
                {"a": "hand", "b": "plate_1", "force": 4.0},
                {"a": "left_finger", "b": "wine_bottle_1", "force": 3.5},
                {"a": "right_finger", "b": "wine_bottle_1", "force": 3.0},
            ],
        )

    def test_contacts_nobody_asks_about_are_left_out(self):
        # table-floor and a self-contact inside one finger
        x = self.extras([(1, 11, 100.0), (4, 5, 1.0)])
        self.assertEqual(x["contacts"], [])

    def test_object_poses_in_world_frame_wxyz(self):
        x = self.extras([])
        self.assertEqual(
            x["objects"],
            {
                "plate_1": {"pos": [0.05, 0.0, 0.91], "quat": [1.0, 0.0, 0.0, 0.0]},
                "wine_bottle_1": {"pos": [-0.2, -0.05, 0.93], "quat": [0.5, 0.5, 0.5, 0.5]},
            },
        )

    def test_order_of_mujoco_contacts_does_not_change_the_extras(self):
        a = [(5, 9, 2.0), (2, 1, 60.0), (7, 8, 3.0)]
        self.assertEqual(self.extras(a), self.extras(list(reversed(a))))

    def test_table_fixture_counts_as_table(self):
        sim = FakeSim([(2, 1, 10.0)])
        x = provael_libero.build_extras(sim, {"main_table": 1}, contact_force=forces)
        self.assertEqual(x["contacts"], [{"a": "arm", "b": "table", "force": 10.0}])
        self.assertIn("main_table", x["objects"])

    def test_the_subclass_is_absent_without_vla_eval(self):
        self.assertFalse(hasattr(provael_libero, "ProvaelLIBEROBenchmark"))
        self.assertEqual(provael_libero.EXTRAS_KEY, "provael_extras")


if __name__ == "__main__":
    unittest.main()
