/**
 * `npm run demo [-- --policy <dir>] [--port <n>]`: builds the page, puts a policy and the search corpus
 * beside it, and serves it on 127.0.0.1, printing the URL. The policy is the one shipped in apps/web/policy
 * unless --policy names a checkpoint folder of your own (a policy folder, or a run's checkpoint.dir such
 * as runs/multihop/checkpoints).
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { SHIPPED_POLICY, WEB_ROOT, buildPage, describeBundle, serveSite, writeSiteData } from './site.js';

const { values } = parseArgs({
  options: {
    policy: { type: 'string' },
    port: { type: 'string', default: '5173' },
    out: { type: 'string' },
  },
});
const port = Number(values.port);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`demo: --port must be a port number, got ${values.port}`);
  process.exit(2);
}
const outDir = values.out ?? join(WEB_ROOT, 'dist');
try {
  const report = await buildPage(outDir);
  const { policy } = await writeSiteData(outDir, values.policy ?? SHIPPED_POLICY);
  console.log(describeBundle(report));
  console.log(`policy: ${policy}`);
  const site = await serveSite(outDir, '127.0.0.1', port);
  console.log(`serving ${outDir} at ${site.url} (Ctrl-C stops)`);
} catch (e) {
  console.error(`demo: ${(e as Error).message}`);
  process.exit(1);
}
