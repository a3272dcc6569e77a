export * from "./wilson.js";
