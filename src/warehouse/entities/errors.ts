/** Which catalogue entity a value belongs to. */
export type EntityKind = 'campaign' | 'creative';

/**
 * A field of a campaign or creative has a type the warehouse cannot store: the API changed shape
 * or returned bad data. The sync writes nothing when this is thrown.
 */
export class EntityFieldError extends Error {
  override readonly name = 'EntityFieldError';
  /** Retrying reads the same data: a queue should fail the job at once (like ApiError.retryable). */
  readonly retryable = false;
  constructor(
    readonly entity: EntityKind,
    /** The entity's id, or undefined when the id itself is what is wrong. */
    readonly id: number | undefined,
    /** Dotted path of the field, e.g. `pricing.value`. */
    readonly field: string,
    /** What was expected, e.g. `an integer`. */
    readonly expected: string,
    /** The value found (shortened in the message). */
    readonly value: unknown,
  ) {
    super(
      `${entity} ${id ?? '(unknown id)'}: field ${field} is ${describe(value)}, expected ${expected}; ` +
        'the catalogue was left unchanged: check the API response for this entity, and if the API ' +
        'changed this field on purpose, adapt the mapping in src/warehouse/entities/',
    );
  }
}

function describe(value: unknown): string {
  if (value === undefined) return 'missing';
  const text = JSON.stringify(value) ?? String(value);
  const shown = text.length > 60 ? `${text.slice(0, 57)}...` : text;
  const type = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
  return `${shown} (${type})`;
}
