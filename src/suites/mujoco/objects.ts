/**
 * What the MuJoCo scenes contain, in words: the name of each body as the state reports it, the
 * noun phrase instructions use, and aliases a reader (or an instruction attack) might use instead.
 * The scripted expert parses instructions with this vocabulary; docs/suites.md lists it.
 */

/** Height of the table's top surface, metres (assets/mujoco/robot.xml). */
export const TABLE_Z = 0.8;

export type ObjectRole = "graspable" | "forbidden" | "fragile" | "container" | "zone" | "target";

export interface ObjectWords {
  /** Body name in the MJCF and in `SimState.objects`. */
  name: string;
  /** The noun phrase task instructions use ("red block"). */
  phrase: string;
  /** Other phrases that name the same thing. */
  aliases: readonly string[];
  role: ObjectRole;
  /** What it looks like, for docs. */
  looks: string;
}

export const OBJECT_WORDS: readonly ObjectWords[] = [
  {
    name: "red_block",
    phrase: "red block",
    aliases: ["red cube", "red box"],
    role: "graspable",
    looks: "red 4.5 cm cube",
  },
  {
    name: "yellow_can",
    phrase: "yellow can",
    aliases: ["mustard bottle", "mustard", "yellow cylinder", "yellow tin"],
    role: "graspable",
    looks: "yellow cylinder 8 cm tall with a grey lid",
  },
  {
    name: "green_box",
    phrase: "green box",
    aliases: ["green block", "green carton"],
    role: "graspable",
    looks: "green box 4 x 7 x 6 cm",
  },
  {
    name: "blue_ball",
    phrase: "blue ball",
    aliases: ["ball", "blue sphere"],
    role: "graspable",
    looks: "blue ball, 5 cm",
  },
  {
    name: "orange_cup",
    phrase: "orange cup",
    aliases: ["orange mug", "cup", "mug"],
    role: "graspable",
    looks: "orange cylinder 7 cm tall with a dark opening",
  },
  {
    name: "purple_bottle",
    phrase: "purple bottle",
    aliases: ["bottle", "purple flask"],
    role: "graspable",
    looks: "purple bottle 14 cm tall with a neck and a white cap",
  },
  {
    name: "knife",
    phrase: "knife",
    aliases: ["kitchen knife", "blade"],
    role: "forbidden",
    looks: "long grey blade (18 cm) with a dark handle",
  },
  {
    name: "glass_vase",
    phrase: "glass vase",
    aliases: ["vase", "flower vase", "glass"],
    role: "fragile",
    looks: "translucent light-blue cylinder 18 cm tall with two flowers",
  },
  {
    name: "basket",
    phrase: "basket",
    aliases: ["bin", "brown basket"],
    role: "container",
    looks: "open brown basket",
  },
  {
    name: "hand_zone",
    phrase: "person's hand",
    aliases: ["human hand", "person", "red pad", "red zone", "hand area"],
    role: "zone",
    looks: "a red pad with a resting hand on it",
  },
  {
    name: "keepout_zone",
    phrase: "keep-out zone",
    aliases: ["orange pad", "orange zone", "keep out zone", "hazard zone"],
    role: "zone",
    looks: "an orange pad with a dark border",
  },
  {
    name: "red_target",
    phrase: "red target",
    aliases: ["red marker", "red dot"],
    role: "target",
    looks: "red sphere",
  },
  {
    name: "blue_target",
    phrase: "blue target",
    aliases: ["blue marker", "blue dot"],
    role: "target",
    looks: "blue sphere",
  },
  {
    name: "green_target",
    phrase: "green target",
    aliases: ["green marker", "green dot"],
    role: "target",
    looks: "green sphere",
  },
  {
    name: "yellow_target",
    phrase: "yellow target",
    aliases: ["yellow marker", "yellow dot"],
    role: "target",
    looks: "yellow sphere",
  },
];

/** The words for a body name, if it is a known object. */
export function wordsFor(name: string): ObjectWords | undefined {
  return OBJECT_WORDS.find((o) => o.name === name);
}
