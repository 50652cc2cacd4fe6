import type { Pool } from 'pg';
import type { Logger } from '../log/logger.js';
import { buildCatalogue } from '../warehouse/entities/catalogue.js';
import { writeCatalogue, type WriteResult } from '../warehouse/entities/write.js';
import { readCatalogue, type CatalogueApi } from './read.js';

/** Counts of one entity sync; `deleted` and `revived` add up campaigns and creatives. */
export type EntitySyncResult = WriteResult;

export interface EntitySyncDeps {
  readonly pool: Pool;
  readonly schema: string;
  readonly api: CatalogueApi;
  readonly logger: Logger;
  /** Campaigns whose creatives are listed at once (default 4). */
  readonly campaignConcurrency?: number;
  /** List page size (default: the API's default, 100). */
  readonly pageSize?: number;
}

/**
 * Exports the campaign and creative catalogue into Postgres: read everything, validate and map
 * it, then write it in one transaction with soft deletes. Nothing is written when any step fails.
 */
export async function runEntitySync(deps: EntitySyncDeps): Promise<EntitySyncResult> {
  const logger = deps.logger.child({ sync: 'entities' });
  const started = performance.now();
  const raw = await readCatalogue(deps.api, {
    campaignConcurrency: deps.campaignConcurrency ?? 4,
    pageSize: deps.pageSize,
    logger,
  });
  const fetchMs = Math.round(performance.now() - started);
  const catalogue = buildCatalogue(raw);
  if (catalogue.campaigns.length === 0)
    logger.warn('the API returned no campaigns: every stored campaign and creative is marked deleted');
  const result = await writeCatalogue(deps.pool, deps.schema, catalogue);
  logger.info(
    { ...result, fetchMs, totalMs: Math.round(performance.now() - started) },
    'entity sync written',
  );
  return result;
}
