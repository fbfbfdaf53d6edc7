// Programs that run whatever they are given: terminal emulators (a shell as the user), shells, and
// interpreters or runners that take a command or a script. The app policy refuses driving a terminal unless
// allowed_apps names it (policy.ts), and launch_app starts none of them unless --allow-launch names it itself
// (native/shared/launch.ts): naming a desktop file whose Exec line runs `sh -c ...` is not naming sh.

/** Terminal emulators by executable name (Debian's and the common others'); names ending in term(inal) too. */
const TERMINALS = new Set([
  'x-terminal-emulator',
  'gnome-terminal',
  'gnome-terminal-server',
  'kgx',
  'ptyxis',
  'konsole',
  'yakuake',
  'xfce4-terminal',
  'lxterminal',
  'mate-terminal',
  'qterminal',
  'terminator',
  'tilix',
  'guake',
  'tilda',
  'sakura',
  'terminology',
  'alacritty',
  'kitty',
  'foot',
  'footclient',
  'wezterm',
  'wezterm-gui',
  'st',
  'stterm',
  'rxvt',
  'urxvt',
  'urxvtd',
  'rxvt-unicode',
  'eterm',
  'cool-retro-term',
  'deepin-terminal',
  'blackbox',
  'contour',
  'tabby',
  'hyper',
  'warp-terminal',
  'ghostty',
]);

/** Shells, and programs that run the command they are given (env, xargs, sudo...): a shell by another name. */
const SHELLS = new Set([
  'sh',
  'bash',
  'dash',
  'zsh',
  'ksh',
  'ksh93',
  'mksh',
  'pdksh',
  'yash',
  'fish',
  'csh',
  'tcsh',
  'nu',
  'elvish',
  'xonsh',
  'busybox',
  'toybox',
  'rbash',
  'screen',
  'tmux',
  'env',
  'xargs',
  'nohup',
  'setsid',
  'nice',
  'ionice',
  'chrt',
  'taskset',
  'timeout',
  'stdbuf',
  'time',
  'chroot',
  'unshare',
  'nsenter',
  'setpriv',
  'runuser',
  'sudo',
  'su',
  'doas',
  'pkexec',
  'script',
  'strace',
  'ltrace',
  'gdb',
  'flock',
  'watch',
  'find',
  'parallel',
  'systemd-run',
  'dbus-launch',
  'dbus-run-session',
  'ssh',
]);

/** Interpreters by name, the version suffix aside (python3.11, perl5.36, lua5.4, tclsh8.6 ...). */
const INTERPRETERS =
  /^(python|pypy|perl|ruby|irb|node|nodejs|deno|bun|lua|luajit|php|tclsh|wish|expect|java|jshell|jrunscript|groovy|scala|kotlin|osascript|pwsh|powershell|rscript|r|julia|guile|gjs|cjs|seed|awk|gawk|mawk|nawk|sed|bc|dc|racket|sbcl|clisp|ecl|gst|erl|escript|elixir|iex|ocaml|swipl|gforth|octave|m4|make|gmake|cmake|sqlite3|psql|mysql|vim|nvim|vi|emacs|ed|ex)[\d.]*$/;

export type ProgramKind = 'terminal' | 'shell' | 'interpreter';

/**
 * What a program is by its name (an executable's file name, a process name or an AT-SPI name): a terminal
 * emulator, a shell (or a runner of any command), an interpreter, or null for anything else. `.bin`, `.real`
 * and `.wrapped` suffixes (wrapper scripts' targets) are read as the name they wrap.
 */
export function programKind(name: string): ProgramKind | null {
  const base = name.slice(name.lastIndexOf('/') + 1);
  const n = base.toLowerCase().replace(/\.(bin|real|wrapped)$/, '');
  if (!n) return null;
  if (TERMINALS.has(n) || /term(inal)?$/.test(n)) return 'terminal';
  if (SHELLS.has(n)) return 'shell';
  if (INTERPRETERS.test(n)) return 'interpreter';
  return null;
}
