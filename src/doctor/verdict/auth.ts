// Row "auth": which header form the server accepts for this key. An accepted key may still lack a
// scope (403): that is the scopes row's business, so 403 counts as accepted here.
import { AUTH_FORMS, type Answer, type AuthForm, type Observations, type Row } from '../types.js';
import { answerCode, describeAnswer, hasStatus, isSuccess } from './answer.js';

const LABEL: Record<AuthForm, string> = { bearer: 'Bearer', 'x-api-key': 'x-api-key' };

/** True when the server took the key in this form: a 2xx, or a 403 (known key, missing rights). */
export function accepted(a: Answer): boolean {
  return isSuccess(a) || hasStatus(a, 403);
}

/** The header form to use: the configured one when accepted, else the other accepted one. */
export function chooseAuth(
  auth: Readonly<Record<AuthForm, Answer>>,
  configured: AuthForm,
): AuthForm | undefined {
  if (accepted(auth[configured])) return configured;
  return AUTH_FORMS.find((f) => accepted(auth[f]));
}

/** The auth row, the chosen form, and the problem when no form was accepted. */
export function authVerdict(o: Observations): {
  row: Row;
  chosen: AuthForm | undefined;
  problem: string | undefined;
  facts: Record<AuthForm, string>;
} {
  const facts = { bearer: answerCode(o.auth.bearer), 'x-api-key': answerCode(o.auth['x-api-key']) };
  const detail = AUTH_FORMS.map((f) => `${LABEL[f]} ${describeAnswer(o.auth[f])}`).join('; ');
  const chosen = chooseAuth(o.auth, o.configured.auth);
  if (chosen !== undefined) {
    return {
      row: { check: 'auth', status: 'ok', detail: `${detail}; use ${chosen}` },
      chosen,
      problem: undefined,
      facts,
    };
  }
  const row: Row = { check: 'auth', status: 'fail', detail };
  if (AUTH_FORMS.every((f) => o.auth[f].kind === 'none')) return { row, chosen, problem: undefined, facts };
  if (AUTH_FORMS.every((f) => hasStatus(o.auth[f], 401))) {
    return {
      row,
      chosen,
      problem:
        'the API refused the key (401) with both header forms: check ADOPS_API_KEY (or the file in ' +
        'ADOPS_API_KEY_FILE): a wrong, revoked or expired key',
      facts,
    };
  }
  const path = `${new URL(o.baseUrl).pathname}/campaigns?limit=1`;
  const statuses = AUTH_FORMS.map((f) => `${f}: ${answerCode(o.auth[f])}`).join(', ');
  return {
    row,
    chosen,
    problem:
      `GET ${path} was not accepted with either header form (${statuses}): ` +
      'check ADOPS_BASE_URL (the account API URL, ending in /v2) and ADOPS_API_KEY',
    facts,
  };
}
