// Probe "auth": GET /campaigns?limit=1 with the key in each header form. The first answer also
// tells whether the server is reachable at all.
import type { Prober } from '../http.js';
import { authHeaders } from '../requests.js';
import { AUTH_FORMS, type Answer, type AuthForm } from '../types.js';

/** The first catalogue page, asked once with each header form. */
export async function probeAuth(prober: Prober, key: string): Promise<Record<AuthForm, Answer>> {
  const out = {} as Record<AuthForm, Answer>;
  for (const form of AUTH_FORMS)
    out[form] = await prober.send({ path: '/campaigns?limit=1', headers: authHeaders(form, key) });
  return out;
}
