// Every tool, in the order tools/list advertises them. A new tool: its own file (or its family's) here in
// server/tools/, written against ToolContext (context.ts), and one entry in this list.
import { actionTools } from './actions.js';
import { appTools } from './apps.js';
import { runActions } from './batch.js';
import { clipboardTools } from './clipboard.js';
import type { ToolDef } from './context.js';
import { getWindowState, listApps, listWindows } from './inspection.js';
import { page } from './page.js';
import { screen } from './screen.js';
import { seeingTools } from './seeing.js';
import { sessionTools } from './sessions.js';
import { verifyState } from './verify.js';

export function allTools(): ToolDef[] {
  return [
    ...sessionTools,
    listApps,
    listWindows,
    getWindowState,
    ...actionTools,
    runActions,
    verifyState,
    page,
    screen,
    // Capability `clipboard` and `cursor` (off unless --caps turns them on).
    ...clipboardTools,
    // Capability `zoom` and `windows` (get_desktop_state).
    ...seeingTools,
    // Capability `apps`.
    ...appTools,
  ];
}
