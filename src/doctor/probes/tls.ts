// The TLS handshake of an https base URL on its own, for the certificate's names and expiry (the
// HTTP pool verifies it too, but does not show it).
import { connect, type PeerCertificate } from 'node:tls';
import type { TlsObservation } from '../types.js';

/**
 * Connects, verifies the certificate against this machine's trust store, and hangs up. Undefined
 * when not even TCP connected: that is reachability's finding, not the certificate's.
 */
export function probeTls(baseUrl: string, timeoutMs: number): Promise<TlsObservation | undefined> {
  const url = new URL(baseUrl);
  const port = url.port === '' ? 443 : Number(url.port);
  return new Promise((resolve) => {
    const socket = connect({ host: url.hostname, port, servername: url.hostname, timeout: timeoutMs });
    let connected = false;
    socket.once('connect', () => (connected = true));
    const done = (o: TlsObservation | undefined) => {
      socket.destroy();
      resolve(o);
    };
    socket.once('secureConnect', () => {
      const cert: PeerCertificate = socket.getPeerCertificate();
      done({
        ok: true,
        subject: nameOf(cert.subject) ?? url.hostname,
        issuer: nameOf(cert.issuer) ?? 'unknown issuer',
        validTo: cert.valid_to,
      });
    });
    const fail = (code: string, detail: string) => done(connected ? { ok: false, code, detail } : undefined);
    socket.once('timeout', () => fail('ETIMEDOUT', `no handshake within ${timeoutMs} ms`));
    socket.once('error', (error: NodeJS.ErrnoException) => fail(error.code ?? 'error', error.message));
  });
}

function nameOf(name: PeerCertificate['subject'] | undefined): string | undefined {
  if (name === undefined) return undefined;
  const pick = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
  return pick(name.CN) ?? pick(name.O);
}
