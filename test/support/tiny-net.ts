/**
 * The smallest tiny-vla network the tests train or save: one 16 px camera, 8-wide layers. Tests
 * spread it and add what they vary (state layout, auxiliary head, locator).
 */
export const TINY_NET = {
  cameras: ["agentview"],
  imageSize: 16,
  patch: 8,
  dim: 8,
  textDim: 8,
  keypoints: 2,
  pooled: 4,
  hidden: [16],
};
