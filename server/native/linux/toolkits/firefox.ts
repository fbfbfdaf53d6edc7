// Firefox (Gecko, over at-spi2-atk): ATK's conventions (atk.ts). Its quirk is its web content's: its
// accessibility insertion does not reach the page (Firefox takes it and shows nothing), and its document
// offers EditableText without `editable`. type_text gives web content of a browser Verity does not drive
// (Firefox is never driven) keystrokes where its focus is, whatever its states say (actions/type-text.ts
// undrivenWeb): a rule for every undriven browser's page, not a hook of this profile.
import { atk } from './atk.js';
import type { ToolkitProfile } from './profile.js';

export const firefox: ToolkitProfile = { ...atk, name: 'firefox' };
