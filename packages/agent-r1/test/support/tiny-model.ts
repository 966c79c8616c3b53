/** Config overrides for the smallest policy the trainer tests use: one layer of width 16, 16 tokens. */
export const TINY_MODEL = [
  'model.dModel=16',
  'model.layers=1',
  'model.heads=2',
  'model.kvHeads=1',
  'model.maxLength=16',
];
