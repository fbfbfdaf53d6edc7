// The machine's environment (DISPLAY, WAYLAND_DISPLAY, XDG_RUNTIME_DIR, XAUTHORITY, PATH, the D-Bus addresses)
// for the native route's transports, which look at it at each connection, deep below any constructor. Only
// the CLI reads the process's environment (scripts/check-deps.mjs holds it): it hands the environment down in
// VerityOptions.env, the native host puts it here when it is built (`verity doctor` too), and a test gives
// its own as a value. Read at each use, not copied: a test may start its display after the host was built.
let machine: Readonly<NodeJS.ProcessEnv> = {};

/** The environment the native route was handed (empty until a host or doctor is given one). */
export const machineEnv = (): Readonly<NodeJS.ProcessEnv> => machine;

/** Hands the native route its environment (the native host at construction, doctor, a test). */
export function setMachineEnv(env: Readonly<NodeJS.ProcessEnv>): void {
  machine = env;
}
