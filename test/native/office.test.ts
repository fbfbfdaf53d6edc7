// LibreOffice Writer, Calc and Impress on the native route under Xvfb + openbox + AT-SPI (the cases:
// office-cases.ts, shared with the Wayland run in office-wayland.test.ts).
import { officeCases } from './office-cases.js';

officeCases('x11');
