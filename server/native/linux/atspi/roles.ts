// AT-SPI role numbers (AtspiRole) as the role names AT-SPI itself prints, and the state bits we read.
const ROLE_NAMES = (
  'invalid|accelerator label|alert|animation|arrow|calendar|canvas|check box|check menu item|color chooser|' +
  'column header|combo box|date editor|desktop icon|desktop frame|dial|dialog|directory pane|drawing area|file chooser|' +
  'filler|focus traversable|font chooser|frame|glass pane|html container|icon|image|internal frame|label|layered pane|' +
  'list|list item|menu|menu bar|menu item|option pane|page tab|page tab list|panel|password text|popup menu|' +
  'progress bar|push button|radio button|radio menu item|root pane|row header|scroll bar|scroll pane|separator|slider|' +
  'spin button|split pane|status bar|table|table cell|table column header|table row header|tearoff menu item|terminal|' +
  'text|toggle button|tool bar|tool tip|tree|tree table|unknown|viewport|window|extended|header|footer|paragraph|ruler|' +
  'application|autocomplete|editbar|embedded|entry|chart|caption|document frame|heading|page|section|' +
  'redundant object|form|link|input method window|table row|tree item|document spreadsheet|document presentation|' +
  'document text|document web|document email|comment|list box|grouping|image map|notification|info bar|level bar|' +
  'title bar|block quote|audio|video|definition|article|landmark|log|marquee|math|rating|timer|static|math fraction|' +
  'math root|subscript|superscript|description list|description term|description value|footnote|content deletion|' +
  'content insertion|mark|suggestion|push button menu'
).split('|');

export const ROLE = {
  checkBox: 7,
  checkMenuItem: 8,
  comboBox: 11,
  dialog: 16,
  frame: 23,
  label: 29,
  list: 31,
  listItem: 32,
  menu: 33,
  menuItem: 35,
  pageTab: 37,
  pageTabList: 38,
  panel: 39,
  passwordText: 40,
  pushButton: 43,
  radioButton: 44,
  radioMenuItem: 45,
  scrollBar: 48,
  slider: 51,
  spinButton: 52,
  terminal: 60,
  text: 61,
  toggleButton: 62,
  window: 69,
  paragraph: 73,
  application: 75,
  entry: 79,
  documentFrame: 82,
  documentSpreadsheet: 92,
  documentWeb: 95,
  listBox: 98,
  filler: 20,
  tableCell: 56,
  treeItem: 91,
  link: 88,
  redundant: 86,
  pushButtonMenu: 129,
} as const;

export function roleName(role: number): string {
  return ROLE_NAMES[role] ?? `role ${role}`;
}

/** AtspiStateType bit numbers (the two 32-bit words of GetState, as one 64-bit index). */
export const STATE = {
  active: 1,
  checked: 4,
  collapsed: 5,
  defunct: 6,
  editable: 7,
  enabled: 8,
  expanded: 10,
  focusable: 11,
  focused: 12,
  multiLine: 17,
  pressed: 20,
  selectable: 22,
  selected: 23,
  sensitive: 24,
  showing: 25,
  singleLine: 26,
  visible: 30,
  /** A container whose children come and go with what it shows (documents, sheets): read them by index. */
  managesDescendants: 31,
  indeterminate: 32,
  checkable: 41,
  readOnly: 43,
} as const;

export function has(states: [number, number], bit: number): boolean {
  return bit < 32 ? ((states[0] >>> bit) & 1) === 1 : ((states[1] >>> (bit - 32)) & 1) === 1;
}

/** Roles whose whole window is a top-level (X11 window ↔ AT-SPI frame). */
export const TOP_LEVEL_ROLES: ReadonlySet<number> = new Set([
  ROLE.frame,
  ROLE.window,
  ROLE.dialog,
  14 /* desktop frame */,
  2 /* alert */,
  28 /* internal frame */,
]);

/** Roles that toggle (their CHECKED state is their value). */
export const TOGGLE_ROLES: ReadonlySet<number> = new Set([
  ROLE.checkBox,
  ROLE.checkMenuItem,
  ROLE.radioButton,
  ROLE.radioMenuItem,
  ROLE.toggleButton,
]);

/** Structural roles left out of snapshots when they carry no name (their children are kept). */
export const STRUCTURAL_ROLES: ReadonlySet<number> = new Set([
  ROLE.filler,
  ROLE.panel,
  ROLE.redundant,
  49 /* scroll pane */,
  68 /* viewport */,
  85 /* section */,
  24 /* glass pane */,
  30 /* layered pane */,
  46 /* root pane */,
]);

/**
 * The panel's name ("Cell B3") when an element is LibreOffice Calc's cell editor: a paragraph in a panel
 * of a spreadsheet document, beside its sheet. Calc lists it, focused and editable, also when no edit is
 * open, and text inserted into it then never reaches the sheet (measured: read back from the paragraph,
 * the cell still empty after Enter). Null for anything else.
 */
export function calcCellEditorName(
  role: number,
  panel: { role: number; name: string } | null | undefined,
  doc: { role: number } | null | undefined,
): string | null {
  return role === ROLE.paragraph && panel?.role === ROLE.panel && doc?.role === ROLE.documentSpreadsheet
    ? panel.name
    : null;
}
