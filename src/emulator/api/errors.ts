/**
 * An error answer of the emulator. Its JSON body (the spec leaves the fields open) is
 * `{"status": 400, "error": "bad_request", "message": "...", "field": "tier"}`; `field` only when one
 * request field is at fault, as a dotted path (`targeting.geo.locations.countries[1]`).
 */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    readonly status: number,
    readonly error: string,
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }

  /** The reply: this status, the JSON body, and Allow for a 405. */
  toReply(): { status: number; body: string; headers?: Record<string, string> } {
    const allow = (this as { allow?: string }).allow;
    return { status: this.status, body: this.body(), ...(allow === undefined ? {} : { headers: { allow } }) };
  }

  /** The JSON body sent to the client. */
  body(): string {
    return JSON.stringify({
      status: this.status,
      error: this.error,
      message: this.message,
      ...(this.field === undefined ? {} : { field: this.field }),
    });
  }
}

/** 400 naming the field at fault. */
export function badRequest(message: string, field?: string): ApiError {
  return new ApiError(400, 'bad_request', message, field);
}

/** 404 for an unknown id or path. */
export function notFound(message: string): ApiError {
  return new ApiError(404, 'not_found', message);
}
