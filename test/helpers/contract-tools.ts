// The contract's tools (../shared/design/CONTRACT.md, "Tools") offered by default, written out from the
// contract and not imported from the code: a test that took them from the code could not fail.
export const CONTRACT_TOOLS = [
  'start_session',
  'get_session',
  'list_sessions',
  'end_session',
  'set_agent_cursor_motion',
  'list_apps',
  'list_windows',
  'get_window_state',
  'click',
  'double_click',
  'right_click',
  'set_value',
  'type_text',
  'press_key',
  'hotkey',
  'scroll',
  'drag',
  'run_actions',
  'page',
] as const;
