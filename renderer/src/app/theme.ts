/**
 * The console's Mantine theme: dense by default (a field engineer's laptop at 1280x800); the
 * comfortable density (prefs store) gives tables taller rows and larger text.
 */
import { createTheme, type MantineColorsTuple } from '@mantine/core';

import type { Density } from '../lib/prefs.js';

const signal: MantineColorsTuple = [
  '#e6f6ff',
  '#cde8ff',
  '#9bcfff',
  '#64b4fe',
  '#399dfd',
  '#1d8efd',
  '#0787fe',
  '#0074e3',
  '#0067cc',
  '#0058b4',
];

export const themeFor = (density: Density) =>
  createTheme({
    primaryColor: 'signal',
    // Darker shades in the light theme keep text on light backgrounds at 4.5:1 (axe color-contrast).
    primaryShade: { light: 9, dark: 8 },
    colors: { signal },
    defaultRadius: 'sm',
    fontFamily:
      'Inter, "DejaVu Sans", system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif',
    fontFamilyMonospace:
      '"DejaVu Sans Mono", ui-monospace, SFMono-Regular, Menlo, Consolas, monospace',
    fontSizes: { xs: '11px', sm: '12px', md: '13px', lg: '15px', xl: '18px' },
    spacing: { xs: '4px', sm: '8px', md: '12px', lg: '16px', xl: '24px' },
    headings: {
      sizes: { h1: { fontSize: '20px' }, h2: { fontSize: '16px' }, h3: { fontSize: '14px' } },
    },
    components: {
      Button: { defaultProps: { size: 'xs' } },
      ActionIcon: { defaultProps: { size: 'sm', variant: 'subtle' } },
      TextInput: { defaultProps: { size: 'xs' } },
      PasswordInput: { defaultProps: { size: 'xs' } },
      NumberInput: { defaultProps: { size: 'xs' } },
      Select: { defaultProps: { size: 'xs' } },
      MultiSelect: { defaultProps: { size: 'xs' } },
      TagsInput: { defaultProps: { size: 'xs' } },
      Textarea: { defaultProps: { size: 'xs' } },
      Checkbox: { defaultProps: { size: 'xs' } },
      Switch: { defaultProps: { size: 'xs' } },
      SegmentedControl: { defaultProps: { size: 'xs' } },
      Badge: { defaultProps: { size: 'sm', radius: 'sm', variant: 'light' } },
      Table: {
        defaultProps:
          density === 'compact'
            ? { verticalSpacing: 4, horizontalSpacing: 'sm', fz: 'sm' }
            : { verticalSpacing: 'sm', horizontalSpacing: 'md', fz: 'md' },
      },
      Tabs: { defaultProps: { variant: 'default' } },
      Modal: { defaultProps: { centered: true, closeButtonProps: { 'aria-label': 'Close' } } },
      // Toasts from notifications.show(): the close button is an icon, so it needs a name.
      Notification: { defaultProps: { closeButtonProps: { 'aria-label': 'Dismiss' } } },
    },
  });
