// The bench's sections, run in order. Add new ones here (e.g. native AT-SPI).
import type { Section } from '../types.js';
import { auditSection } from './audit.js';
import { bytesSection } from './bytes.js';
import { concurrencySection } from './concurrency.js';
import { fleetSection } from './fleet.js';
import { formSection } from './form.js';
import { fuzzSection } from './fuzz.js';
import { latencySection } from './latency.js';
import { nativeSection } from './native.js';
import { officeSection } from './office.js';
import { taskSection } from './task.js';

export const sections: Section[] = [
  latencySection,
  bytesSection,
  formSection,
  taskSection,
  nativeSection,
  officeSection,
  concurrencySection,
  auditSection,
  fleetSection,
  fuzzSection,
];
