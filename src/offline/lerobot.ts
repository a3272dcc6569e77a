/**
 * LeRobotDataset v3.0: the layout (lerobot/layout.ts), a writer (lerobot/writer.ts), a reader
 * (lerobot/reader.ts), checks (lerobot/validator.ts) and FFmpeg video (lerobot/video.ts).
 */
export * from "./lerobot/layout.js";
export * from "./lerobot/reader.js";
export * from "./lerobot/validator.js";
export * from "./lerobot/video.js";
export * from "./lerobot/writer.js";
