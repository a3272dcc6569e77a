/**
 * The plugin vocabularies as zod enums (the lists themselves are declared once in types.ts):
 * what the report schema, the recipes and the command-line choices check against.
 */
import { z } from "zod";
import { ACTION_HEADS, ATTACK_ACCESS, ATTACK_ROLES, EAI_RISKS } from "./types.js";

export const attackRoleSchema = z.enum(ATTACK_ROLES);
export const attackAccessSchema = z.enum(ATTACK_ACCESS);
export const actionHeadSchema = z.enum(ACTION_HEADS);
export const eaiRiskSchema = z.enum(EAI_RISKS);
