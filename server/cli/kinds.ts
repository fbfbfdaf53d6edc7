// The value of each kind of option, as a zod schema: the source of the Config's types (options.ts takes
// them as types only, so that --help and --version load no package). A unit test (test/unit/cli.test.ts)
// holds every row's default and every value the parser makes to these schemas.
import { z } from 'zod';

export const KIND_SCHEMAS = {
  string: z.string().min(1),
  boolean: z.boolean(),
  port: z.number().int().min(0).max(65535),
  positive: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
  list: z.array(z.string()),
};

export type Kind = keyof typeof KIND_SCHEMAS;
/** What each kind's value is, once checked. */
export type KindValues = { [K in Kind]: z.infer<(typeof KIND_SCHEMAS)[K]> };

/**
 * The schema of a Config for these rows: each option by its kind, optional, no other key. A row with its own
 * `parse` holds what that made (it checks it), so only its presence is typed here.
 */
export function configSchema(rows: ReadonlyArray<{ name: string; kind: Kind; parse?: unknown; envParse?: unknown }>) {
  return z
    .object(Object.fromEntries(rows.map((o) => [o.name, (o.parse ? z.unknown() : KIND_SCHEMAS[o.kind]).optional()])))
    .strict();
}
