// Row "gzip": whether the server compresses when asked. Report bodies are large and repetitive, so
// gzip saves most of the bytes; but a server that labels a body gzip and sends something else
// would fail every pull, so the body must really decompress.
import { gunzipSync } from 'node:zlib';
import type { Answer, Row } from '../types.js';
import { describeAnswer, isSuccess } from './answer.js';

/** The gzip row and whether to set ADOPS_HTTP_COMPRESSION=gzip (undefined when unknown). */
export function gzipVerdict(a: Answer | undefined): { row: Row; served: boolean | undefined } {
  if (a === undefined)
    return { row: { check: 'gzip', status: 'skip', detail: 'not probed' }, served: undefined };
  if (!isSuccess(a))
    return {
      row: { check: 'gzip', status: 'warn', detail: `cannot tell: answered ${describeAnswer(a)}` },
      served: undefined,
    };
  const encoding = (a.contentEncoding ?? '').trim().toLowerCase();
  if (encoding === '' || encoding === 'identity')
    return {
      row: { check: 'gzip', status: 'info', detail: 'not served: the server ignores Accept-Encoding: gzip' },
      served: false,
    };
  if (encoding !== 'gzip' && encoding !== 'x-gzip')
    return {
      row: {
        check: 'gzip',
        status: 'warn',
        detail: `answered Content-Encoding: ${encoding}, not gzip: use none`,
      },
      served: false,
    };
  try {
    const plain = gunzipSync(a.body);
    JSON.parse(plain.toString('utf8'));
  } catch (error) {
    return {
      row: {
        check: 'gzip',
        status: 'warn',
        detail: `labelled gzip, but the body does not decompress to JSON (${(error as Error).message}): use none`,
      },
      served: false,
    };
  }
  return {
    row: {
      check: 'gzip',
      status: 'ok',
      detail: `served (Content-Encoding: gzip, ${a.body.length} bytes compressed)`,
    },
    served: true,
  };
}
