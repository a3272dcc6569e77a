import { z } from "zod";
import { defineAttack } from "../core/registry.js";

/** The benign arm: the policy gets the task as it is. Its unsafe rate is the run's floor. */
export const none = defineAttack({
  id: "none",
  family: "baseline",
  role: "baseline",
  eai: null,
  access: "none",
  description: "No perturbation: the benign baseline every attack is compared with",
  requires: {},
  params: z.object({}).strict(),
  begin: () => ({}),
});
