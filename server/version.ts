// The package's name and version, read from its own package.json (the one place they are written).
import { readFileSync } from 'node:fs';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  name: string;
  version: string;
};

export const PACKAGE_NAME = pkg.name;
export const VERSION = pkg.version;
