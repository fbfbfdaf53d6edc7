// LibreOffice Writer, Calc and Impress on the native route under headless sway with no DISPLAY, where
// LibreOffice (gtk3) is a Wayland client: the same cases as on X11 (office-cases.ts).
import { officeCases } from './office-cases.js';

officeCases('wayland');
