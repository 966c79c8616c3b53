export * as creation from './creation.js';
export * as elementwise from './elementwise.js';
export * as indexing from './indexing.js';
export * as linalg from './linalg.js';
export * as movement from './movement.js';
export * as nn from './nn.js';
export * as optim from './optim.js';
export * as reduce from './reduce.js';
