/**
 * The training configuration: its definition (./config-definition.ts: the schema, DEFAULT_CONFIG, the
 * types), validation (./config-schema.ts), presets, and resolution from presets, files and overrides
 * (./config-resolve.ts, which reads files and knows the registered tasks).
 */
export * from './config-definition.js';
export { presets } from './config-presets.js';
export { ConfigError, closest } from '../options/validate.js';
export { validateConfig, validatePartialConfig, traceStepRange } from './config-schema.js';
export {
  mergeConfig,
  loadConfigFile,
  parseOverrideValue,
  parseOverrides,
  type ResolveConfigOptions,
  resolveConfig,
  configKeys,
} from './config-resolve.js';
