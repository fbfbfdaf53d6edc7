// One gateway method's entry in the method table: the scope it needs and its handler, typed by the
// method's params and result in protocol.ts (METHOD_SCHEMAS). Its own file so that methods.ts and
// brake-methods.ts both use it without importing each other.
import type { GatewayConnection } from './connection.js';
import type { Method, ParsedParams, Result, Scope } from './protocol.js';

/** `Context` is what the handler sees of the gateway (methods.ts MethodContext, or a part of it). */
export interface MethodHandler<M extends Method, Context> {
  scope: Scope;
  handler(params: ParsedParams<M>, conn: GatewayConnection, gw: Context): Promise<Result<M>> | Result<M>;
}
