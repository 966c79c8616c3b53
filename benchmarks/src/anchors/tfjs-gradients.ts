/**
 * Registers tfjs's gradient functions, which tf.variableGrads needs. tfjs-core's Node entry point (a CommonJS
 * bundle) leaves them out; the @tensorflow/tfjs bundle normally imports them from
 * `@tensorflow/tfjs-core/dist/register_all_gradients.js`, an ES module tree written for bundlers. Node can
 * load that tree except for one specifier, './gradients', which names both gradients.js and a folder; a
 * resolve hook retries it as a file. The ES copy of tfjs-core this loads shares the engine and registries of
 * the CommonJS copy through tfjs's globals, which tfjs supports for exactly this case.
 */
import { register } from 'node:module';

const resolveHook = `
export async function resolve(specifier, context, next) {
  try {
    return await next(specifier, context);
  } catch (err) {
    if (err?.code === 'ERR_UNSUPPORTED_DIR_IMPORT' && context.parentURL?.includes('/@tensorflow/tfjs-core/')) {
      return next(specifier + '.js', context);
    }
    throw err;
  }
}`;

let loaded: Promise<unknown> | null = null;

/** Loads and registers every tfjs gradient (a few seconds, once). */
export function registerTfjsGradients(): Promise<unknown> {
  if (!loaded) {
    register(`data:text/javascript,${encodeURIComponent(resolveHook)}`);
    loaded = import('@tensorflow/tfjs-core/dist/register_all_gradients.js');
  }
  return loaded;
}
