/** @agent-r1/tensor/testing — helpers to property-test ops and gradients. */
export { gradcheck, assertGradcheck, type GradcheckOptions, type GradcheckResult } from './gradcheck.js';
export {
  shapeArb,
  broadcastPairArb,
  valuesArb,
  tensorArb,
  shapedTensorArb,
  type ShapeConstraints,
  type ValueConstraints,
} from './arbitraries.js';
export {
  traceKernels,
  assertTraceable,
  firstDivergence,
  formatTracedCall,
  parseTracedCall,
  type KernelTrace,
  type TracedCall,
  type TracedOperand,
  type Divergence,
} from './kernel-trace.js';
