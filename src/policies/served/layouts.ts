/**
 * Key layouts: how an Observation becomes a served policy's request and how its reply becomes our
 * 7-D actions. Presets follow the upstream examples (PROTOCOLS.md §1.4); a user mapping file
 * (YAML or JSON, checked with zod) covers anything else. The server side runs the same layout
 * backwards, so a policy served by `provael serve-policy` sees what it would see in-process.
 * One module each under layout/: the presets, mapping files, the client codec, the server codec.
 */
export { decodeActions, type EpisodeTag, encodeObservation } from "./layout/client.js";
export {
  type LayoutFile,
  layoutFileSchema,
  layoutFromFile,
  resolveLayout,
} from "./layout/file.js";
export {
  type ActionSpec,
  CONTEXT_KEY,
  EPISODE_KEY,
  type ImageSpec,
  LAYOUTS,
  type Layout,
  layoutCameras,
  type StateSpec,
} from "./layout/presets.js";
export {
  type DecodeOptions,
  decodeObservation,
  encodeActions,
  readEpisode,
} from "./layout/server.js";
