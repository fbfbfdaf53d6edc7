// A real PostgreSQL started by the test itself, by its PID (one helper for the tests and the bench: bench/postgres.ts).
export { type Postgres, postgresBin, postgresMissing, startPostgres } from '../../bench/postgres.js';
