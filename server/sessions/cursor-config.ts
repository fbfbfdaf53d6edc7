// Agent cursor settings (seed 000): every range clamped as its table says, every default as it says.
// Precedence per field: set_agent_cursor_motion > start_session > saved default (config file) > built-in.
// Reduced motion always wins.

export const STYLES = ['signature_arc', 'spring_settle', 'magnetic', 'comet_swoop', 'adaptive', 'classic'] as const;
export const TIMINGS = ['native', 'fitts', 'fixed', 'relaxed', 'steady', 'calm', 'deliberate'] as const;

export interface CursorMotion {
  style: (typeof STYLES)[number];
  timing: (typeof TIMINGS)[number];
  arc_flow: number;
  arc_size: number;
  start_handle: number;
  end_handle: number;
  spring: number;
  glide_duration_ms: number;
  dwell_after_click_ms: number;
  idle_hide_ms: number;
  turn_radius: number;
  effects: { trail: boolean; click_ripple: boolean; follow_through: boolean };
}
export type MotionInput = Partial<Omit<CursorMotion, 'effects'>> & {
  effects?: Partial<Record<keyof CursorMotion['effects'], boolean | 'default'>>;
};

export interface CursorTheme {
  theme_id: string;
  reduced_motion: 'auto' | 'on' | 'off';
}

/** [min, max, default] for each numeric field. */
export const RANGES: Record<Exclude<keyof CursorMotion, 'style' | 'timing' | 'effects'>, [number, number, number]> = {
  arc_flow: [-1, 1, 0],
  arc_size: [0, 1, 0.25],
  start_handle: [0, 1, 0.3],
  end_handle: [0, 1, 0.3],
  spring: [0.3, 1, 0.72],
  glide_duration_ms: [0, 5000, 0],
  dwell_after_click_ms: [0, 5000, 80],
  idle_hide_ms: [0, 60000, 15000],
  turn_radius: [1, 1000, 80],
};

const STYLE_EFFECTS: Record<CursorMotion['style'], CursorMotion['effects']> = {
  signature_arc: { trail: false, click_ripple: true, follow_through: true },
  spring_settle: { trail: false, click_ripple: true, follow_through: false },
  magnetic: { trail: false, click_ripple: true, follow_through: false },
  comet_swoop: { trail: true, click_ripple: true, follow_through: true },
  adaptive: { trail: false, click_ripple: true, follow_through: false },
  classic: { trail: false, click_ripple: true, follow_through: false },
};

export function builtInMotion(): CursorMotion {
  const numbers = Object.fromEntries(Object.entries(RANGES).map(([k, [, , d]]) => [k, d])) as Omit<
    CursorMotion,
    'style' | 'timing' | 'effects'
  >;
  return { style: 'signature_arc', timing: 'steady', ...numbers, effects: { ...STYLE_EFFECTS.signature_arc } };
}

const clamp = (value: number, [min, max]: [number, number, number]) => Math.min(max, Math.max(min, value));

/** Applies one layer of (possibly out-of-range) input over a motion, clamping each field. */
export function overlay(base: CursorMotion, input: MotionInput | undefined): CursorMotion {
  if (!input) return base;
  const out: CursorMotion = { ...base, effects: { ...base.effects } };
  if (input.style) {
    out.style = input.style;
    out.effects = { ...STYLE_EFFECTS[input.style] }; // a new style brings its own effect defaults
  }
  if (input.timing) out.timing = input.timing;
  for (const key of Object.keys(RANGES) as Array<keyof typeof RANGES>) {
    const value = input[key];
    if (typeof value === 'number' && Number.isFinite(value)) out[key] = clamp(value, RANGES[key]);
  }
  for (const [name, value] of Object.entries(input.effects ?? {}) as Array<
    [keyof CursorMotion['effects'], boolean | 'default']
  >) {
    if (!(name in out.effects)) continue;
    out.effects[name] = value === 'default' ? STYLE_EFFECTS[out.style][name] : value;
  }
  return out;
}

/** The effective motion: layers in precedence order, then reduced motion over everything. */
export function effectiveMotion(
  layers: { saved?: MotionInput; start?: MotionInput; set?: MotionInput },
  theme: CursorTheme,
  systemReducedMotion: boolean,
): CursorMotion & { reduced_motion: boolean } {
  const merged = overlay(overlay(overlay(builtInMotion(), layers.saved), layers.start), layers.set);
  const reduced = theme.reduced_motion === 'on' || (theme.reduced_motion === 'auto' && systemReducedMotion);
  if (!reduced) return { ...merged, reduced_motion: false };
  return {
    ...merged,
    arc_size: 0,
    arc_flow: 0,
    effects: { trail: false, click_ripple: false, follow_through: false },
    reduced_motion: true,
  };
}

/** How long a glide of `distance` px takes under the motion's timing. */
export function glideDuration(motion: CursorMotion & { reduced_motion: boolean }, distance: number): number {
  if (motion.reduced_motion) return Math.min(150, 60 + distance * 0.1); // a short straight glide
  const nativeMs = 200 + Math.sqrt(distance) * 12;
  const fixed = motion.glide_duration_ms || 1430;
  switch (motion.timing) {
    case 'fixed':
      return fixed;
    case 'native':
      return motion.glide_duration_ms || nativeMs;
    case 'fitts':
      return 150 + 110 * Math.log2(1 + distance / 24);
    case 'deliberate':
      return Math.min(1300, Math.max(450, 250 + 160 * Math.log2(1 + distance / 24)));
    case 'relaxed':
      return motion.glide_duration_ms || Math.max(450, nativeMs);
    case 'calm':
      return motion.glide_duration_ms || Math.max(750, nativeMs);
    default:
      return motion.glide_duration_ms || Math.max(600, nativeMs); // 'steady'
  }
}
