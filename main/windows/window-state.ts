/**
 * The console window's size, position and maximized state, kept across starts in
 * `<userData>/window-state.json`; a saved position that no longer lies on any display (a monitor
 * was unplugged) is dropped so the window never opens off-screen.
 */
import fs from 'node:fs';

export interface WindowBounds {
  x?: number;
  y?: number;
  width: number;
  height: number;
}

export interface WindowState extends WindowBounds {
  maximized: boolean;
}

export interface Rectangle {
  x: number;
  y: number;
  width: number;
  height: number;
}

export function loadWindowState(
  file: string,
  workAreas: readonly Rectangle[],
): WindowState | undefined {
  let value: unknown;
  try {
    value = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
  const state = value as Partial<WindowState> | null;
  if (!state || !isDimension(state.width) || !isDimension(state.height)) return undefined;
  const result: WindowState = {
    width: state.width,
    height: state.height,
    maximized: state.maximized === true,
  };
  if (Number.isInteger(state.x) && Number.isInteger(state.y)) {
    const placed = {
      x: state.x as number,
      y: state.y as number,
      width: state.width,
      height: state.height,
    };
    if (workAreas.some((area) => overlapsEnough(placed, area))) {
      result.x = placed.x;
      result.y = placed.y;
    }
  }
  return result;
}

export function saveWindowState(file: string, state: WindowState): void {
  fs.writeFileSync(file, `${JSON.stringify(state)}\n`, { mode: 0o600 });
}

function isDimension(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 200 && value <= 20_000;
}

/** At least 100 x 50 pixels of the window (its title bar, say) on that display. */
function overlapsEnough(window: Rectangle, area: Rectangle): boolean {
  const width = Math.min(window.x + window.width, area.x + area.width) - Math.max(window.x, area.x);
  const height =
    Math.min(window.y + window.height, area.y + area.height) - Math.max(window.y, area.y);
  return width >= 100 && height >= 50;
}
