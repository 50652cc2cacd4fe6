// The statements of status/, each a pure builder run through the one Postgres handle.
import { ident, statement, type Statement } from '../platform/pg/handle.js';

/** Points the transaction's search_path at `schema` (then public): the BI example queries of sql/examples/
 * name the warehouse's views unqualified, as a dashboard connected to it would. */
export function searchPathFor(schema: string): Statement<{ set_config: string }> {
  return statement('SELECT set_config($1, $2, true)', ['search_path', `${ident(schema)}, public`]);
}
