// Where the demo writes: its own schema and queue prefix, never production's, whatever
// ADOPS_SCHEMA and ADOPS_QUEUE_PREFIX say.
import { warehouseOf } from '../warehouse/pg.js';
import type { Pool } from 'pg';
import type { Config } from '../config/env.js';
import { TerminalError } from '../retry/errors.js';
import { claimSchema } from '../warehouse/schema/migrate.js';

/** The demo's schema unless `--schema` names another. */
export const DEMO_SCHEMA = 'adops_demo';
/** The demo's queue prefix unless `--queue-prefix` names another. */
export const DEMO_PREFIX = 'adops-demo';
/** The comment the demo puts on its schema: what tells it apart from a schema holding real data. */
const DEMO_SCHEMA_MARKER = 'adops demo data, written by `adops demo`; safe to drop';

/** The demo would write where it must not: names the place and says what to do instead. */
export class DemoRefused extends TerminalError {
  override name = 'DemoRefused';
}

/** Refuses a queue prefix that production uses (the demo clears its queue when done), then claims the schema:
 * a missing or empty one is marked as the demo's; one holding tables without the demo's mark is refused, so
 * no real campaign or report row is ever overwritten or soft-deleted. */
export async function claimDemoTarget(
  pool: Pool,
  config: Config,
  target: { readonly schema: string; readonly queuePrefix: string },
): Promise<void> {
  if (target.queuePrefix === config.queue.prefix)
    throw new DemoRefused(
      `the demo's queue prefix ${JSON.stringify(target.queuePrefix)} is ADOPS_QUEUE_PREFIX, where production ` +
        'queues live: give the demo another with --queue-prefix',
    );
  const claim = await claimSchema(warehouseOf(pool, target.schema), DEMO_SCHEMA_MARKER);
  if (claim.claimed) return;
  const shown = claim.relations.join(', ') + (claim.relationCount > claim.relations.length ? ', ...' : '');
  throw new DemoRefused(
    `schema ${target.schema} holds ${claim.relationCount} tables or other relations (${shown}) that adops demo ` +
      'did not create: the demo writes only to a schema of its own; give it another with --schema ' +
      `(default ${DEMO_SCHEMA})`,
  );
}
