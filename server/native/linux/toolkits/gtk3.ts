// GTK 3's quirks (and gail 3's, its accessibility module's older name), over ATK's conventions (atk.ts):
// its GetText(0, -1) is its whole text, so a read needs no CharacterCount (the common case, and the fast
// path the bench holds to the floor); its InsertText takes the exact UTF-8 bytes and cannot pad.
import { atk } from './atk.js';
import type { ToolkitProfile } from './profile.js';

export const gtk3: ToolkitProfile = { ...atk, name: 'gtk3', wholeText: true };
