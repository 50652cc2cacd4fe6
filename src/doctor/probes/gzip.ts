// Probe "gzip": one request that asks for a gzip-compressed answer.
import type { Prober, ProbeRequest } from '../http.js';
import type { Answer } from '../types.js';

/** The request sent again with Accept-Encoding: gzip; the body is kept as received. */
export function probeGzip(prober: Prober, request: ProbeRequest): Promise<Answer> {
  return prober.send({ ...request, headers: { ...request.headers, 'accept-encoding': 'gzip' } });
}
