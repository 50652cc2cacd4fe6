// A report body of any size, written as it is read: the nested items of the load bench's six
// dimensions, then totals that add up. Lets the memory bench load a 1 GB body without holding
// one (or a file of one) anywhere.
import type { Dimension } from '../../src/platform/config/dimensions.js';

export const SYNTHETIC_DIMENSIONS: readonly Dimension[] = [
  'day',
  'campaign_id',
  'creative_id',
  'zone_id',
  'country',
  'device',
];

const COUNTRIES = ['US', 'DE', 'FR', 'GB', 'JP', 'BR', 'IN', 'CA', 'ES', 'IT'];
const DEVICES = ['desktop', 'mobile', 'tablet', 'ctv', 'other'];
/** Rows under one campaign: 10 creatives x 10 zones x 10 countries x 5 devices. */
const ROWS_PER_CAMPAIGN = 10 * 10 * COUNTRIES.length * DEVICES.length;

/** About this many body bytes per row (measured: the counters dominate). */
export const BYTES_PER_ROW = 150;

/**
 * The body of a day with about `bytes` bytes (whole campaigns), in chunks of about `chunkBytes`.
 * `rows` tells how many rows it holds once it has been read.
 */
export function syntheticBody(
  day: string,
  bytes: number,
  chunkBytes = 256 * 1024,
): { chunks: AsyncGenerator<Buffer>; readonly campaigns: number; readonly rows: number } {
  const campaigns = Math.max(1, Math.round(bytes / BYTES_PER_ROW / ROWS_PER_CAMPAIGN));
  async function* chunks(): AsyncGenerator<Buffer> {
    const sums = [0, 0, 0, 0, 0];
    let text = `{"items":{"${day}":{`;
    let n = 0;
    for (let c = 0; c < campaigns; c++) {
      text += `${c === 0 ? '' : ','}"${100_000 + c}":{`;
      for (let cr = 0; cr < 10; cr++) {
        text += `${cr === 0 ? '' : ','}"${(100_000 + c) * 100 + cr}":{`;
        for (let z = 0; z < 10; z++) {
          text += `${z === 0 ? '' : ','}"${5_000 + z}":{`;
          for (let k = 0; k < COUNTRIES.length; k++) {
            text += `${k === 0 ? '' : ','}"${COUNTRIES[k]}":{`;
            for (let d = 0; d < DEVICES.length; d++) {
              n++;
              const v = (n * 2_654_435_761) % 100_000;
              const counters = [v * 5 + 9, v * 4 + 7, v * 3 + 5, v * 2 + 3, v + 1];
              counters.forEach((x, i) => (sums[i] = (sums[i] as number) + x));
              text +=
                `${d === 0 ? '' : ','}"${DEVICES[d]}":{"ad_requests":${counters[0]},"filled_impressions":${counters[1]},` +
                `"impressions":${counters[2]},"measurable_impressions":${counters[3]},"viewable_impressions":${counters[4]}}`;
            }
            text += '}';
          }
          text += '}';
          if (text.length >= chunkBytes) {
            yield Buffer.from(text, 'latin1');
            text = '';
          }
        }
        text += '}';
      }
      text += '}';
    }
    text +=
      `}},"totals":{"ad_requests":${sums[0]},"filled_impressions":${sums[1]},"impressions":${sums[2]},` +
      `"measurable_impressions":${sums[3]},"viewable_impressions":${sums[4]}}}`;
    yield Buffer.from(text, 'latin1');
  }
  return { chunks: chunks(), campaigns, rows: campaigns * ROWS_PER_CAMPAIGN };
}
